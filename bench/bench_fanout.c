/* Fan-out benchmark: N calls started at once on one client against the loopback server, at 0 ms
 * and 200 ms server latency; reports the wall time until all have completed (min/median/max over a
 * few runs) and its ratio to one call's time at the same latency. A ratio near 1 means the calls
 * really run concurrently. Usage: bench_fanout [RUNS] [PROVIDER] (default 3, openai). */
#include "llm/llm.h"
#include "support/llm_server.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

typedef struct bench_run {
  struct event_base *base;
  int pending;
  int failed;
  char first_error[256];
} bench_run;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void on_done(void *ud, int err, const char *text, const llm_error_info *info) {
  (void)text;
  bench_run *r = ud;
  if (err) {
    if (!r->failed) snprintf(r->first_error, sizeof r->first_error, "%s", info ? info->message : "?");
    r->failed++;
  }
  if (--r->pending == 0) event_base_loopbreak(r->base);
}

/* One run of n calls; returns the wall time in ms, or -1 when a call failed. */
static double run_once(const llm_config *cfg, int n) {
  bench_run r;
  memset(&r, 0, sizeof r);
  r.base = event_base_new();
  llm_client *c;
  llm_endpoint *e;
  if (llm_client_new(r.base, &c) || llm_endpoint_new(c, cfg, &e, NULL)) {
    fprintf(stderr, "bench_fanout: cannot create the client\n");
    exit(1);
  }
  llm_message msgs[2] = {{.role = "system", .content = "You are a benchmark."}, {.role = "user", .content = "Say something short."}};
  llm_request req = {.messages = msgs, .n_messages = 2};
  llm_callbacks cb = {NULL, on_done};
  double t0 = now_ms();
  for (int i = 0; i < n; i++) {
    if (llm_call_start(e, &req, &cb, &r, NULL) == AG_OK) r.pending++;
    else r.failed++;
  }
  if (r.pending) event_base_dispatch(r.base);
  double t = now_ms() - t0;
  llm_endpoint_free(e);
  llm_client_free(c);
  event_base_free(r.base);
  if (r.failed) {
    fprintf(stderr, "bench_fanout: %d of %d calls failed (%s)\n", r.failed, n, r.first_error);
    return -1;
  }
  return t;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void raise_nofile(rlim_t want) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  rlim_t target = want < rl.rlim_max ? want : rl.rlim_max;
  if (rl.rlim_cur < target) {
    rl.rlim_cur = target;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) perror("bench_fanout: setrlimit");
  }
  getrlimit(RLIMIT_NOFILE, &rl);
  printf("open files limit: %llu\n", (unsigned long long)rl.rlim_cur);
}

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 3;
  if (runs < 1 || runs > 100) runs = 3;
  llm_provider_kind kind = LLM_OPENAI;
  if (argc > 2 && llm_provider_parse(argv[2], &kind) != AG_OK) {
    fprintf(stderr, "usage: bench_fanout [RUNS] [openai|anthropic|gemini|ollama]\n");
    return 2;
  }
  /* Both ends of every connection live in this process: two descriptors per call, and spare. */
  raise_nofile(8192);
  setenv("AGORA_BENCH_KEY", "sk-bench", 1);
  llm_server *srv;
  if (llm_server_start(&srv) != 0) {
    fprintf(stderr, "bench_fanout: cannot start the loopback server\n");
    return 1;
  }
  llm_server_set_recording(srv, 0);
  llm_config cfg;
  llm_config_init(&cfg);
  cfg.provider = kind;
  cfg.model = "bench-model";
  cfg.api_key_env = "AGORA_BENCH_KEY";
  cfg.stream = 1;
  cfg.timeout_ms = 60000;
  cfg.max_retries = 0;
  char base_url[128];
  snprintf(base_url, sizeof base_url, "%s", llm_server_url(srv, kind == LLM_OPENAI ? "/v1" : ""));
  cfg.base_url = base_url;

  static const int latencies[] = {0, 200};
  static const int fanouts[] = {50, 200, 1000};
  printf("provider %s, streaming, %d runs each; times in ms\n", llm_provider_name(kind), runs);
  printf("%8s %6s %9s %9s %9s %9s %12s\n", "latency", "calls", "one call", "min", "median", "max", "median/one");
  int rc = 0;
  for (size_t li = 0; li < sizeof latencies / sizeof *latencies; li++) {
    char rule[64];
    snprintf(rule, sizeof rule, "latency=%d reply=\"a short benchmark reply\"", latencies[li]);
    llm_server_reset(srv);
    llm_server_rule(srv, NULL, rule);
    double one[5];
    for (int i = 0; i < 5; i++) one[i] = run_once(&cfg, 1);
    qsort(one, 5, sizeof *one, cmp_double);
    double base = one[2];
    for (size_t fi = 0; fi < sizeof fanouts / sizeof *fanouts; fi++) {
      double t[100];
      int ok = 1;
      for (int i = 0; i < runs && ok; i++) {
        t[i] = run_once(&cfg, fanouts[fi]);
        if (t[i] < 0) ok = 0;
      }
      if (!ok) {
        printf("%8d %6d %9.1f %9s\n", latencies[li], fanouts[fi], base, "FAILED");
        rc = 1;
        continue;
      }
      qsort(t, (size_t)runs, sizeof *t, cmp_double);
      printf("%8d %6d %9.1f %9.1f %9.1f %9.1f %12.2f\n", latencies[li], fanouts[fi], base, t[0], t[runs / 2],
             t[runs - 1], base > 0 ? t[runs / 2] / base : 0.0);
      fflush(stdout);
    }
  }
  llm_server_stop(srv);
  return rc;
}
