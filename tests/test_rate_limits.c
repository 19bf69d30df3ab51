/* Rate limits per endpoint end to end (issue 25 §1), through the agora binary against the loopback LLM
 * server with enforced limits (10 requests a window; the window shortened to 1 s on both sides, as
 * AGORA_RATE_WINDOW_MS allows): with `rate_limits` set, every agent answers and the server refuses none;
 * without configuration, one burst of 429s at most, a rate-limited event, and every agent still answers;
 * max_concurrency holds at the server (the most requests it answers at once);
 * bad `rate_limits` fields are refused with their JSON paths. */
#include "support/llm_server.h"
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define AGENTS 40
#define RPM 10
#define WINDOW_MS 1000

static char *tmp;
static llm_server *srv;
static const char *const env[] = {"AGORA_TEST_KEY=sk-test-0123456789", "AGORA_RATE_WINDOW_MS=1000", NULL};

/* AGENTS agents at the loopback server, one world message that every one answers. */
static const char *crowd(const char *name, const char *extra) {
  static char path[4096];
  size_t cap = 8192 + AGENTS * 256;
  char *json = malloc(cap);
  size_t n = (size_t)snprintf(json, cap, "{\"name\": \"crowd\", %s \"defaults\": {\"provider\": \"openai\", "
                              "\"base_url\": \"%s\", \"api_key_env\": \"AGORA_TEST_KEY\", \"stream\": false}, "
                              "\"agents\": [", extra, llm_server_url(srv, "/v1"));
  for (int i = 0; i < AGENTS; i++) n += (size_t)snprintf(json + n, cap - n, "%s{\"name\": \"a%d\"}", i ? ", " : "", i);
  snprintf(json + n, cap - n, "], \"script\": [{\"from\": \"world\", \"text\": \"Say something.\"}]}");
  snprintf(path, sizeof path, "%s/%s", tmp, name);
  unit_write_file(path, json);
  free(json);
  return path;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Configured: the limiter keeps to the server's limit, so it never says 429; the run cannot be faster
 * than the windows the limit allows. */
static void configured_limits_no_429(void) {
  llm_server_reset(srv);
  /* The server's window is 200 ms shorter than ours: it counts a request when its thread reads it, which
   * a loaded machine delays. A burst read 300 ms late made its window end later than ours (8 refusals in
   * two suite runs, with other sessions' tests loading both cores); a limiter ignoring rpm still earns
   * 30 refusals here. */
  llm_server_set_limits(srv, WINDOW_MS - 200, RPM, 0);
  char extra[256];
  snprintf(extra, sizeof extra, "\"rate_limits\": {\"%s\": {\"rpm\": %d, \"max_concurrency\": 8}},",
           llm_server_url(srv, "/v1"), RPM);
  const char *args[] = {"run", crowd("c.json", extra), "--json", "--no-save", NULL};
  proc_result r;
  double t0 = now_s();
  CHECK_INT(proc_agora(args, NULL, env, &r), 0);
  double took = now_s() - t0;
  CHECK_INT(r.status, 0);
  CHECK_INT((long)unit_count(r.out, "\"kind\":\"agent\""), AGENTS);
  CHECK_INT((long)llm_server_rejected(srv), 0);
  CHECK_INT((long)unit_count(r.out, "\"event\":\"rate-limited\""), 0);
  CHECK(took >= (AGENTS / RPM - 1) * WINDOW_MS / 1000.0);
  if (r.status || llm_server_rejected(srv)) fprintf(stderr, "  rejected %zu\n  err: %s\n", llm_server_rejected(srv), r.err);
  proc_result_free(&r);
}

/* Not configured: the first burst meets 429s, which pause the whole endpoint (a rate-limited event) and
 * teach it the server's limit (x-ratelimit-limit-requests): no 429 after the first reset, every agent
 * answers. "default" limits apply to an endpoint not named. */
static void unconfigured_adapts(void) {
  llm_server_reset(srv);
  llm_server_set_limits(srv, WINDOW_MS, RPM, 0);
  const char *args[] = {"run", crowd("u.json", ""), "--json", "--no-save", NULL};
  proc_result r;
  PROC_OK(args, NULL, env, &r);
  CHECK_INT((long)unit_count(r.out, "\"kind\":\"agent\""), AGENTS);
  size_t rejected = llm_server_rejected(srv);
  CHECK(rejected > 0 && rejected <= AGENTS - RPM); /* the first burst, and nothing after */
  const char *ev = strstr(r.out, "\"event\":\"rate-limited\"");
  CHECK(ev && strstr(ev, "\"endpoint\":\"http://127.0.0.1:") && strstr(ev, "\"until\":\""));
  CHECK_INT((long)unit_count(r.out, "\"event\":\"llm-error\""), 0);
  if (r.status || !ev) fprintf(stderr, "  rejected %zu\n  err: %s\n", rejected, r.err);
  proc_result_free(&r);
  llm_server_reset(srv);
  llm_server_set_limits(srv, WINDOW_MS, RPM, 0);
  const char *dflt[] = {"run", crowd("d.json", "\"rate_limits\": {\"default\": {\"rpm\": 10}},"), "--json", "--no-save",
                        NULL};
  PROC_OK(dflt, NULL, env, &r);
  CHECK_INT((long)llm_server_rejected(srv), 0);
  proc_result_free(&r);
  llm_server_set_limits(srv, WINDOW_MS, 0, 0);
}

/* max_concurrency: with every reply held 150 ms, the server never answers more than N of the world's
 * requests at once, and every agent answers; the same world without the limit goes past N (so the
 * count can see a limit that does not hold). */
static void max_concurrency_holds(void) {
  enum { N = 3 };
  llm_server_reset(srv);
  llm_server_set_limits(srv, WINDOW_MS, 0, 0);
  llm_server_rule(srv, NULL, "latency=150");
  char extra[256];
  snprintf(extra, sizeof extra, "\"rate_limits\": {\"%s\": {\"max_concurrency\": %d}},", llm_server_url(srv, "/v1"), N);
  const char *args[] = {"run", crowd("mc.json", extra), "--json", "--no-save", NULL};
  proc_result r;
  CHECK_INT(proc_agora(args, NULL, env, &r), 0);
  CHECK_INT(r.status, 0);
  CHECK_INT((long)unit_count(r.out, "\"kind\":\"agent\""), AGENTS);
  CHECK_INT((long)llm_server_request_count(srv), AGENTS);
  size_t peak = llm_server_peak_concurrency(srv);
  CHECK(peak >= 1 && peak <= N);
  if (r.status || peak > N) fprintf(stderr, "  peak %zu\n  err: %s\n", peak, r.err);
  proc_result_free(&r);
  llm_server_reset(srv);
  llm_server_rule(srv, NULL, "latency=150");
  const char *free_args[] = {"run", crowd("mc-free.json", ""), "--json", "--no-save", NULL};
  CHECK_INT(proc_agora(free_args, NULL, env, &r), 0);
  CHECK_INT(r.status, 0);
  CHECK((long)llm_server_peak_concurrency(srv) > N);
  proc_result_free(&r);
  llm_server_reset(srv);
}

static void bad_fields_are_named(void) {
  static const unit_io cases[] = {
      {"\"rate_limits\": {\"default\": {\"rpm\": 0}},", "rate_limits.default.rpm: must be a whole number from 1 to"},
      {"\"rate_limits\": {\"default\": {\"rmp\": 5}},", "rate_limits.default.rmp: unknown field (did you mean 'rpm'?)"},
      {"\"rate_limits\": {\"api.openai.com\": {\"rpm\": 5}},", "rate_limits.api.openai.com: a key is a base URL"},
      {"\"rate_limits\": {\"default\": {}},", "rate_limits.default: must be an object with max_concurrency, rpm or tpm"},
      {"\"rate_limits\": [],", "rate_limits: must be an object of base URLs"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *args[] = {"run", crowd("bad.json", cases[i].in), "--no-save", NULL};
    PROC_REFUSED(args, env, cases[i].want, NULL);
  }
}

SUITE_RUN((UNIT(configured_limits_no_429), UNIT(unconfigured_adapts), UNIT(max_concurrency_holds),
  UNIT(bad_fields_are_named)), .tmp = &tmp, .srv = &srv)
