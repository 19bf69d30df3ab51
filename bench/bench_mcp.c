/* MCP tool calls over stdio, measured in process against a tiny server (tests/mcp/fake_server.js, node):
 * Agora's own CPU time per call (getrusage of this process only: the server's work is another process),
 * the round trip of one call at a time, and the wall time of 1,000 calls in flight at once on one server.
 * Usage: bench_mcp [calls] [runs]; run from the source tree (or set AGORA_SRC). Needs node. */
#include "mcp/child.h"
#include "mcp/client.h"
#include "mcp/stdio.h"

#include "support/bench_stat.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define CONCURRENT 1000

typedef struct bench {
  struct event_base *base;
  mcp_client *c;
  mcp_stdio_config cfg;
  const char *args[2];
  int started, answered, errors;
} bench;

static int connect_stdio(void *ud, struct event_base *base, const mcp_transport_sink *sink, void *sud,
                         mcp_transport **out, ag_errmsg *em) {
  return mcp_stdio_open(base, &((bench *)ud)->cfg, sink, sud, out, em);
}

static void on_start(void *ud, mcp_client *c, int err, const char *why) {
  (void)c;
  if (err) {
    fprintf(stderr, "bench_mcp: the server did not start: %s\n", why);
    exit(1);
  }
  ((bench *)ud)->started = 1;
}

static void on_result(void *ud, const mcp_result *r) {
  bench *b = ud;
  b->answered++;
  b->errors += r->is_error;
}

static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void wait_answers(bench *b, int n) {
  while (b->answered < n) event_base_loop(b->base, EVLOOP_ONCE);
}

static void call(bench *b) {
  if (mcp_client_call(b->c, "echo", "{\"text\":\"benchmark\"}", 0, on_result, b, NULL)) exit(1);
}

int main(int argc, char **argv) {
  int calls = argc > 1 ? atoi(argv[1]) : 2000, runs = argc > 2 ? atoi(argv[2]) : 5;
  if (calls < 1 || runs < 1) return 2;
  char script[4096];
  const char *src = getenv("AGORA_SRC");
  snprintf(script, sizeof script, "%s/tests/mcp/fake_server.js", src ? src : ".");
  bench b = {0};
  b.base = event_base_new();
  b.args[0] = script, b.args[1] = "ok";
  b.cfg = (mcp_stdio_config){.command = "node", .args = b.args, .n_args = 2, .name = "bench"};
  mcp_client_config cc = {.name = "bench", .version = "bench", .connect = connect_stdio, .connect_ud = &b};
  mcp_client_events ev = {&b, on_start, NULL};
  if (mcp_client_new(b.base, &cc, &ev, &b.c)) return 1;
  mcp_client_start(b.c);
  while (!b.started) event_base_loop(b.base, EVLOOP_ONCE);
  for (int i = 0; i < 200; i++) call(&b); /* warm up the server's JIT */
  wait_answers(&b, 200);
  double *own = calloc((size_t)runs, sizeof *own), *rtt = calloc((size_t)runs, sizeof *rtt);
  double *wall = calloc((size_t)runs, sizeof *wall), *own_c = calloc((size_t)runs, sizeof *own_c);
  for (int r = 0; r < runs; r++) {
    b.answered = 0;
    double c0 = cpu_s(), t0 = bench_now_s();
    for (int i = 0; i < calls; i++) {
      call(&b);
      wait_answers(&b, i + 1);
    }
    rtt[r] = (bench_now_s() - t0) / calls * 1e6;
    own[r] = (cpu_s() - c0) / calls * 1e6;
    b.answered = 0;
    c0 = cpu_s(), t0 = bench_now_s();
    for (int i = 0; i < CONCURRENT; i++) call(&b);
    wait_answers(&b, CONCURRENT);
    wall[r] = (bench_now_s() - t0) * 1e3;
    own_c[r] = (cpu_s() - c0) / CONCURRENT * 1e6;
  }
  printf("| measure (%d sequential calls, %d concurrent, %d runs) | min | median | max | unit |\n", calls, CONCURRENT,
         runs);
  printf("|---|---|---|---|---|\n");
  bench_row("Agora's own CPU per call, one at a time", "µs", own, runs);
  bench_row("round trip per call, one at a time", "µs", rtt, runs);
  bench_row("Agora's own CPU per call, 1,000 in flight", "µs", own_c, runs);
  bench_row("wall time of 1,000 concurrent calls", "ms", wall, runs);
  if (b.errors) fprintf(stderr, "bench_mcp: %d error results\n", b.errors);
  mcp_client_free(b.c);
  mcp_child_drain(3000);
  event_base_free(b.base);
  free(own), free(rtt), free(wall), free(own_c);
  return b.errors ? 1 : 0;
}
