/* Worlds of up to a million agents (issue 22): for each size a world file is generated (script
 * provider) and loaded in a fresh process, which reports the load time, its peak RSS, the heap an idle
 * agent holds, the time for one human message to reach every agent's decision, the cost per reply of
 * a public message all agents answer (wall and CPU time, page faults), and the time per delivery of
 * agent messages routed to the one agent each mentions. No storage (as `--no-save`). Usage:
 * bench_million [max_agents] [runs] [min_agents] (sizes 1,000, 10,000, … from min to max). */
#include "common/heap.h"
#include "world/world.h"
#include "world/world_file.h"

#include "support/bench_stat.h"

#include <event2/event.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUTED_MAX 10000 /* mention-routed messages per round (fewer in smaller worlds) */
#define ROUTED_ROUNDS 6  /* the first right after the public message, then five more */

/* What one run in a child process measures, sent back over a pipe. */
typedef struct million_run {
  double load_s;       /* reading the file, parsing, building the world */
  double idle_heap_b;  /* heap in use per agent once loaded, bytes */
  double peak_rss_kib; /* the process's peak after everything */
  double load_rss_kib; /* the peak right after loading */
  double reach_ms;     /* a human message from publish until every agent decided */
  double reply_us;     /* publish until quiet, all agents answering, per reply */
  double reply_cpu_us; /* the same in this process's CPU time: what the neighbours' load moves least */
  double reply_faults; /* page faults in that message, per reply (the heap growing inside it) */
  double routed_first_us; /* per agent message delivered to the agent it mentions, first round */
  double routed_us;       /* the same, median of the later rounds */
  int ok;
} million_run;

static void die(const char *what, const char *detail) {
  fprintf(stderr, "bench_million: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  _exit(1);
}

/* A world file of n scripted agents in dir; returns its path (caller frees). */
static char *write_world(const char *dir, size_t n) {
  char *path = malloc(strlen(dir) + 32);
  if (!path) die("out of memory", NULL);
  sprintf(path, "%s/world-%zu.json", dir, n);
  FILE *f = fopen(path, "w");
  if (!f) die("cannot write", path);
  fprintf(f, "{\"name\": \"million\", \"turn_limit\": 100, \"agents\": [\n");
  for (size_t i = 0; i < n; i++)
    fprintf(f, "%s{\"name\": \"agent-%07zu\", \"replies\": [\"noted, thanks\"]}", i ? ",\n" : "", i);
  fprintf(f, "]}\n");
  if (fclose(f)) die("cannot write", path);
  return path;
}

typedef struct stamp {
  uint64_t seq; /* the message to time */
  double at;    /* when it left the agents' phase */
} stamp;

/* Store phase: runs right after the agents' phase has handed the message to every agent. */
static void on_stored(void *ud, bus_topic topic, void *payload) {
  stamp *s = ud;
  if (topic == BUS_MESSAGE && ((ag_msg *)payload)->seq == s->seq) s->at = bench_now_s();
}

static double minor_faults(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_minflt;
}

static void measure_public(world *w, stamp *st, million_run *r) {
  size_t n = world_agent_count(w);
  ag_msg *m = NULL;
  double f0 = minor_faults(), c0 = bench_thread_cpu_s(), t0 = bench_now_s();
  if (world_publish(w, "human", "Roll call, everyone: say something.", &m)) die("publish failed", NULL);
  st->seq = m->seq;
  if (world_run_until_quiet(w)) die("run failed", NULL);
  double t1 = bench_now_s();
  r->reach_ms = (st->at - t0) * 1e3;
  r->reply_us = (t1 - t0) * 1e6 / (double)n;
  r->reply_cpu_us = (bench_thread_cpu_s() - c0) * 1e6 / (double)n;
  r->reply_faults = (minor_faults() - f0) / (double)n;
}

/* Messages from an agent, each mentioning another agent: only that one is asked. Returns µs per
 * message from the first publish until the last has been handed to its agent. Round k mentions other
 * agents than round k - 1 where the world is large enough. */
static double measure_routed(world *w, stamp *st, int round) {
  size_t n = world_agent_count(w), k = n < ROUTED_MAX ? n : ROUTED_MAX;
  char text[64];
  ag_msg *m = NULL;
  st->at = 0;
  double t0 = bench_now_s();
  for (size_t i = 0; i < k; i++) {
    size_t to = ((i + (size_t)round * k) * 7919 + 1) % n; /* spread over the world */
    snprintf(text, sizeof text, "@agent-%07zu noted, your turn", to);
    if (world_publish(w, agent_id(world_agent_at(w, 0)), text, &m)) die("publish failed", NULL);
  }
  st->seq = m->seq;
  /* The bus delivers every queued message before any mentioned agent's scripted reply comes back. */
  while (st->at < t0) event_base_loop(world_base(w), EVLOOP_ONCE);
  double us = (st->at - t0) * 1e6 / (double)k;
  if (world_run_until_quiet(w)) die("run failed", NULL);
  return us;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[n / 2];
}

static double peak_kib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss;
}

static million_run run_child(const char *path) {
  million_run r = {.ok = 0};
  size_t heap0 = mallinfo2().uordblks;
  double t0 = bench_now_s();
  world_spec spec;
  ag_errmsg em = {""};
  struct event_base *base = event_base_new();
  world *w = NULL;
  if (world_spec_load(path, &spec, &em) || world_new(base, &spec, &w, &em)) die("load failed", em.text);
  world_spec_free(&spec);
  ag_heap_reserve(world_agent_count(w) * WORLD_WAVE_BYTES); /* as the runtime does once the world is built */
  r.load_s = bench_now_s() - t0;
  r.load_rss_kib = peak_kib();
  r.idle_heap_b = (double)(mallinfo2().uordblks - heap0) / (double)world_agent_count(w);
  stamp st = {0};
  if (bus_subscribe(world_bus(w), BUS_MESSAGE, BUS_PHASE_STORE, on_stored, &st, NULL)) die("subscribe failed", NULL);
  measure_public(w, &st, &r);
  double rounds[ROUTED_ROUNDS];
  for (int k = 0; k < ROUTED_ROUNDS; k++) rounds[k] = measure_routed(w, &st, k);
  r.routed_first_us = rounds[0];
  r.routed_us = median(rounds + 1, ROUTED_ROUNDS - 1);
  r.peak_rss_kib = peak_kib();
  r.ok = 1;
  return r; /* the world is left to the process's exit: freeing a million agents is not measured */
}

/* One run at one size in a fresh process, so that each peak RSS is its own. */
static million_run run_once(const char *path) {
  million_run r = {.ok = 0};
  int fd[2];
  if (pipe(fd)) die("pipe failed", NULL);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    r = run_child(path);
    if (write(fd[1], &r, sizeof r) != (ssize_t)sizeof r) _exit(1);
    _exit(0);
  }
  close(fd[1]);
  if (read(fd[0], &r, sizeof r) != (ssize_t)sizeof r) r.ok = 0;
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status)) r.ok = 0;
  return r;
}

static void print_size(size_t n, million_run *runs, int k) {
  double v[k];
  char name[96];
#define ROW(field, label, unit, scale)                                                                          \
  do {                                                                                                          \
    for (int i = 0; i < k; i++) v[i] = runs[i].field * (scale);                                               \
    snprintf(name, sizeof name, "%zu agents: " label, n);                                                     \
    bench_row(name, unit, v, k);                                                                                \
  } while (0)
  ROW(load_s, "load (read, parse, build)", "s", 1.0);
  ROW(load_rss_kib, "peak RSS after load", "MiB", 1.0 / 1024);
  ROW(idle_heap_b, "heap per idle agent", "KiB", 1.0 / 1024);
  ROW(reach_ms, "human message reaches every agent", "ms", 1.0);
  ROW(reply_us, "public message, all answer", "µs/reply", 1.0);
  ROW(reply_cpu_us, "public message, all answer (CPU time)", "µs/reply", 1.0);
  ROW(reply_faults, "public message, page faults", "per reply", 1.0);
  ROW(routed_first_us, "mention-routed delivery, first round", "µs/msg", 1.0);
  ROW(routed_us, "mention-routed delivery, later rounds", "µs/msg", 1.0);
  ROW(peak_rss_kib, "peak RSS, whole run", "MiB", 1.0 / 1024);
#undef ROW
}

int main(int argc, char **argv) {
  size_t max = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
  int runs = argc > 2 ? atoi(argv[2]) : 3;
  ag_heap_tune(); /* as agora's main does */
  size_t min = argc > 3 ? strtoul(argv[3], NULL, 10) : 1000;
  if (runs < 1) runs = 1;
  char dir[] = "/tmp/agora-million-XXXXXX";
  if (!mkdtemp(dir)) die("mkdtemp failed", NULL);
  printf("| %-52s | %10s | %10s | %10s | %-9s |\n", "scenario", "min", "median", "max", "unit");
  printf("|------------------------------------------------------|------------|------------|------------|-----------|\n");
  int failed = 0;
  for (size_t n = 1000; n <= max; n *= 10) {
    if (n < min) continue;
    char *path = write_world(dir, n);
    million_run r[runs];
    for (int i = 0; i < runs; i++) {
      r[i] = run_once(path);
      if (!r[i].ok) failed = 1;
    }
    print_size(n, r, runs);
    fflush(stdout);
    unlink(path);
    free(path);
    if (failed) break;
  }
  rmdir(dir);
  return failed;
}
