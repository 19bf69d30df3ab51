/* The rate limiter of the LLM layer (llm/limiter.c) on its own: the providers' rate-limit headers read
 * (OpenAI durations, Anthropic instants, stated limits), first-in first-out admission under rpm and
 * max_concurrency, a 429 pausing the whole endpoint and announcing it, the limits learned from a reply,
 * cancelling a waiting attempt; no bookkeeping for an endpoint with no limit. */
#include "llm/limiter.h"
#include "llm/provider.h"
#include "support/unit.h"
#include "support/wait.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void header(llm_lim_headers *h, const char *name, const char *value) {
  llm_limit_header(h, name, strlen(name), value, strlen(value));
}

static void headers_are_read(void) {
  llm_lim_headers h;
  llm_limit_headers_init(&h);
  CHECK_INT(h.requests_left, -1);
  header(&h, "x-ratelimit-remaining-requests", " 0");
  header(&h, "X-RateLimit-Reset-Requests", " 6m0s");
  header(&h, "x-ratelimit-reset-tokens", " 1.5s");
  header(&h, "x-ratelimit-limit-requests", " 500");
  header(&h, "x-ratelimit-limit-tokens", " 200000");
  CHECK_INT(h.requests_left, 0);
  CHECK_INT(h.reset_requests, 360000);
  CHECK_INT(h.reset_tokens, 1500);
  CHECK_INT(h.requests_limit, 500);
  CHECK_INT(h.tokens_limit, 200000);
  header(&h, "x-ratelimit-reset-requests", " 20ms");
  CHECK_INT(h.reset_requests, 20);
  header(&h, "x-ratelimit-reset-requests", " soon");
  CHECK_INT(h.reset_requests, -1);
  llm_limit_headers_init(&h);
  header(&h, "anthropic-ratelimit-requests-remaining", " 3");
  header(&h, "anthropic-ratelimit-requests-limit", " 50");
  header(&h, "anthropic-ratelimit-requests-reset", " 2099-01-01T00:00:00Z"); /* far: capped at a day */
  header(&h, "anthropic-ratelimit-tokens-reset", " 2001-01-01T00:00:00Z");   /* past: now */
  CHECK_INT(h.requests_left, 3);
  CHECK_INT(h.requests_limit, 50);
  CHECK_INT(h.reset_requests, 86400000);
  CHECK_INT(h.reset_tokens, 0);
  header(&h, "content-type", " application/json"); /* not ours: nothing changes */
  CHECK_INT(h.requests_left, 3);
}

typedef struct admitted {
  int order[16];
  int n;
} admitted;

typedef struct attempt {
  llm_lim_slot slot;
  int id;
  admitted *log;
} attempt;

static void go(void *ud) {
  attempt *a = ud;
  a->log->order[a->log->n++] = a->id;
}

/* n attempts of 10 tokens each, numbered 0..n-1, logging their admission into log. */
static void attempts_init(attempt *a, int n, admitted *log) {
  for (int i = 0; i < n; i++) {
    a[i] = (attempt){.slot = {.tokens = 10, .go = go}, .id = i, .log = log};
    a[i].slot.ud = &a[i];
  }
}

static void on_limited(void *ud, const char *endpoint, int64_t until_ms) {
  (void)until_ms;
  snprintf(ud, 128, "%s", endpoint);
}

/* Runs the loop until n attempts were admitted in all (or 5 s, stretched on slow builds). */
static void run_until(struct event_base *base, admitted *log, int n) {
  for (long long end = now_ms() + wait_budget_ms(5000); log->n < n && now_ms() < end;) {
    struct timeval tv = {0, 10000};
    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
  }
}

static void fifo_rpm_concurrency_pause(void) {
  struct event_base *base = event_base_new();
  llm_client *c = NULL;
  CHECK_INT(llm_client_new(base, &c), 0);
  llm_rate_limit lim = {.endpoint = "http://h/v1/", .max_concurrency = 2, .rpm = 3};
  llm_rate_limits l = {.v = &lim, .n = 1};
  CHECK_INT(llm_client_set_rate_limits(c, &l), 0);
  char said[128] = "";
  llm_client_on_rate_limited(c, on_limited, said);
  llm_config cfg;
  llm_config_init(&cfg);
  cfg.provider = LLM_OPENAI;
  cfg.base_url = strdup("http://h/v1");
  admitted log = {.n = 0};
  attempt a[5];
  attempts_init(a, 5, &log);
  /* Two start at once (max_concurrency), the rest wait in order. */
  CHECK_INT(llm_limit_acquire(c, &cfg, &a[0].slot), 1);
  CHECK_INT(llm_limit_acquire(c, &cfg, &a[1].slot), 1);
  CHECK_INT(llm_limit_acquire(c, &cfg, &a[2].slot), 0);
  CHECK_INT(llm_limit_acquire(c, &cfg, &a[3].slot), 0);
  CHECK_INT(llm_limit_acquire(c, &cfg, &a[4].slot), 0);
  CHECK_INT((long)llm_client_waiting(c), 3);
  llm_limit_cancel(&a[3].slot); /* a cancelled waiter is skipped */
  CHECK_INT((long)llm_client_waiting(c), 2);
  llm_lim_headers h;
  llm_limit_headers_init(&h);
  llm_limit_done(&a[0].slot, &h, 200);
  run_until(base, &log, 1);
  CHECK_INT(log.n, 1);
  CHECK_INT(log.order[0], 2);
  /* rpm 3 in the window: a[4] waits for the window although a slot is free. */
  llm_limit_done(&a[1].slot, &h, 200);
  run_until(base, &log, 2);
  CHECK_INT(log.n, 2); /* after the window (1 s here) */
  CHECK_INT(log.order[1], 4);
  /* A 429 pauses the endpoint and says so; the pause holds the next attempt. */
  h.retry_after_ms = 200;
  llm_limit_done(&a[2].slot, &h, 429);
  CHECK_STR(said, "http://h/v1");
  CHECK_INT((long)llm_client_rate_limited(c), 1);
  a[0].slot = (llm_lim_slot){.tokens = 10, .go = go, .ud = &a[0]};
  CHECK_INT(llm_limit_acquire(c, &cfg, &a[0].slot), 0);
  llm_limit_headers_init(&h);
  llm_limit_done(&a[4].slot, &h, 200);
  run_until(base, &log, 3);
  CHECK_INT(log.order[2], 0);
  llm_limit_done(&a[0].slot, &h, 200);
  llm_config_free(&cfg);
  llm_client_free(c);
  event_base_free(base);
}

/* An endpoint with no configured limit admits at once and counts nothing, until the provider states its
 * limits: then they hold. */
static void unlimited_then_learned(void) {
  struct event_base *base = event_base_new();
  llm_client *c = NULL;
  CHECK_INT(llm_client_new(base, &c), 0);
  llm_config cfg;
  llm_config_init(&cfg);
  cfg.provider = LLM_OPENAI;
  admitted log = {.n = 0};
  attempt a[4];
  attempts_init(a, 4, &log);
  CHECK_INT(llm_limit_acquire(c, &cfg, &a[0].slot), 1);
  CHECK_INT(a[0].slot.tracked, 0);
  llm_lim_headers h;
  llm_limit_headers_init(&h);
  h.requests_limit = 2;
  llm_limit_done(&a[0].slot, &h, 200);
  CHECK_INT(llm_limit_acquire(c, &cfg, &a[1].slot), 1);
  CHECK_INT(llm_limit_acquire(c, &cfg, &a[2].slot), 1);
  CHECK_INT(llm_limit_acquire(c, &cfg, &a[3].slot), 0); /* the stated 2 a window */
  CHECK_INT((long)llm_client_rate_limited(c), 0);
  llm_limit_cancel(&a[3].slot);
  llm_limit_cancel(&a[1].slot);
  llm_limit_cancel(&a[2].slot);
  llm_config_free(&cfg);
  llm_client_free(c);
  event_base_free(base);
}

static const unit_test tests[] = {
    UNIT(headers_are_read),
    UNIT(fifo_rpm_concurrency_pause),
    UNIT(unlimited_then_learned),
};

int main(int argc, char **argv) {
  setenv("AGORA_RATE_WINDOW_MS", "1000", 1);
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
