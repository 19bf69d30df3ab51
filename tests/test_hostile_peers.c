/* Hostile LLM peers (issue 17), end to end through the agora binary: for every provider, streamed and
 * not, the loopback server misbehaves (garbage event streams, a 10 MB line, an endless reply, a
 * 1-byte-per-second drip, a reset, broken JSON, an HTML page with status 200, a redirect loop,
 * Retry-After: 100000, a megabyte of headers, a gzip bomb, a stall). Each run must end within
 * timeout_ms * (max_retries + 1) plus backoff, report a clear llm-error for the hostile agent, keep
 * its peak RSS near that of a healthy run, and let another agent on the same server answer after it.
 * The runs go concurrently, a few at a time, so the whole matrix takes seconds. */
#include "support/fixture.h"
#include "support/proc.h"
#include "support/suite.h"
#include "support/wait.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

static char *tmp;
static llm_server *srv;

#define HP_TIMEOUT_MS 2500 /* the hostile agent's timeout_ms */
#define HP_RETRIES 1       /* and max_retries */
#define HP_BACKOFF_MS 5    /* AGORA_LLM_BACKOFF_MS */
#define HP_RSS_ALLOWANCE_KB (24 * 1024) /* over the largest healthy run's peak */
#if defined(__SANITIZE_ADDRESS__)
#define HP_SANITIZED 1 /* every process several times slower: fewer at once, more slack */
#else
#define HP_SANITIZED 0
#endif
/* The hostile agent's turn is timed inside the run (its question's ts to the next one's, which the
 * script sends once the world is quiet), with slack for a loaded 2-core machine; the whole process,
 * start-up and exit included, gets HP_RUN_MS. */
#define HP_SLACK_MS (HP_SANITIZED ? 4000 : 2500)
#define HP_RUN_MS (HP_SANITIZED ? 30000 : 15000)
#define HP_PARALLEL (HP_SANITIZED ? 3 : 6)
#define HP_WATCHDOG_MS 40000 /* a run still going then is killed (and fails its bound) */

typedef struct fault {
  const char *name;
  const char *directives; /* "" : a healthy run, the baseline */
  const char *expect;     /* accepted error_type values "a|b", or "http:CODE" */
} fault;

static const fault faults[] = {
    {"healthy", "", NULL},
    {"garbage event stream", "body=sse_garbage", "malformed"},
    {"10 MB line", "oversize=10485760", "too_big|timeout"},
    {"endless reply", "endless=1", "too_big|timeout"},
    {"1 byte per second", "drip=1000", "timeout"},
    {"reset mid-stream", "reset=1", "connection|incomplete"},
    {"invalid JSON", "malformed=1", "malformed"},
    {"HTML with 200", "body=html", "malformed"},
    {"redirect loop", "redirect=1", "http:302"},
    {"Retry-After: 100000", "status=429 retry_after=100000", "http:429"},
    {"1 MB of headers", "headers=1048576", "connection"},
    {"gzip bomb", "gzip=128", "malformed|too_big"},
    {"stall", "stall=1", "timeout"},
};
#define N_FAULTS (sizeof faults / sizeof *faults)

static const char *const providers[] = {"openai", "anthropic", "gemini", "ollama"};

typedef struct run {
  const fault *f;
  int provider, stream;
  pid_t pid;
  int64_t start_ms, ms;
  int status;
  long rss_kb;
  long turn_ms; /* the hostile agent's turn, timed inside the run */
  int late;     /* it ended in a timeout instead of the fault's own error */
  char out[4096];
} run;

/* The world of one run: "bad" (when the fault is one) and "good" on the same provider and mode, the
 * human asks bad first and good once bad is done. They are two endpoints (bad names a key variable of
 * its own): a 429 pauses its whole endpoint (issue 25, tested in test_rate_limits), and the point here is
 * that a hostile server's faults stay with the agents that use it. */
static void write_world(const run *r, const char *path) {
  const char *p = providers[r->provider];
  char base[256], bad[1024] = "";
  snprintf(base, sizeof base, "%s", llm_server_url(srv, strcmp(p, "openai") ? "" : "/v1"));
  if (r->f->directives[0])
    snprintf(bad, sizeof bad,
             "{\"name\": \"bad\", \"provider\": \"%s\", \"base_url\": \"%s\", \"api_key_env\": \"HP_BAD_KEY\", \"stream\": %s,"
             " \"timeout_ms\": %d, \"max_retries\": %d, \"system_prompt\": \"[[mock %s]]\"},",
             p, base, r->stream ? "true" : "false", HP_TIMEOUT_MS, HP_RETRIES, r->f->directives);
  char json[4096];
  snprintf(json, sizeof json,
           "{\"name\": \"w\", \"agents\": [%s {\"name\": \"good\", \"provider\": \"%s\", \"base_url\": \"%s\","
           " \"api_key_env\": \"\", \"stream\": %s, \"timeout_ms\": 20000}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"@bad go\"}, {\"from\": \"human\", \"text\": \"@good still there?\"}]}",
           bad, p, base, r->stream ? "true" : "false");
  unit_write_file(path, json);
}

static void start_run(run *r, int i) {
  char world[4096];
  snprintf(world, sizeof world, "%s/w%d.json", tmp, i);
  snprintf(r->out, sizeof r->out, "%s/o%d.ndjson", tmp, i);
  write_world(r, world);
  const char *args[] = {"run", world, "--json", "--no-save", NULL};
  static const char *const env[] = {"AGORA_LLM_BACKOFF_MS=5", "HP_BAD_KEY=hostile-peer-test-key", NULL};
  int nul = open("/dev/null", O_RDONLY);
  r->start_ms = now_ms();
  r->pid = proc_spawn(args, nul, r->out, r->out, env);
  close(nul);
}

/* The peak RSS of a running agora (VmHWM of its own memory since exec), in KB; 0 before its exec
 * (the forked copy of this process) and once it has exited. Not wait4's ru_maxrss: that counts the
 * forked copy too. */
static long vm_hwm_kb(pid_t pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  long kb = 0;
  int agora = 0;
  while (f && fgets(line, sizeof line, f)) {
    if (!strncmp(line, "Name:", 5)) agora = strstr(line, "agora") != NULL;
    if (!strncmp(line, "VmHWM:", 6) && agora) kb = strtol(line + 6, NULL, 10);
  }
  if (f) fclose(f);
  return kb;
}

/* Reaps one finished run (blocking up to the watchdog): a run over its bound plus a margin is killed
 * by its pid and reported. Returns 0 when one was reaped. */
static int reap(run *runs, size_t n) {
  for (;;) {
    /* The high-water mark only grows, so the last reading before exit holds the peak of the run. */
    for (size_t i = 0; i < n; i++) {
      long kb = runs[i].pid > 0 ? vm_hwm_kb(runs[i].pid) : 0;
      if (kb > runs[i].rss_kb) runs[i].rss_kb = kb;
    }
    int st = 0;
    pid_t pid = waitpid(-1, &st, WNOHANG);
    if (pid < 0) return -1;
    for (size_t i = 0; pid > 0 && i < n; i++) {
      if (runs[i].pid != pid) continue;
      runs[i].ms = now_ms() - runs[i].start_ms;
      runs[i].status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      runs[i].pid = 0;
      return 0;
    }
    for (size_t i = 0; i < n; i++)
      if (runs[i].pid > 0 && now_ms() - runs[i].start_ms > HP_WATCHDOG_MS) kill(runs[i].pid, SIGKILL);
    struct timespec ts = {0, 2 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
}

/* Whether the llm-error event e matches expect ("a|b" error types, or "http:CODE"): 1, or 2 for a
 * timeout instead (on a loaded machine the server thread can be late with any fault: still a clear
 * error in time, but counted), else 0. */
static int error_matches(const cJSON *e, const char *expect) {
  const cJSON *msg = cJSON_GetObjectItem(e, "error");
  if (!cJSON_IsString(msg) || !msg->valuestring[0]) return 0;
  if (!strncmp(expect, "http:", 5))
    return cJSON_GetObjectItem(e, "http_status") && cJSON_GetObjectItem(e, "http_status")->valueint == atoi(expect + 5);
  const cJSON *t = cJSON_GetObjectItem(e, "error_type");
  if (!cJSON_IsString(t)) return 0;
  size_t n = strlen(t->valuestring);
  for (const char *p = expect; p; p = strchr(p, '|') ? strchr(p, '|') + 1 : NULL)
    if (!strncmp(p, t->valuestring, n) && (p[n] == '|' || !p[n])) return 1;
  return strcmp(t->valuestring, "timeout") ? 0 : 2;
}

/* The run's llm-error events for bad (count) and how they matched (the worst, as error_matches). */
static int check_errors(const char *out, const char *expect, int *matched) {
  int n = 0;
  *matched = 1;
  for (const char *line = out; line && *line;) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    cJSON *j = cJSON_ParseWithLength(line, len);
    const cJSON *ev = cJSON_GetObjectItem(j, "event"), *agent = cJSON_GetObjectItem(j, "agent");
    if (cJSON_IsString(ev) && !strcmp(ev->valuestring, "llm-error")) {
      n++;
      int m = expect && cJSON_IsString(agent) && !strcmp(agent->valuestring, "bad") ? error_matches(j, expect) : 0;
      if (!m || (*matched && m > *matched)) *matched = m;
    }
    cJSON_Delete(j);
    line = nl ? nl + 1 : NULL;
  }
  return n;
}

/* Milliseconds of the day in the "ts" of the message with seq in the NDJSON out; -1 when none. */
static long message_ms(const char *out, int seq) {
  char key[32];
  snprintf(key, sizeof key, "\"seq\":%d,", seq);
  const char *m = out ? strstr(out, key) : NULL;
  const char *ts = m ? strstr(m, "\"ts\":\"") : NULL;
  int h, min, sec, ms;
  if (!ts || sscanf(ts + 6, "%*d-%*d-%*dT%d:%d:%d.%dZ", &h, &min, &sec, &ms) != 4) return -1;
  return ((h * 60L + min) * 60 + sec) * 1000 + ms;
}

/* One run's verdict; prints what went wrong. */
static int judge(run *r, long rss_cap_kb) {
  char *out = unit_read_file(r->out);
  char *msgs = proc_messages(out ? out : "");
  int healthy = !r->f->expect, matched = 0;
  int errors = check_errors(out ? out : "", r->f->expect, &matched);
  r->late = matched == 2 && !strstr(r->f->expect, "timeout");
  long bound = (long)HP_TIMEOUT_MS * (HP_RETRIES + 1) + HP_BACKOFF_MS * 2 + HP_SLACK_MS;
  long turn = message_ms(out, 2) - message_ms(out, 1);
  if (turn < -1000) turn += 86400000; /* across midnight */
  r->turn_ms = turn;
  int ok = r->status == (healthy ? 0 : 1) && errors == (healthy ? 0 : 1) && matched &&
           strstr(msgs, "human|human|@bad go\nhuman|human|@good still there?\ngood|agent|mock reply\n") &&
           turn >= 0 && turn <= bound && r->ms <= HP_RUN_MS && (healthy || r->rss_kb <= rss_cap_kb);
  /* Retry-After past the deadline: give up at once instead of sleeping into the timeout. */
  char why[128]; /* and says why it did not wait */
  snprintf(why, sizeof why, "(the server asked to retry after at least 30 s, past the %d ms timeout)", HP_TIMEOUT_MS);
  if (r->f->expect && !strcmp(r->f->expect, "http:429") && (turn >= HP_TIMEOUT_MS || !strstr(out ? out : "", why)))
    ok = 0;
  if (!ok)
    fprintf(stderr, "  %s, %s %s: exit %d, turn %ld ms (bound %ld), run %lld ms, %ld KB (cap %ld), %d llm-error(s)%s\n%s\n",
            r->f->name, providers[r->provider], r->stream ? "streamed" : "whole", r->status, turn, bound,
            (long long)r->ms, r->rss_kb, rss_cap_kb, errors, matched ? "" : " not as expected", out ? out : "(no output)");
  free(msgs);
  free(out);
  return ok;
}

static void every_provider_and_mode_survives(void) {
  size_t n = N_FAULTS * 8;
  run *runs = calloc(n, sizeof *runs);
  for (size_t i = 0; i < n; i++) {
    runs[i].f = &faults[i / 8];
    runs[i].provider = (int)(i % 8) / 2;
    runs[i].stream = (int)(i % 2);
  }
  size_t next = 0, running = 0, done = 0;
  while (done < n) {
    while (running < HP_PARALLEL && next < n) {
      start_run(&runs[next], (int)next);
      next++;
      running++;
    }
    if (reap(runs, n)) break;
    running--;
    done++;
  }
  CHECK_INT(done, n);
  long base_kb = 0, worst_kb = 0;
  for (size_t i = 0; i < 8; i++)
    if (runs[i].rss_kb > base_kb) base_kb = runs[i].rss_kb;
  int failed = 0;
  for (size_t i = 0; i < n; i++) {
    failed += !judge(&runs[i], base_kb + HP_RSS_ALLOWANCE_KB);
    if (runs[i].rss_kb > worst_kb) worst_kb = runs[i].rss_kb;
  }
  /* One line per fault: its slowest turn and largest peak over the 8 provider x mode runs. */
  for (size_t f = 0; f < N_FAULTS; f++) {
    long turn = 0, kb = 0;
    for (size_t k = f * 8; k < f * 8 + 8; k++) {
      if (runs[k].turn_ms > turn) turn = runs[k].turn_ms;
      if (runs[k].rss_kb > kb) kb = runs[k].rss_kb;
    }
    fprintf(stderr, "  %-22s turn <= %5ld ms, peak RSS <= %6ld KB\n", faults[f].name, turn, kb);
  }
  int late = 0;
  for (size_t i = 0; i < n; i++) late += runs[i].late;
  fprintf(stderr, "  %zu runs; peak RSS healthy %ld KB, worst %ld KB; %d timed out instead of their own error\n", n,
          base_kb, worst_kb, late);
  CHECK(late * 4 <= (int)n); /* a client that only ever times out would fail */
  CHECK_INT(failed, 0);
  free(runs);
}

SUITE_RUN((UNIT(every_provider_and_mode_survives)), .tmp = &tmp, .srv = &srv, .no_sigpipe = 1)
