/* Fan-out through the whole world: N agents (50, 200, 1000) answer one public message from the
 * loopback LLM server, with durable LMDB storage; wall time from publish until every reply is stored
 * (the world is quiet only after the commit), as a ratio to one agent's time at the same latency, and
 * replies per second at 0 ms. Usage: bench_fanout_world [runs]. */
#include "chat/session.h"
#include "storage/store.h"
#include "support/bench_chat.h"
#include "support/llm_server.h"
#include "support/unit.h"
#include "world/world.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef struct counter {
  int replies;
} counter;

static void count_replies(void *ud, bus_topic topic, void *payload) {
  if (topic == BUS_MESSAGE && ((ag_msg *)payload)->kind == AG_KIND_AGENT) ((counter *)ud)->replies++;
}

/* One run: returns ms from publish to quiet (all replies stored), or -1 on failure. */
static double run_once(llm_server *srv, int n, int latency) {
  size_t cap = (size_t)n * 96 + 512;
  char *json = malloc(cap);
  snprintf(json, cap,
           "{\"name\": \"fan\", \"turn_limit\": 5, \"defaults\": {\"provider\": \"openai\", \"base_url\": \"%s\","
           " \"api_key_env\": \"BENCH_KEY\", \"model\": \"m\", \"system_prompt\": \"[[mock latency=%d reply=ok]]\"},"
           " \"agents\": [",
           llm_server_url(srv, "/v1"), latency);
  for (int i = 0; i < n; i++) snprintf(json + strlen(json), cap - strlen(json), "%s{\"name\": \"a%d\"}", i ? "," : "", i);
  strcat(json, "]}");
  world_spec spec;
  ag_errmsg em = {""};
  if (world_spec_parse(json, strlen(json), "bench", &spec, &em)) {
    fprintf(stderr, "%s\n", em.text);
    exit(1);
  }
  free(json);
  struct event_base *base = event_base_new();
  world *w = NULL;
  if (world_new(base, &spec, &w, &em)) {
    fprintf(stderr, "%s\n", em.text);
    exit(1);
  }
  world_spec_free(&spec);
  bench_chat chat;
  bench_chat_open(w, &chat);
  counter c = {0};
  bus_subscribe(world_bus(w), BUS_MESSAGE, BUS_PHASE_OUTPUT, count_replies, &c, NULL);
  double t0 = now_ms();
  world_publish(w, "human", "Roll call, everyone!", NULL);
  world_run_until_quiet(w);
  double dt = now_ms() - t0;
  int ok = c.replies == n && world_failed_calls(w) == 0 && chat_session_failures(chat.cs) == 0;
  if (!ok) fprintf(stderr, "bench_fanout_world: %d of %d replies, %zu failed\n", c.replies, n, world_failed_calls(w));
  bench_chat_end(&chat);
  world_free(w);
  event_base_free(base);
  bench_chat_close(&chat);
  return ok ? dt : -1;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return v[n / 2];
}

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 3;
  if (runs < 1) runs = 1;
  unit_raise_fd_limit();
  setenv("BENCH_KEY", "sk-bench", 1);
  llm_server *srv = NULL;
  if (llm_server_start(&srv)) return 1;
  llm_server_set_recording(srv, 0);
  printf("| %-40s | %10s | %10s | %10s | %-12s |\n", "fan-out (durable storage)", "min", "median", "max", "unit");
  printf("|------------------------------------------|------------|------------|------------|--------------|\n");
  static const int latencies[] = {0, 200};
  static const int sizes[] = {50, 200, 1000};
  double *v = calloc((size_t)runs, sizeof *v);
  for (int l = 0; l < 2; l++) {
    for (int r = 0; r < runs; r++) v[r] = run_once(srv, 1, latencies[l]);
    double one = median(v, runs);
    printf("| %-40s | %10.1f | %10.1f | %10.1f | %-12s |\n", latencies[l] ? "1 agent, 200 ms server latency" : "1 agent, 0 ms server latency",
           v[0], one, v[runs - 1], "ms");
    for (int s = 0; s < 3; s++) {
      for (int r = 0; r < runs; r++) v[r] = run_once(srv, sizes[s], latencies[l]);
      median(v, runs);
      char name[96];
      if (latencies[l]) {
        snprintf(name, sizeof name, "%d agents, 200 ms: time / one call", sizes[s]);
        printf("| %-40s | %10.2f | %10.2f | %10.2f | %-12s |\n", name, v[0] / one, v[runs / 2] / one,
               v[runs - 1] / one, "ratio");
      } else {
        snprintf(name, sizeof name, "%d agents, 0 ms: replies stored per s", sizes[s]);
        printf("| %-40s | %10.0f | %10.0f | %10.0f | %-12s |\n", name, sizes[s] * 1000.0 / v[runs - 1],
               sizes[s] * 1000.0 / v[runs / 2], sizes[s] * 1000.0 / v[0], "replies/s");
      }
      fflush(stdout);
    }
  }
  free(v);
  llm_server_stop(srv);
  return 0;
}
