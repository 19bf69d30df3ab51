/* The MCP Streamable HTTP transport's own cost per tool call (issue 11: ≤ 100 µs of Agora's time per
 * call): tools/call round trips over one session, one at a time and 1,000 in flight, against
 *  - the loopback C server of tests/support/mcp_fault.c (kept-alive HTTP/1.1, answers at once, on its
 *    own thread), and
 *  - the real server-everything (streamableHttp, SSE answers; a separate node process), when
 *    AGORA_PEERS points at the installed test peers.
 * "Agora CPU" is the CPU time of the thread running the loop (transport, net/net_fetch, libcurl, JSON),
 * which excludes the server's work; "wall" includes the server and the kernel.
 * Usage: bench_mcp_http [runs] */
#include "support/bench_stat.h"
#include "support/mcp_drive.h"
#include "support/mcp_fault.h"
#include "support/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define SEQ_CALLS 2000
#define PAR_CALLS 1000
#define MAX_RUNS 20

/* The loop thread's CPU seconds: user, and user + system (the kernel's share of loopback TCP). */
static void thread_cpu_s(double *user, double *all) {
  struct rusage ru;
  getrusage(RUSAGE_THREAD, &ru);
  *user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
  *all = *user + (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

typedef struct target {
  long want; /* answers expected in all */
  size_t base_msgs;
} target;

static int answered(mcp_drive *d, void *arg) {
  target *t = arg;
  return (long)(d->n_msgs - t->base_msgs) >= t->want;
}

typedef struct cost {
  double wall, user, all; /* per call, µs */
} cost;

/* n calls, at most width in flight; fills their cost per call. Returns 0 when all were answered. */
static int calls(mcp_drive *d, const char *tool, const char *args, int n, int width, cost *c) {
  target t = {0, d->n_msgs};
  static long next_id = 1000;
  double w0 = bench_now_s(), u0, a0, u1, a1;
  thread_cpu_s(&u0, &a0);
  for (int sent = 0; sent < n;) {
    int batch = n - sent < width ? n - sent : width;
    for (int i = 0; i < batch; i++, sent++)
      if (mcp_drive_send(d, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
                            "\"arguments\":%s}}", next_id++, tool, args)) return -1;
    t.want += batch;
    if (!mcp_drive_run(d, 60000, answered, &t)) return -1;
  }
  thread_cpu_s(&u1, &a1);
  c->wall = (bench_now_s() - w0) * 1e6 / n;
  c->user = (u1 - u0) * 1e6 / n;
  c->all = (a1 - a0) * 1e6 / n;
  /* The answers are kept by the driver: drop them so that runs do not grow. */
  for (size_t i = t.base_msgs; i < d->n_msgs; i++) free(d->msgs[i]);
  d->n_msgs = t.base_msgs;
  return 0;
}

static void rows(const char *label, const char *what, const cost *c, int runs, int ms_for) {
  double w[MAX_RUNS], u[MAX_RUNS], a[MAX_RUNS];
  for (int r = 0; r < runs; r++) {
    w[r] = ms_for ? c[r].wall * ms_for / 1000.0 : c[r].wall;
    u[r] = c[r].user;
    a[r] = c[r].all;
  }
  char name[200];
  snprintf(name, sizeof name, "%s: %s, wall%s", label, what, ms_for ? " for all" : "");
  bench_row(name, ms_for ? "ms" : "µs/call", w, runs);
  snprintf(name, sizeof name, "%s: %s, Agora CPU user", label, what);
  bench_row(name, "µs/call", u, runs);
  snprintf(name, sizeof name, "%s: %s, Agora CPU user+sys", label, what);
  bench_row(name, "µs/call", a, runs);
}

static int bench_url(const char *label, const char *url, const char *tool, const char *args, int runs) {
  cost seq[MAX_RUNS], par[MAX_RUNS], warm;
  mcp_drive d;
  mcp_http_options opt = {.url = url, .timeout_ms = 60000};
  if (mcp_drive_open(&d, &opt) || mcp_drive_handshake(&d, 20000)) {
    fprintf(stderr, "bench_mcp_http: %s: no session\n", label);
    mcp_drive_close(&d);
    return -1;
  }
  /* Warm: the connections for 1,000 calls in flight are opened once, then kept alive. */
  int rc = calls(&d, tool, args, PAR_CALLS, PAR_CALLS, &warm);
  for (int r = 0; r < runs && !rc; r++) {
    rc = calls(&d, tool, args, SEQ_CALLS, 1, &seq[r]);
    if (!rc) rc = calls(&d, tool, args, PAR_CALLS, PAR_CALLS, &par[r]);
  }
  mcp_drive_close(&d);
  if (rc) {
    fprintf(stderr, "bench_mcp_http: %s: calls went unanswered\n", label);
    return -1;
  }
  rows(label, "one call at a time", seq, runs, 0);
  rows(label, "1,000 calls in flight", par, runs, PAR_CALLS);
  return 0;
}

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 5;
  if (runs < 1) runs = 1;
  if (runs > MAX_RUNS) runs = MAX_RUNS;
  unit_raise_fd_limit();
  mcp_fault *srv = NULL;
  if (mcp_fault_start(&srv)) return 1;
  mcp_fault_mode_set(srv, MF_KEEP_ALIVE);
  printf("| scenario | min | median | max | unit |\n|---|---|---|---|---|\n");
  int rc = bench_url("loopback C server, JSON answers", mcp_fault_url(srv), "noop", "{}", runs);
  mcp_fault_stop(srv);
  if (!getenv("AGORA_PEERS")) {
    fprintf(stderr, "bench_mcp_http: AGORA_PEERS not set: server-everything skipped\n");
    return rc ? 1 : 0;
  }
  char *dir = unit_tmpdir();
  mcp_everything ev;
  if (!dir || mcp_everything_start(&ev, dir)) return 1;
  if (bench_url("server-everything echo, SSE answers", ev.url, "echo", "{\"message\":\"hi\"}", runs)) rc = -1;
  mcp_everything_stop(&ev);
  unit_rmrf(dir);
  free(dir);
  return rc ? 1 : 0;
}
