/* The deferred-call queue of common/defer.h: tickets cancel one call in O(1), in any order, across the
 * ring's growth and wrap-around; a stale ticket (its call ran or was cancelled) cancels nothing, even
 * when another call now sits in the same slot; and cancelling the calls of a world-sized queue costs
 * time linear in the calls (issue 22: each cancel scanned the queue, 51% of a 100,000-agent reply); a
 * long queue runs in batches, letting the loop's other events in between. */
#include "common/defer.h"
#include "common/error.h"
#include "llm/llm.h"
#include "support/bench_stat.h"
#include "support/suite.h"
#include "support/unit.h"

#include <event2/event.h>
#include <stdlib.h>

#define RAN_MAX 4096

typedef struct ran_log {
  int order[RAN_MAX]; /* the values of the calls that ran, in order */
  size_t n;
  ag_defer *d;
  ag_defer_ticket later; /* pushed by a running call */
} ran_log;

typedef struct call_arg {
  ran_log *log;
  int value;
} call_arg;

static void record(void *arg) {
  call_arg *c = arg;
  if (c->log->n < RAN_MAX) c->log->order[c->log->n++] = c->value;
}

static void run_all(struct event_base *base, ag_defer *d) {
  while (ag_defer_pending(d) > 0) event_base_loop(base, EVLOOP_ONCE);
}

/* 1,000 calls; every third cancelled, in a scrambled order, while the ring has grown and wrapped. */
static void cancel_in_any_order(void) {
  struct event_base *base = event_base_new();
  ag_defer *d = NULL;
  CHECK_INT(ag_defer_new(base, &d), AG_OK);
  ran_log *log = calloc(1, sizeof *log);
  enum { N = 1000 };
  static call_arg args[N + 8];
  ag_defer_ticket t[N];
  /* Eight calls run first, so the head has moved and the later pushes wrap round the slots. */
  for (int i = 0; i < 8; i++) {
    args[N + i] = (call_arg){.log = log, .value = -1};
    CHECK_INT(ag_defer_push(d, record, &args[N + i], NULL), AG_OK);
  }
  run_all(base, d);
  CHECK_INT(log->n, 8);
  log->n = 0;
  for (int i = 0; i < N; i++) {
    args[i] = (call_arg){.log = log, .value = i};
    CHECK_INT(ag_defer_push(d, record, &args[i], &t[i]), AG_OK);
  }
  CHECK_INT(ag_defer_pending(d), N);
  size_t cancelled = 0;
  for (int k = 0; k < N; k++) {
    int i = (k * 389) % N; /* 389 is prime to 1000: each index once, scrambled */
    if (i % 3 == 0) {
      CHECK_INT(ag_defer_cancel(d, t[i]), 1);
      CHECK_INT(ag_defer_cancel(d, t[i]), 0); /* twice: nothing more */
      cancelled++;
    }
  }
  CHECK_INT(ag_defer_pending(d), N - cancelled);
  run_all(base, d);
  CHECK_INT(log->n, N - cancelled);
  int want = 0;
  for (size_t k = 0; k < log->n; k++, want++) {
    if (want % 3 == 0) want++;
    CHECK_INT(log->order[k], want);
  }
  CHECK_INT(ag_defer_cancel(d, 0), 0); /* no ticket */
  free(log);
  ag_defer_free(d);
  event_base_free(base);
}

/* A ticket whose call ran names nothing, though a new call now occupies its ring slot. */
static void stale_ticket_cancels_nothing(void) {
  struct event_base *base = event_base_new();
  ag_defer *d = NULL;
  CHECK_INT(ag_defer_new(base, &d), AG_OK);
  ran_log *log = calloc(1, sizeof *log);
  call_arg a = {.log = log, .value = 1}, b = {.log = log, .value = 2};
  ag_defer_ticket ta = 0, tb = 0;
  CHECK_INT(ag_defer_push(d, record, &a, &ta), AG_OK);
  run_all(base, d);
  CHECK_INT(log->n, 1);
  CHECK_INT(ag_defer_push(d, record, &b, &tb), AG_OK); /* the slot a had */
  CHECK(ta != tb);
  CHECK_INT(ag_defer_cancel(d, ta), 0);
  CHECK_INT(ag_defer_pending(d), 1);
  run_all(base, d);
  CHECK_INT(log->n, 2);
  CHECK_INT(log->order[1], 2);
  CHECK_INT(ag_defer_cancel(d, tb), 0);
  CHECK_INT(ag_defer_cancel(d, tb + 100), 0); /* never issued */
  free(log);
  ag_defer_free(d);
  event_base_free(base);
}

/* A call that queues another and cancels it: the new call's ticket is good at once. */
static void push_and_cancel(void *arg) {
  call_arg *c = arg;
  record(c);
  CHECK_INT(ag_defer_push(c->log->d, record, c, &c->log->later), AG_OK);
  CHECK_INT(ag_defer_cancel(c->log->d, c->log->later), 1);
}

static void cancel_from_a_running_call(void) {
  struct event_base *base = event_base_new();
  ag_defer *d = NULL;
  CHECK_INT(ag_defer_new(base, &d), AG_OK);
  ran_log *log = calloc(1, sizeof *log);
  log->d = d;
  call_arg a = {.log = log, .value = 7};
  CHECK_INT(ag_defer_push(d, push_and_cancel, &a, NULL), AG_OK);
  run_all(base, d);
  event_base_loop(base, EVLOOP_NONBLOCK); /* the cancelled call's round, had it stayed queued */
  CHECK_INT(log->n, 1);
  CHECK_INT(ag_defer_pending(d), 0);
  free(log);
  ag_defer_free(d);
  event_base_free(base);
}

/* A long queue runs in batches: a call queued on another queue after 1,000 calls runs after at most a
 * batch of them, not after all (a million scripted replies in one round kept every reply's message and
 * events waiting on the bus, out of the caches). Each queue keeps its own order. */
static void a_long_queue_yields_to_other_events(void) {
  enum { N = 1000 };
  struct event_base *base = event_base_new();
  ag_defer *d = NULL, *other = NULL;
  CHECK_INT(ag_defer_new(base, &d), AG_OK);
  CHECK_INT(ag_defer_new(base, &other), AG_OK);
  ran_log *log = calloc(1, sizeof *log);
  static call_arg args[N + 1];
  for (int i = 0; i < N; i++) {
    args[i] = (call_arg){.log = log, .value = i};
    CHECK_INT(ag_defer_push(d, record, &args[i], NULL), AG_OK);
  }
  args[N] = (call_arg){.log = log, .value = -1};
  CHECK_INT(ag_defer_push(other, record, &args[N], NULL), AG_OK);
  while (ag_defer_pending(d) + ag_defer_pending(other) > 0) event_base_loop(base, EVLOOP_ONCE);
  CHECK_INT(log->n, N + 1);
  size_t at = 0, want = 0;
  for (size_t k = 0; k < log->n; k++) {
    if (log->order[k] == -1) at = k;
    else CHECK_INT(log->order[k], (int)want++);
  }
  if (at > AG_DEFER_BATCH) unit_fail_(__FILE__, __LINE__, "the other queue's call ran after %zu calls (batch %d)", at, AG_DEFER_BATCH);
  free(log);
  ag_defer_free(d);
  ag_defer_free(other);
  event_base_free(base);
}

static void on_chunk(void *ud, const char *text, size_t len) {
  (void)ud;
  (void)text;
  (void)len;
}

static void on_done(void *ud, int err, const char *text, const llm_error_info *info) {
  (void)err;
  (void)text;
  (void)info;
  (*(size_t *)ud)++;
}

/* 200,000 scripted calls in flight (one queued step each, as in a 200,000-agent world), then all
 * cancelled: linear, well under a second; with a scan of the queue per cancel it took minutes. */
static void cancel_is_constant_time(void) {
  enum { N = 200000 };
  struct event_base *base = event_base_new();
  llm_client *c = NULL;
  llm_endpoint *e = NULL;
  llm_config cfg;
  llm_config_init(&cfg);
  CHECK_INT(llm_client_new(base, &c), AG_OK);
  CHECK_INT(llm_endpoint_new(c, &cfg, &e, NULL), AG_OK);
  llm_call **calls = calloc(N, sizeof *calls);
  llm_message m = {.role = "user", .content = "hi"};
  llm_request req = {.messages = &m, .n_messages = 1};
  llm_callbacks cb = {.on_chunk = on_chunk, .on_done = on_done};
  size_t done = 0;
  for (size_t i = 0; i < N; i++) CHECK_INT(llm_call_start(e, &req, &cb, &done, &calls[i]), AG_OK);
  double t0 = bench_now_s();
  for (size_t i = N; i-- > 0;) llm_call_cancel(calls[i]);
  double dt = bench_now_s() - t0;
  CHECK(dt < 5.0);
  CHECK_INT(llm_client_active(c), 0);
  event_base_loop(base, EVLOOP_NONBLOCK); /* the cancelled steps' round: none runs */
  CHECK_INT(done, 0);
  free(calls);
  llm_endpoint_free(e);
  llm_client_free(c);
  event_base_free(base);
}

SUITE_RUN((UNIT(cancel_in_any_order), UNIT(stale_ticket_cancels_nothing), UNIT(cancel_from_a_running_call),
  UNIT(cancel_is_constant_time), UNIT(a_long_queue_yields_to_other_events)))
