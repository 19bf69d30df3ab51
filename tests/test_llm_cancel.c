/* Calls in flight: cancelled from outside, from inside their own or another call's chunk callback,
 * from another call's on_done, while waiting to retry, by freeing the endpoint or the client (no
 * callback afterwards, nothing leaked: run under ASan); calls started from inside a chunk callback;
 * and 200 calls in flight together against a server that answers each after 200 ms. */
#include "llm/provider.h"
#include "net/net_http.h"
#include "support/llm_drive.h"
#include "support/llm_server.h"
#include "support/suite.h"
#include "support/unit.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static llm_server *srv;

static const llm_provider_kind kinds[] = {LLM_OPENAI, LLM_ANTHROPIC, LLM_GEMINI, LLM_OLLAMA};

static void config_for(llm_config *cfg, llm_provider_kind kind, int stream) {
  llm_drive_config(cfg, srv, kind, stream, 20000);
}

typedef struct fixture {
  struct event_base *base;
  llm_client *client;
  llm_endpoint *ep[4]; /* one per provider, streaming */
} fixture;

static void fixture_init(fixture *f, int stream) {
  f->base = event_base_new();
  CHECK_INT(llm_client_new(f->base, &f->client), AG_OK);
  for (int i = 0; i < 4; i++) {
    llm_config cfg;
    config_for(&cfg, kinds[i], stream);
    CHECK_INT(llm_endpoint_new(f->client, &cfg, &f->ep[i], NULL), AG_OK);
  }
}

/* The fixture on a freshly reset loopback server answering every request by rule. */
static void fixture_on(fixture *f, const char *rule, int stream) {
  llm_server_reset(srv);
  llm_server_rule(srv, NULL, rule);
  fixture_init(f, stream);
}

static void fixture_free(fixture *f) {
  for (int i = 0; i < 4; i++) llm_endpoint_free(f->ep[i]);
  llm_client_free(f->client);
  event_base_free(f->base);
}

static size_t live_transfers(const fixture *f) { return net_http_live(llm_client_net(f->client)); }

/* No call is active and no transfer is left open: then the fixture is freed. */
static void fixture_free_idle(fixture *f) {
  CHECK_INT(llm_client_active(f->client), 0);
  CHECK_INT(live_transfers(f), 0);
  fixture_free(f);
}

static llm_request one_message(llm_message *m, const char *text) {
  *m = (llm_message){.role = "user", .content = text};
  return (llm_request){.messages = m, .n_messages = 1};
}

/* n calls saying "hi" started on the four endpoints in turn, recording into r[0..n) (the providers
 * copy the request as a call starts). */
static void start_calls(fixture *f, llm_drive_result *r, int n, int *pending) {
  llm_message m;
  llm_request req = one_message(&m, "hi");
  for (int i = 0; i < n; i++) {
    llm_drive_result_init(&r[i]);
    CHECK_INT(llm_drive_start(f->ep[i % 4], &req, &r[i], f->base, pending), AG_OK);
  }
}

static void test_cancel_in_flight(void) {
  fixture f;
  fixture_on(&f, "latency=300 reply=late", 1);
  llm_drive_result r[12];
  int pending = 0;
  start_calls(&f, r, 12, &pending);
  CHECK_INT(llm_client_active(f.client), 12);
  llm_drive_run_for(f.base, 50); /* the requests are on the wire, the replies not yet */
  for (int i = 0; i < 12; i++) llm_call_cancel(r[i].call);
  CHECK_INT(llm_client_active(f.client), 0);
  CHECK_INT(live_transfers(&f), 0);
  llm_drive_run_for(f.base, 500);
  for (int i = 0; i < 12; i++) {
    CHECK_INT(r[i].done, 0);
    CHECK_INT(r[i].n_chunks, 0);
    llm_drive_result_free(&r[i]);
  }
  fixture_free(&f);
}

/* Callbacks that cancel calls from inside a chunk. */
typedef struct chunky {
  llm_call *self;
  llm_call *victim; /* cancelled at our first chunk, when set */
  int cancel_self;  /* cancel ourselves at the first chunk */
  llm_endpoint *spawn_on; /* start a call there at our first chunk */
  llm_drive_result *spawned;
  int *pending;
  struct event_base *base;
  int chunks, done, err;
  char text[256];
} chunky;

static void chunky_chunk(void *ud, const char *t, size_t n) {
  (void)t;
  (void)n;
  chunky *c = ud;
  if (c->chunks++ > 0) return;
  if (c->victim) {
    llm_call_cancel(c->victim);
    c->victim = NULL;
    (*c->pending)--;
  }
  if (c->spawn_on) {
    llm_message m = {.role = "user", .content = "spawned"};
    llm_request req = {.messages = &m, .n_messages = 1};
    CHECK_INT(llm_drive_start(c->spawn_on, &req, c->spawned, c->base, c->pending), AG_OK);
  }
  if (c->cancel_self) {
    llm_call_cancel(c->self);
    (*c->pending)--;
  }
}

static void chunky_done(void *ud, int err, const char *text, const llm_error_info *info) {
  (void)info;
  chunky *c = ud;
  c->done++;
  c->err = err;
  snprintf(c->text, sizeof c->text, "%s", text);
  (*c->pending)--;
}

static const llm_callbacks chunky_cb = {chunky_chunk, chunky_done};

static void test_cancel_self_inside_chunk(void) {
  llm_server_reset(srv);
  llm_server_rule(srv, NULL, "reply=\"a b c d e f g h\" delay=5");
  for (int k = 0; k < 4; k++) {
    fixture f;
    fixture_init(&f, 1);
    int pending = 1;
    chunky c;
    memset(&c, 0, sizeof c);
    c.cancel_self = 1;
    c.pending = &pending;
    llm_message m;
    llm_request req = one_message(&m, "hi");
    CHECK_INT(llm_call_start(f.ep[k], &req, &chunky_cb, &c, &c.self), AG_OK);
    CHECK_INT(llm_drive_run(f.base, &pending, 10000), 0);
    llm_drive_run_for(f.base, 100);
    CHECK_INT(c.chunks, 1);
    CHECK_INT(c.done, 0);
    fixture_free_idle(&f);
  }
}

static void test_cancel_other_inside_chunk(void) {
  llm_server_reset(srv);
  llm_server_rule(srv, "victim", "reply=\"x y z\" delay=50");
  llm_server_rule(srv, NULL, "reply=\"a b c\"");
  fixture f;
  fixture_init(&f, 1);
  int pending = 2;
  chunky a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  a.pending = b.pending = &pending;
  llm_message mb, ma;
  llm_request rb = one_message(&mb, "victim"), ra = one_message(&ma, "killer");
  CHECK_INT(llm_call_start(f.ep[1], &rb, &chunky_cb, &b, &b.self), AG_OK);
  llm_drive_run_for(f.base, 30); /* b is streaming */
  a.victim = b.self;
  CHECK_INT(llm_call_start(f.ep[0], &ra, &chunky_cb, &a, &a.self), AG_OK);
  CHECK_INT(llm_drive_run(f.base, &pending, 10000), 0);
  llm_drive_run_for(f.base, 200);
  CHECK_INT(a.done, 1);
  CHECK_INT(a.err, AG_OK);
  CHECK_STR(a.text, "a b c");
  CHECK_INT(b.done, 0);
  CHECK(b.chunks <= 1);
  fixture_free_idle(&f);
}

static void test_start_inside_chunk(void) {
  fixture f;
  fixture_on(&f, "echo=1", 1);
  int pending = 1;
  chunky a;
  memset(&a, 0, sizeof a);
  llm_drive_result spawned;
  llm_drive_result_init(&spawned);
  a.pending = &pending;
  a.spawn_on = f.ep[2];
  a.spawned = &spawned;
  a.base = f.base;
  llm_message m;
  llm_request req = one_message(&m, "first one");
  CHECK_INT(llm_call_start(f.ep[3], &req, &chunky_cb, &a, &a.self), AG_OK);
  CHECK_INT(llm_drive_run(f.base, &pending, 10000), 0);
  CHECK_INT(a.done, 1);
  CHECK_STR(a.text, "echo: first one");
  CHECK_INT(spawned.done, 1);
  CHECK_INT(spawned.err, AG_OK);
  CHECK_STR(spawned.text, "echo: spawned");
  llm_drive_result_free(&spawned);
  fixture_free(&f);
}

/* Every on_done cancels all the other calls still in flight: exactly one completes. */
typedef struct race {
  llm_call *calls[20];
  int done[20];
  int total_done;
  int *pending;
} race;

static race the_race;

static void race_done(void *ud, int err, const char *text, const llm_error_info *info) {
  (void)err;
  (void)text;
  (void)info;
  int i = (int)(long)ud;
  the_race.done[i]++;
  the_race.total_done++;
  the_race.calls[i] = NULL;
  for (int j = 0; j < 20; j++) {
    if (the_race.calls[j]) {
      llm_call_cancel(the_race.calls[j]);
      the_race.calls[j] = NULL;
    }
  }
  *the_race.pending = 0;
}

static void test_cancel_others_from_done(void) {
  llm_server_reset(srv);
  llm_server_rule(srv, NULL, "latency=50 reply=same");
  for (int stream = 0; stream < 2; stream++) {
    fixture f;
    fixture_init(&f, stream);
    memset(&the_race, 0, sizeof the_race);
    int pending = 1;
    the_race.pending = &pending;
    llm_callbacks cb = {NULL, race_done};
    llm_message m;
    llm_request req = one_message(&m, "hi");
    for (long i = 0; i < 20; i++) CHECK_INT(llm_call_start(f.ep[i % 4], &req, &cb, (void *)i, &the_race.calls[i]), AG_OK);
    CHECK_INT(llm_drive_run(f.base, &pending, 10000), 0);
    llm_drive_run_for(f.base, 150);
    CHECK_INT(the_race.total_done, 1);
    fixture_free_idle(&f);
  }
}

static void test_cancel_during_backoff(void) {
  fixture f;
  fixture_on(&f, "status=429 retry_after_ms=400", 1);
  llm_drive_result r;
  llm_drive_result_init(&r);
  int pending = 0;
  llm_message m;
  llm_request req = one_message(&m, "hi");
  CHECK_INT(llm_drive_start(f.ep[0], &req, &r, f.base, &pending), AG_OK);
  llm_drive_run_for(f.base, 150); /* the 429 is in, the retry is waiting */
  CHECK_INT(llm_server_request_count(srv), 1);
  llm_call_cancel(r.call);
  llm_drive_run_for(f.base, 500);
  CHECK_INT(r.done, 0);
  CHECK_INT(llm_server_request_count(srv), 1);
  llm_drive_result_free(&r);
  fixture_free(&f);
}

static void test_free_endpoint_and_client_in_flight(void) {
  fixture f;
  fixture_on(&f, "reply=\"a b c d\" delay=30", 1);
  llm_drive_result r[8];
  int pending = 0;
  start_calls(&f, r, 8, &pending);
  llm_drive_run_for(f.base, 50);
  llm_endpoint_free(f.ep[0]); /* its two calls go with it */
  f.ep[0] = NULL;
  CHECK_INT(llm_client_active(f.client), 6);
  llm_drive_run_for(f.base, 20);
  /* Freeing the client cancels the rest. */
  for (int i = 1; i < 4; i++) {
    llm_endpoint_free(f.ep[i]);
    f.ep[i] = NULL;
  }
  CHECK_INT(llm_client_active(f.client), 0);
  llm_drive_run_for(f.base, 200);
  for (int i = 0; i < 8; i++) {
    CHECK_INT(r[i].done, 0);
    llm_drive_result_free(&r[i]);
  }
  fixture_free(&f);
  /* And a client freed with calls in flight, endpoints after. */
  llm_server_reset(srv);
  llm_server_rule(srv, NULL, "latency=200");
  fixture_init(&f, 0);
  start_calls(&f, r, 8, &pending);
  llm_drive_run_for(f.base, 10);
  llm_client_free(f.client);
  f.client = NULL;
  for (int i = 0; i < 8; i++) {
    CHECK_INT(r[i].done, 0);
    llm_drive_result_free(&r[i]);
  }
  event_base_free(f.base);
  for (int i = 0; i < 4; i++) {
    /* llm_endpoint_free would look for calls on the freed client: release the memory directly. */
    llm_config_free(&f.ep[i]->cfg);
    free(f.ep[i]);
  }
}

static void test_200_concurrent_calls(void) {
  llm_server_reset(srv);
  llm_server_rule(srv, NULL, "latency=200 echo=1");
  enum { N = 200 };
  fixture f;
  fixture_init(&f, 1);
  /* Half streamed, half not, across the four providers, all on one client. */
  llm_endpoint *whole[4];
  for (int i = 0; i < 4; i++) {
    llm_config cfg;
    config_for(&cfg, kinds[i], 0);
    CHECK_INT(llm_endpoint_new(f.client, &cfg, &whole[i], NULL), AG_OK);
  }
  static llm_drive_result r[N];
  char text[N][32];
  llm_message m[N];
  int pending = 0;
  for (int i = 0; i < N; i++) {
    snprintf(text[i], sizeof text[i], "call number %d", i);
    llm_request req = one_message(&m[i], text[i]);
    llm_drive_result_init(&r[i]);
    llm_endpoint *e = (i / 4) % 2 ? whole[i % 4] : f.ep[i % 4];
    CHECK_INT(llm_drive_start(e, &req, &r[i], f.base, &pending), AG_OK);
  }
  CHECK_INT(llm_client_active(f.client), N);
  CHECK_INT(llm_drive_run(f.base, &pending, 30000), 0);
  int ok = 0;
  for (int i = 0; i < N; i++) {
    char want[64];
    snprintf(want, sizeof want, "echo: call number %d", i);
    if (r[i].done == 1 && r[i].err == AG_OK && r[i].text && strcmp(r[i].text, want) == 0) ok++;
    else fprintf(stderr, "  call %d: done %d err %d text '%s' %s\n", i, r[i].done, r[i].err, r[i].text, r[i].info.message);
    llm_drive_result_free(&r[i]);
  }
  CHECK_INT(ok, N);
  /* Each call answered once and correctly (above). On a heavily loaded machine a few attempts fail at the
   * connection level and are retried (seen: 204 requests at load 19), so the server may count a few more. */
  size_t seen = llm_server_request_count(srv);
  CHECK(seen >= N && seen <= N + N / 20);
  for (int i = 0; i < 4; i++) llm_endpoint_free(whole[i]);
  fixture_free(&f);
}

static const char *const env[] = {"AGORA_TEST_KEY=sk-test-cancel", "AGORA_LLM_BACKOFF_MS=5", NULL};
SUITE_RUN((UNIT(test_cancel_in_flight), UNIT(test_cancel_self_inside_chunk), UNIT(test_cancel_other_inside_chunk),
  UNIT(test_start_inside_chunk), UNIT(test_cancel_others_from_done), UNIT(test_cancel_during_backoff),
  UNIT(test_free_endpoint_and_client_in_flight), UNIT(test_200_concurrent_calls)), .env = env, .srv = &srv)
