/* agora serve under load it did not choose (issue 28, items 5-9), each case an attack reproduced on
 * loopback, bounded in count and time: NUL escapes and invalid UTF-8 in and out, a full disk at stop,
 * silent connections past the descriptor limit, stream clients that never read, and resumes that would
 * replay a whole chat at once. Bounds asserted are generous: they tell a bounded server from an unbounded
 * one, not a fast machine from a slow one. */
#include "common/utf8.h"
#include "support/disk.h"
#include "support/llm_server.h"
#include "support/proc.h"
#include "support/serve_client.h"
#include "support/suite.h"
#include "support/unit.h"
#include "support/wait.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char *tmp;
static llm_server *srv;

static const char counter_world[] =
  "{\"name\": \"Counter\", \"defaults\": {\"provider\": \"script\"},"
  " \"agents\": [{\"name\": \"a\", \"replies\": [\"one\", \"two\", \"three\", \"four\", \"five\", \"six\"]}]}";

/* Starts serve on world text (name.json) with its database at db (NULL: in the scratch directory) and
 * up to four more arguments (NULL-terminated, may be NULL). */
static int start_ex(const char *name, const char *world, const char *db, const char *const *more,
                    const char *const *env, serve_proc *sp) {
  char wpath[1024], dbdef[1024];
  snprintf(wpath, sizeof wpath, "%s/%s.json", tmp, name);
  snprintf(dbdef, sizeof dbdef, "%s/db-%s", tmp, name);
  if (unit_write_file(wpath, world)) return -1;
  const char *args[8] = {wpath, "--db", db ? db : dbdef, NULL};
  for (size_t i = 0; more && more[i] && i < 4; i++) args[3 + i] = more[i];
  return SERVE_START(tmp, args, env, sp);
}

static int start_at(const char *name, const char *world, const char *db, const char *const *env, serve_proc *sp) {
  return start_ex(name, world, db, NULL, env, sp);
}


/* Memory bounds mean nothing under AddressSanitizer (it keeps freed memory in quarantine) or
 * ThreadSanitizer (its shadow memory and history grow with every access): measured and printed there,
 * asserted only in a plain build. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RSS_BOUND(cond) ((void)(cond))
#else
#define RSS_BOUND(cond) CHECK(cond)
#endif

static int utf8_valid(const char *s) {
  size_t n = strlen(s);
  for (size_t i = 0; i < n;) {
    size_t k = ag_utf8_seq_len(s + i, n - i);
    if (!k) return 0;
    i += k;
  }
  return 1;
}

/* ---- item 9: NUL escapes refused, invalid UTF-8 never sent ---- */

static void nul_refused_and_utf8_repaired(void) {
  serve_proc sp;
  if (start_at("nul", counter_world, NULL, NULL, &sp)) return;
  long st;
  /* "before\u0000after" would be stored as "before": refused, saying where */
  cJSON *j = serve_call_json(&sp, "POST", "/api/worlds/counter/messages", "{\"text\": \"before\\u0000after\"}", &st);
  CHECK_INT(st, 400);
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
  const cJSON *msg = cJSON_GetObjectItemCaseSensitive(e, "message");
  CHECK(cJSON_IsString(msg) && strstr(msg->valuestring, "\\u0000") && strstr(msg->valuestring, "column 17"));
  cJSON_Delete(j);
  /* an escaped backslash before u0000 is text */
  j = serve_call_json(&sp, "POST", "/api/worlds/counter/messages", "{\"text\": \"a\\\\u0000b\"}", &st);
  CHECK_INT(st, 202);
  cJSON_Delete(j);
  /* the snapshot of this chat, edited: \u0000 in a message is refused as `chats import` does */
  j = serve_call_json(&sp, "GET", "/api/worlds/counter", NULL, &st);
  const cJSON *cur = cJSON_GetObjectItemCaseSensitive(j, "current_chat");
  char chat[128] = "", path[512];
  if (cJSON_IsString(cur)) snprintf(chat, sizeof chat, "%s", cur->valuestring);
  cJSON_Delete(j);
  snprintf(path, sizeof path, "/api/worlds/counter/chats/%s/snapshot", chat);
  http_reply r;
  http_call(sp.base, "GET", path, NULL, 0, NULL, &r);
  CHECK_INT(r.status, 200);
  char *snap = r.body ? strdup(r.body) : strdup("");
  http_reply_free(&r);
  char *at = strstr(snap, "a\\\\u0000b"); /* the message posted above, as JSON text: a\\u0000b */
  CHECK(at != NULL);
  if (!at) {
    free(snap);
    serve_proc_stop(&sp);
    return;
  }
  memcpy(at, "a\\u0000bb", 9); /* same length: a real \u0000 escape now */
  j = serve_call_json(&sp, "POST", "/api/snapshots", snap, &st);
  CHECK_INT(st, 400);
  cJSON_Delete(j);
  /* the same with bytes that are not UTF-8: stored as they are (as `chats import` does); every reply that
   * carries them is valid UTF-8 (U+FFFD in their place) */
  memcpy(at, "a\xff\xc3(     ", 9);
  http_call(sp.base, "POST", "/api/snapshots", snap, strlen(snap), NULL, &r);
  free(snap);
  CHECK_INT(r.status, 201);
  j = cJSON_Parse(r.body);
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
  chat[0] = '\0';
  if (cJSON_IsString(id)) snprintf(chat, sizeof chat, "%s", id->valuestring);
  cJSON_Delete(j);
  http_reply_free(&r);
  CHECK(chat[0]);
  const char *paths[] = {"/api/worlds/counter/chats/%s/messages", "/api/worlds/counter/chats/%s/snapshot",
                         "/api/worlds/counter/chats"};
  for (size_t i = 0; i < 3; i++) {
    snprintf(path, sizeof path, paths[i], chat);
    http_call(sp.base, "GET", path, NULL, 0, NULL, &r);
    CHECK_INT(r.status, 200);
    if (i < 2) CHECK(r.body && strstr(r.body, "\xef\xbf\xbd")); /* U+FFFD */
    if (!r.body || !utf8_valid(r.body)) unit_fail_(__FILE__, __LINE__, "GET %s: not valid UTF-8", path);
    http_reply_free(&r);
  }
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* ---- item 8: a full disk at stop ---- */

static void full_disk_at_stop_reported(void) {
  char mnt[1024], db[1100], filler[1100];
  snprintf(mnt, sizeof mnt, "%s/mnt", tmp);
  snprintf(db, sizeof db, "%s/db", mnt);
  snprintf(filler, sizeof filler, "%s/filler", mnt);
  if (disk_tmpfs(mnt, "16m")) return;
  serve_proc sp;
  if (start_at("full", counter_world, db, NULL, &sp)) goto done;
  CHECK(disk_fill(filler) > 0);
  /* posts are accepted (202: delivered) while their saves fail */
  char body[8300];
  int n = snprintf(body, sizeof body, "{\"text\": \"");
  memset(body + n, 'z', 8000);
  strcpy(body + n + 8000, "\"}");
  long st = 202;
  for (int i = 0; i < 40 && st == 202; i++) cJSON_Delete(serve_call_json(&sp, "POST", "/api/worlds/counter/messages", body, &st));
  CHECK_INT(st, 202);
  CHECK_INT(serve_proc_stop(&sp), 1);
  char *err = unit_read_file(sp.err_path);
  CHECK(err && strstr(err, "could not be saved"));
  CHECK(err && strstr(err, "No space left on device"));
  CHECK(err && !strstr(err, "Input/output error"));
  if (err) fprintf(stderr, "  stderr: %s", err);
  free(err);
done:
  unlink(filler);
  CHECK_INT(umount2(mnt, MNT_DETACH), 0);
}

/* ---- item 5: connections the server did not choose ---- */

/* A loopback TCP connection to port, not waiting for it to be accepted (-1 on error). */
static int connect_nb(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) && errno != EINPROGRESS) close(fd), fd = -1;
  return fd;
}

/* GET path on a new connection, waiting at most timeout_ms for the whole answer; its status (0: none in
 * time), its text into out (cap bytes) when out is not NULL. */
static int probe(int port, const char *path, int timeout_ms, char *out, size_t cap) {
  char req[512], buf[8192];
  snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path);
  int fd = connect_nb(port);
  if (fd < 0) return 0;
  long deadline = now_ms() + timeout_ms;
  size_t len = 0, sent = 0;
  int done = 0;
  while (!done && now_ms() < deadline && len < sizeof buf - 1) {
    struct pollfd p = {fd, (short)(sent < strlen(req) ? POLLOUT : POLLIN), 0};
    if (poll(&p, 1, 50) <= 0) continue;
    if (sent < strlen(req)) {
      ssize_t n = write(fd, req + sent, strlen(req) - sent);
      if (n > 0) sent += (size_t)n;
      else if (n < 0 && errno != EAGAIN) done = 1;
      continue;
    }
    ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
    if (n > 0) len += (size_t)n;
    else if (n == 0 || errno != EAGAIN) done = 1;
  }
  close(fd);
  buf[len] = '\0';
  if (out) snprintf(out, cap, "%s", buf);
  int status = 0;
  return done && sscanf(buf, "HTTP/1.%*d %d", &status) == 1 ? status : 0;
}

/* 300 silent connections to a server with 256 descriptors: before, accept() failed in a busy loop
 * (libevent logging each failure, megabytes a second) and no probe was ever answered. Now silent
 * connections are cut after the request timeout, accepting pauses while descriptors are out (one log
 * line a second at most), and every probe is answered. */
static void silent_connections_past_the_descriptor_limit(void) {
  const char *env[] = {"AGORA_SERVE_REQUEST_TIMEOUT_MS=1500", NULL};
  serve_proc sp;
  if (start_at("fds", counter_world, NULL, env, &sp)) return;
  /* `ulimit -n 256` for the server alone (agora raises its soft limit to the hard one at start) */
  struct rlimit low = {.rlim_cur = 256, .rlim_max = 256};
  CHECK_INT(prlimit(sp.pid, RLIMIT_NOFILE, &low, NULL), 0);
  int silent[300];
  for (int i = 0; i < 300; i++) silent[i] = connect_nb(sp.port);
  long t0 = now_ms();
  int answered = 0, ok = 0;
  for (int i = 0; i < 6; i++) {
    int st = probe(sp.port, "/healthz", 10000, NULL, 0);
    answered += st == 200 || st == 503;
    ok += st == 200;
    if (!st) break;
  }
  for (long long end = now_ms() + wait_budget_ms(10000); !ok && now_ms() < end;)
    ok = probe(sp.port, "/healthz", 10000, NULL, 0) == 200;
  long took = now_ms() - t0;
  CHECK_INT(answered, 6);
  CHECK(ok);
  for (int i = 0; i < 300; i++)
    if (silent[i] >= 0) close(silent[i]);
  CHECK_INT(serve_proc_stop(&sp), 0);
  char *err = unit_read_file(sp.err_path);
  size_t len = err ? strlen(err) : 0, lines = unit_count(err, "\n");
  fprintf(stderr, "  6 probes answered in %ld ms; stderr: %zu bytes, %zu lines\n", took, len, lines);
  CHECK(len < 16384);
  CHECK(lines <= (size_t)(took / 1000) + 3); /* once a second at most */
  free(err);
}

/* A bad count is refused with the option named, exit 2. */
static void bad_limits_refused(void) {
  const char *cases[][3] = {{"--max-connections", "0", NULL}, {"--max-streams", "many", NULL}, {"--max-streams", NULL, NULL}};
  for (size_t i = 0; i < 3; i++) {
    const char *args[] = {"serve", cases[i][0], cases[i][1], NULL};
    proc_result r;
    CHECK_INT(proc_agora(args, NULL, NULL, &r), 0);
    CHECK_INT(r.status, 2);
    CHECK(r.err && strstr(r.err, cases[i][0]));
    proc_result_free(&r);
  }
}

/* --max-connections 4 --max-streams 1: a request on a fifth connection gets 503 at once (a clear JSON
 * error), and 200 once the silent ones are cut; a second event stream gets 503. */
static void connection_and_stream_caps(void) {
  const char *env[] = {"AGORA_SERVE_REQUEST_TIMEOUT_MS=1500", NULL};
  const char *more[] = {"--max-connections", "4", "--max-streams", "1", NULL};
  serve_proc sp;
  if (start_ex("caps", counter_world, NULL, more, env, &sp)) return;
  int silent[4];
  for (int i = 0; i < 4; i++) silent[i] = connect_nb(sp.port);
  char text[8192];
  int st = 0;
  for (long long end = now_ms() + wait_budget_ms(5000); st != 503 && now_ms() < end;)
    st = probe(sp.port, "/healthz", 5000, text, sizeof text);
  CHECK_INT(st, 503);
  CHECK(strstr(text, "\"unavailable\"") && strstr(text, "too many connections"));
  long t0 = now_ms();
  while (now_ms() - t0 < wait_budget_ms(10000) && (st = probe(sp.port, "/healthz", 5000, NULL, 0)) != 200) {
  }
  CHECK_INT(st, 200); /* the silent ones were cut after 1.5 s */
  for (int i = 0; i < 4; i++)
    if (silent[i] >= 0) close(silent[i]);
  sse_set *set = sse_set_new();
  char url[256];
  snprintf(url, sizeof url, "%s/api/worlds/counter/events", sp.base);
  sse_conn *c = sse_open(set, url, NULL, NULL);
  CHECK_INT(sse_wait_open(set, c, 5000), 0);
  st = probe(sp.port, "/api/worlds/counter/events", 5000, text, sizeof text);
  CHECK_INT(st, 503);
  CHECK(strstr(text, "too many event streams") != NULL);
  CHECK(sse_is_open(c));
  sse_set_free(set);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* ---- item 6: stream clients that do not read, resumes that replay a chat ---- */

/* The field (a "Name:" of kB) of /proc/PID/status, in MB; -1 when it cannot be read. */
static long status_mb(pid_t pid, const char *field) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, field, strlen(field))) kb = atol(line + strlen(field));
  if (f) fclose(f);
  return kb < 0 ? -1 : kb / 1024;
}

/* The server's peak resident memory (VmHWM), in MB. */
static long peak_rss_mb(pid_t pid) { return status_mb(pid, "VmHWM:"); }

/* n event streams on raw sockets with a tiny receive buffer that are never read (Last-Event-ID last, may
 * be NULL), into fds. */
static void open_stalled(int port, const char *world, const char *last, int *fds, int n) {
  char req[512];
  snprintf(req, sizeof req, "GET /api/worlds/%s/events HTTP/1.1\r\nHost: 127.0.0.1\r\n%s%s%s\r\n", world,
           last ? "Last-Event-ID: " : "", last ? last : "", last ? "\r\n" : "");
  for (int i = 0; i < n; i++) {
    int fd = socket(AF_INET, SOCK_STREAM, 0), small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) || write(fd, req, strlen(req)) != (ssize_t)strlen(req))
      unit_fail_(__FILE__, __LINE__, "stalled client %d: %s", i, strerror(errno));
    fds[i] = fd;
  }
}

/* The longest a /healthz probe took while cond(sp) was false (polled between probes), at most limit_ms
 * overall; sets *reached. */
static long worst_probe_until(const serve_proc *sp, int (*cond)(const serve_proc *), long limit_ms, int *reached) {
  long worst = 0, t0 = now_ms();
  *reached = 0;
  while (now_ms() - t0 < limit_ms && !(*reached = cond(sp))) {
    long a = now_ms();
    int st = probe(sp->port, "/healthz", 60000, NULL, 0);
    long took = now_ms() - a;
    if (st != 200) unit_fail_(__FILE__, __LINE__, "probe: status %d after %ld ms", st, took);
    if (took > worst) worst = took;
    wait_nap_ms(20); /* the pace of the probes; cond() is the wait */
  }
  return worst;
}

static int metric_at_least(const serve_proc *sp, const char *name, long want) {
  http_reply r;
  http_call(sp->base, "GET", "/metrics", NULL, 0, NULL, &r);
  char key[128];
  snprintf(key, sizeof key, "\n%s ", name);
  const char *p = r.body ? strstr(r.body, key) : NULL;
  long v = p ? atol(p + strlen(key)) : -1;
  http_reply_free(&r);
  return v >= want;
}

/* Bytes queued in the kernel to send on the server's connections (port), from /proc/net/tcp. */
static long kernel_queued(int port) {
  FILE *f = fopen("/proc/net/tcp", "r");
  char line[512];
  long total = 0;
  while (f && fgets(line, sizeof line, f)) {
    unsigned lport, tx;
    if (sscanf(line, " %*d: %*8x:%4x %*8x:%*4x %*2x %8x:", &lport, &tx) == 2 && (int)lport == port) total += tx;
  }
  if (f) fclose(f);
  return total;
}

static long most_queued; /* the most kernel_queued seen while waiting */

static int fifty_replies_done(const serve_proc *sp) {
  long q = kernel_queued(sp->port);
  if (q > most_queued) most_queued = q;
  return metric_at_least(sp, "agora_llm_calls_done_total", 50);
}

#define STALLED 100

/* STALLED stream clients that never read, and 50 agents streaming their replies to one message: before, the
 * loop stalled for seconds per request and memory grew by every frame times every client. */
static void stalled_clients_do_not_stall_the_loop(void) {
  static char world[512 * 1024], reply[6401];
  memset(reply, 0, sizeof reply);
  for (int i = 0; i < 6400; i += 8) memcpy(reply + i, "word ab ", 8);
  size_t len = (size_t)snprintf(world, sizeof world, "{\"name\": \"Crowd\", \"agents\": [");
  for (int i = 0; i < 50; i++)
    len += (size_t)snprintf(world + len, sizeof world - len,
                            "%s{\"name\": \"agent%02d\", \"provider\": \"openai\", \"model\": \"m\", \"base_url\": \"%s\","
                            " \"api_key_env\": \"AGORA_TEST_KEY\", \"system_prompt\": \"[[mock reply=\\\"%s\\\" chunk=4]]\"}",
                            i ? ", " : "", i, llm_server_url(srv, "/v1"), reply);
  snprintf(world + len, sizeof world - len, "]}");
  const char *env[] = {"AGORA_TEST_KEY=sk-test-0123456789", NULL};
  serve_proc sp;
  if (start_at("crowd", world, NULL, env, &sp)) return;
  static int fds[STALLED];
  open_stalled(sp.port, "crowd", NULL, fds, STALLED);
  for (long long end = now_ms() + wait_budget_ms(4000);
       !metric_at_least(&sp, "agora_sse_clients", STALLED) && now_ms() < end;)
    wait_nap_ms(20);
  CHECK(metric_at_least(&sp, "agora_sse_clients", STALLED));
  long base_mb = peak_rss_mb(sp.pid);
  most_queued = 0;
  http_reply r;
  const char *msg = "{\"text\": \"everyone, say something\"}";
  http_call(sp.base, "POST", "/api/worlds/crowd/messages", msg, strlen(msg), NULL, &r);
  CHECK_INT(r.status, 202);
  http_reply_free(&r);
  int done;
  long worst = worst_probe_until(&sp, fifty_replies_done, 120000, &done);
  CHECK(done);
  long peak_mb = peak_rss_mb(sp.pid);
  fprintf(stderr, "  %d stalled clients, 50 agents streaming: worst probe %ld ms; peak RSS %ld MB (%ld MB before); "
          "at most %ld KB queued in the kernel\n", STALLED, worst, peak_mb, base_mb, most_queued / 1024);
  CHECK(worst < 2000);
  RSS_BOUND(peak_mb - base_mb < 50);
  for (int i = 0; i < STALLED; i++) close(fds[i]);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* The body of a message post whose text is size bytes of c (caller frees); *at is where the text starts. */
static char *big_post(size_t size, char c, int *at) {
  char *body = malloc(size + 32);
  *at = snprintf(body, size + 32, "{\"text\": \"");
  memset(body + *at, c, size);
  strcpy(body + *at + size, "\"}");
  return body;
}

static int always(const serve_proc *sp) {
  (void)sp;
  return 0;
}

/* Ten clients that never read resume a 36 MB chat from a previous run's id, then one that reads: before,
 * each stalled client was handed up to 32 MiB of replay at once (the loop busy meanwhile); now each gets
 * a 64 KiB slice per drain, and the reading one every message in order, then the live stream. */
static void resume_replays_in_slices(void) {
  serve_proc sp;
  if (start_at("replay", counter_world, NULL, NULL, &sp)) return;
  int n;
  char *body = big_post(900000, 'r', &n);
  long st = 202;
  for (int i = 0; i < 40 && st == 202; i++) cJSON_Delete(serve_call_json(&sp, "POST", "/api/worlds/counter/messages", body, &st));
  free(body);
  CHECK_INT(st, 202);
  cJSON *j = serve_call_json(&sp, "GET", "/api/worlds/counter", NULL, &st);
  const cJSON *cur = cJSON_GetObjectItemCaseSensitive(j, "current_chat");
  char last[256];
  snprintf(last, sizeof last, "1.0.%s.0", cJSON_IsString(cur) ? cur->valuestring : "?"); /* another run's id */
  long last_seq = (long)cJSON_GetObjectItemCaseSensitive(j, "last_seq")->valuedouble;
  cJSON_Delete(j);
  long base_mb = peak_rss_mb(sp.pid);
  int fds[10];
  open_stalled(sp.port, "counter", last, fds, 10);
  int reached;
  long worst = worst_probe_until(&sp, always, 2000, &reached);
  long stalled_mb = peak_rss_mb(sp.pid);
  /* one that reads: every stored message in order (replayed: frame number 0), then a live one */
  sse_set *set = sse_set_new();
  char url[256];
  snprintf(url, sizeof url, "%s/api/worlds/counter/events", sp.base);
  sse_conn *c = sse_open(set, url, last, NULL);
  CHECK_INT(sse_wait(set, (size_t)last_seq, "\"type\":\"message\"", 60000), 0);
  cJSON_Delete(serve_call_json(&sp, "POST", "/api/worlds/counter/messages", "{\"text\": \"live\"}", &st));
  CHECK_INT(sse_wait(set, (size_t)last_seq + 1, "\"type\":\"message\"", 20000), 0);
  size_t nf;
  const sse_frame_rec *f = sse_frames(c, &nf);
  long seq = 0, replayed = 0;
  int ordered = 1;
  for (size_t i = 0; i < nf; i++) {
    const char *p = strstr(f[i].data, "\"type\":\"message\"") ? strstr(f[i].data, "\"seq\":") : NULL;
    if (!p) continue;
    ordered &= atol(p + 6) == seq + 1;
    seq = atol(p + 6);
    replayed += seq <= last_seq && f[i].id && strstr(f[i].id, ".0.") != NULL;
  }
  CHECK(ordered);
  CHECK(seq >= last_seq + 1); /* the live one (and maybe its reply) */
  CHECK_INT(replayed, last_seq);
  CHECK_INT(sse_count(c, "\"type\":\"resync\""), 0);
  fprintf(stderr, "  10 stalled resumes of %ld messages (36 MB): peak RSS %ld MB after, %ld MB before; worst probe %ld ms\n",
          last_seq, stalled_mb, base_mb, worst);
  RSS_BOUND(stalled_mb - base_mb < 40);
  CHECK(worst < 2000);
  sse_set_free(set);
  for (int i = 0; i < 10; i++) close(fds[i]);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* ---- item 7: memory per world bounded in bytes ---- */

/* The server's anonymous resident memory (RssAnon: its heap, not the database's mapped pages), in MB. */
static long anon_rss_mb(pid_t pid) { return status_mb(pid, "RssAnon:"); }

/* 150 posts of 1 MB: before, the stream's ring (8,192 frames, whatever their size) and each agent's
 * memory slack (256 messages) held them all; now both are capped in bytes (32 MiB, 16 MiB). */
static void posted_text_bounded_in_bytes(void) {
  serve_proc sp;
  if (start_at("bytes", counter_world, NULL, NULL, &sp)) return;
  int n;
  char *body = big_post(1000000, 'b', &n);
  long st = 202, most = 0;
  for (int i = 0; i < 150 && st == 202; i++) {
    body[n] = (char)('a' + i % 26); /* each text its own */
    cJSON_Delete(serve_call_json(&sp, "POST", "/api/worlds/counter/messages", body, &st));
    long mb = anon_rss_mb(sp.pid);
    if (mb > most) most = mb;
  }
  free(body);
  CHECK_INT(st, 202);
  fprintf(stderr, "  150 MB posted: anonymous RSS %ld MB at most\n", most);
  RSS_BOUND(most < 110);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

SUITE_RUN((UNIT(nul_refused_and_utf8_repaired), UNIT(full_disk_at_stop_reported),
  UNIT(silent_connections_past_the_descriptor_limit), UNIT(bad_limits_refused), UNIT(connection_and_stream_caps),
  UNIT(stalled_clients_do_not_stall_the_loop), UNIT(resume_replays_in_slices),
  UNIT(posted_text_bounded_in_bytes)), .tmp = &tmp, .srv = &srv, .many_fds = 1)
