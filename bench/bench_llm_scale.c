/* Real LLMs at scale (issue 25), three figures:
 *  1. rate limits: 500 agents, one question each, against the loopback server enforcing 120 requests a
 *     window, with `rate_limits` set to the same: wall time as a ratio to the minimum the limit allows
 *     (4 windows: the 481st..500th requests cannot start before the 4th window ends), and the server's 429s
 *     (target: within 1.1x, zero 429s). The window is 2 s instead of a minute (AGORA_RATE_WINDOW_MS on our
 *     side, llm_server_set_limits on the server's): the same arithmetic, 30 times faster.
 *  2. the limiter's cost per attempt (acquire + done) on a limited endpoint and on an unlimited one
 *     (target: <= 2 us, and nothing when no limit applies).
 *  3. cache replay: a world of 10,000 replies (2,500 agents answer four messages: a stored world's settings
 *     are capped at 1 MiB, a few thousand agents), run once with the cache in `use`
 *     against the server, then in `replay` with durable storage on: cached replies per second through the
 *     whole world, and the server's requests during the replay (target: >= 100,000/s, 0 requests); and the
 *     loop thread's CPU per reply, which the neighbours' load on a shared machine moves far less.
 * Usage: bench_llm_scale [runs] [cache] (default 3 runs; "cache": the replay figures only). */
#include "chat/session.h"
#include "llm/cache.h"
#include "llm/provider.h"
#include "storage/cache_db.h"
#include "storage/store.h"
#include "support/bench_chat.h"
#include "support/bench_stat.h"
#include "support/llm_server.h"
#include "support/unit.h"
#include "world/world.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A figure measured once (the worst of the runs, the filling run) as a table row of its own. */
static void once_row(const char *name, const char *unit, double x) { bench_row(name, unit, &x, 1); }

typedef struct counter {
  int replies;
} counter;

static void count_replies(void *ud, bus_topic topic, void *payload) {
  if (topic == BUS_MESSAGE && ((ag_msg *)payload)->kind == AG_KIND_AGENT) ((counter *)ud)->replies++;
}

/* n agents at the server (whole replies), extra top-level fields. Caller frees the spec. */
static void make_spec(llm_server *srv, int n, const char *extra, const char *provider, world_spec *spec) {
  size_t cap = (size_t)n * 32 + 1024;
  char *json = malloc(cap);
  size_t len = (size_t)snprintf(json, cap,
                                "{\"name\": \"scale\", %s \"defaults\": {\"provider\": \"%s\", \"base_url\": \"%s\","
                                " \"api_key_env\": \"BENCH_KEY\", \"model\": \"m\", \"stream\": false, \"replies\": [\"ok\"],"
                                " \"system_prompt\": \"[[mock reply=ok]]\"}, \"agents\": [",
                                extra, provider, llm_server_url(srv, "/v1"));
  for (int i = 0; i < n; i++) len += (size_t)snprintf(json + len, cap - len, "%s{\"name\": \"a%d\"}", i ? "," : "", i);
  snprintf(json + len, cap - len, "]}");
  ag_errmsg em = {""};
  if (world_spec_parse(json, strlen(json), "bench", spec, &em)) {
    fprintf(stderr, "%s\n", em.text);
    exit(1);
  }
  free(json);
}

/* 1. 500 agents behind 120 requests a window: ms of the whole run. */
static double rate_run(llm_server *srv, long window, size_t *rejected) {
  char extra[256];
  snprintf(extra, sizeof extra, "\"rate_limits\": {\"%s\": {\"rpm\": 120}},", llm_server_url(srv, "/v1"));
  world_spec spec;
  make_spec(srv, 500, extra, "openai", &spec);
  llm_server_set_limits(srv, window, 120, 0);
  struct event_base *base = event_base_new();
  world *w = NULL;
  ag_errmsg em = {""};
  if (world_new(base, &spec, &w, &em)) exit(1);
  world_spec_free(&spec);
  counter c = {0};
  bus_subscribe(world_bus(w), BUS_MESSAGE, BUS_PHASE_OUTPUT, count_replies, &c, NULL);
  double t0 = bench_now_s();
  world_publish(w, "human", "One question each.", NULL);
  world_run_until_quiet(w);
  double dt = (bench_now_s() - t0) * 1e3;
  if (c.replies != 500) fprintf(stderr, "bench_llm_scale: %d of 500 replies\n", c.replies);
  *rejected = llm_server_rejected(srv);
  world_free(w);
  event_base_free(base);
  return dt;
}

/* 2. ns per acquire + done on one endpoint, limited (rpm and concurrency far above the load) or not. */
static double limiter_ns(int limited) {
  struct event_base *base = event_base_new();
  llm_client *c = NULL;
  llm_client_new(base, &c);
  llm_rate_limit lim = {.endpoint = "default", .max_concurrency = 1000000, .rpm = 1000000000};
  llm_rate_limits l = {.v = &lim, .n = 1};
  if (limited) llm_client_set_rate_limits(c, &l);
  llm_config cfg;
  llm_config_init(&cfg);
  cfg.provider = LLM_OPENAI;
  cfg.base_url = "http://127.0.0.1:1/v1";
  llm_lim_headers h;
  llm_limit_headers_init(&h);
  const int n = 200000;
  double t0 = bench_now_s();
  for (int i = 0; i < n; i++) {
    llm_lim_slot s = {.tokens = 100};
    if (llm_limit_acquire(c, &cfg, &s) != 1) exit(1);
    llm_limit_done(&s, &h, 200);
  }
  double ns = (bench_now_s() - t0) * 1e9 / n;
  cfg.base_url = NULL; /* borrowed above */
  llm_config_free(&cfg);
  llm_client_free(c);
  event_base_free(base);
  return ns;
}

/* 3. One run of the 10,000-reply world with the cache in mode, storage on: replies per second, and the
 * loop thread's CPU microseconds per reply in *cpu_us. */
static double cache_run(llm_server *srv, const char *cache_dir, llm_cache_mode mode, const char *provider,
                        size_t *requests, double *cpu_us) {
  world_spec spec;
  make_spec(srv, 2500, "", provider, &spec);
  struct event_base *base = event_base_new();
  world *w = NULL;
  ag_errmsg em = {""};
  if (world_new(base, &spec, &w, &em)) exit(1);
  world_spec_free(&spec);
  cache_db *db = NULL;
  if (cache_db_open(cache_dir, &db, &em)) {
    fprintf(stderr, "%s\n", em.text);
    exit(1);
  }
  llm_client_set_cache(world_llm(w), mode, db);
  bench_chat chat;
  bench_chat_open(w, &chat);
  counter c = {0};
  bus_subscribe(world_bus(w), BUS_MESSAGE, BUS_PHASE_OUTPUT, count_replies, &c, NULL);
  size_t before = llm_server_request_count(srv);
  double t0 = bench_now_s(), cpu0 = bench_thread_cpu_s();
  for (int round = 0; round < 4; round++) {
    char text[64];
    snprintf(text, sizeof text, "Roll call %d, everyone!", round + 1);
    world_publish(w, "human", text, NULL);
    world_run_until_quiet(w);
  }
  double dt = bench_now_s() - t0;
  *cpu_us = (bench_thread_cpu_s() - cpu0) * 1e6 / (c.replies ? c.replies : 1);
  *requests = llm_server_request_count(srv) - before;
  if (c.replies != 10000 || world_failed_calls(w))
    fprintf(stderr, "bench_llm_scale: %d of 10000 replies, %zu failed\n", c.replies, world_failed_calls(w));
  bench_chat_end(&chat);
  world_free(w);
  cache_db_close(db);
  bench_chat_close(&chat);
  event_base_free(base);
  return c.replies / dt;
}

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 3;
  if (runs < 1) runs = 1;
  const long window = 2000;
  setenv("BENCH_KEY", "sk-bench-0123456789", 1);
  char wenv[32];
  snprintf(wenv, sizeof wenv, "%ld", window);
  setenv("AGORA_RATE_WINDOW_MS", wenv, 1);
  llm_server *srv;
  if (llm_server_start(&srv)) return 1;
  double v[16];
  size_t worst = 0;
  int only_cache = argc > 2 && !strcmp(argv[2], "cache"); /* for profiling the replay */
  for (int i = 0; i < runs && i < 16 && !only_cache; i++) {
    size_t rej = 0;
    v[i] = rate_run(srv, window, &rej) / (4.0 * window);
    if (rej > worst) worst = rej;
  }
  printf("| measure (%d runs) | min | median | max | unit |\n|---|---|---|---|---|\n", runs < 16 ? runs : 16);
  if (!only_cache) bench_row("500 agents, 120 req/window: wall / minimum (4 windows)", "x", v, runs < 16 ? runs : 16);
  once_row("  429s from the server (worst run)", "429s", (double)worst);
  llm_server_set_limits(srv, window, 0, 0);
  for (int i = 0; i < runs && i < 16; i++) v[i] = limiter_ns(1);
  bench_row("limiter, limited endpoint: acquire + done", "ns", v, runs < 16 ? runs : 16);
  for (int i = 0; i < runs && i < 16; i++) v[i] = limiter_ns(0);
  bench_row("limiter, no limit: acquire + done", "ns", v, runs < 16 ? runs : 16);
  char *tmp = unit_tmpdir();
  char cache_dir[4096];
  snprintf(cache_dir, sizeof cache_dir, "%s/cache", tmp);
  size_t reqs = 0;
  double cpu[16], fill = cache_run(srv, cache_dir, LLM_CACHE_USE, "openai", &reqs, cpu);
  once_row("10,000 replies, cache use (filling), storage on", "replies/s", fill);
  once_row("  HTTP requests during the filling", "requests", (double)reqs);
  size_t worst_reqs = 0;
  for (int i = 0; i < runs && i < 16; i++) {
    v[i] = cache_run(srv, cache_dir, LLM_CACHE_REPLAY, "openai", &reqs, &cpu[i]);
    if (reqs > worst_reqs) worst_reqs = reqs;
  }
  bench_row("10,000 replies, cache replay, storage on", "replies/s", v, runs < 16 ? runs : 16);
  bench_row("  CPU of the loop's thread per replayed reply", "us", cpu, runs < 16 ? runs : 16);
  once_row("  HTTP requests during the replays (worst run)", "requests", (double)worst_reqs);
  /* The same world on the offline script provider: what the world and its storage cost without the cache. */
  for (int i = 0; i < runs && i < 16; i++) v[i] = cache_run(srv, cache_dir, LLM_CACHE_OFF, "script", &reqs, &cpu[i]);
  bench_row("  the same world on the script provider (no cache)", "replies/s", v, runs < 16 ? runs : 16);
  bench_row("  CPU of the loop's thread per scripted reply", "us", cpu, runs < 16 ? runs : 16);
  unit_rmrf(tmp);
  free(tmp);
  llm_server_stop(srv);
  return 0;
}
