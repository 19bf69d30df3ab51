/* libagora as a host on NATS (API version 5: AGORA_HOST, agora_run_until_interrupt), against a real
 * nats-server: a host world runs on a thread of its own until a tick sees the stop flag, while a publisher
 * world in the same process runs the script; the host's agent answers and both see the reply. */
#include "agora.h"
#include "support/nats_proc.h"
#include "support/unit.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char duo[] =
  "{\"name\": \"libhost\", \"agents\": [{\"name\": \"a0\", \"replies\": [\"@human a0 here\"]}],"
  " \"script\": [{\"from\": \"human\", \"text\": \"@a0 hello\"}]}";

typedef struct host_run {
  const char *url;
  atomic_int stop;   /* the main thread's "signal" */
  int opened;        /* agora_world_open's result, -100 until known */
  int ran;           /* agora_run_until_interrupt's result */
  int replies;       /* a0's messages the host printed */
  int chat_none;     /* no chat current without a database */
  pthread_mutex_t mu;
  pthread_cond_t cv;
} host_run;

static void count_reply(const agora_event *ev, void *ctx) {
  const char *s = agora_event_sender(ev);
  if (s && !strcmp(s, "a0")) ++*(int *)ctx;
}

static void host_tick(agora_world *w, void *ctx) {
  if (atomic_load(&((host_run *)ctx)->stop)) agora_interrupt(w);
}

static void *host_main(void *arg) {
  host_run *h = arg;
  agora_world *w = NULL;
  agora_options o = {.flags = AGORA_OPTIONS_3 | AGORA_OPTIONS_4 | AGORA_OPTIONS_5 | AGORA_HOST | AGORA_NO_SAVE,
                     .nats_url = h->url, .nats_lease_ms = 900, .nats_agents = "a0", .on_event = count_reply,
                     .on_event_ctx = &h->replies};
  int rc = agora_world_open(duo, NULL, &o, &w);
  pthread_mutex_lock(&h->mu);
  h->opened = rc;
  pthread_cond_signal(&h->cv);
  pthread_mutex_unlock(&h->mu);
  if (rc) return NULL;
  h->chat_none = agora_chat_current(w) == NULL;
  agora_tick(w, 20, host_tick, h);
  h->ran = agora_run_until_interrupt(w);
  agora_world_close(w);
  return NULL;
}

static void a_host_answers_a_publisher(void) {
  char *dir = unit_tmpdir();
  nats_node node;
  if (nats_start(dir, 1, NULL, &node)) {
    unit_fail_(__FILE__, __LINE__, "nats-server did not start");
    return;
  }
  host_run h = {.url = nats_url(&node, 0, 1), .opened = -100, .mu = PTHREAD_MUTEX_INITIALIZER,
                .cv = PTHREAD_COND_INITIALIZER};
  pthread_t t;
  CHECK_INT(pthread_create(&t, NULL, host_main, &h), 0);
  pthread_mutex_lock(&h.mu);
  while (h.opened == -100) pthread_cond_wait(&h.cv, &h.mu); /* joined, its lease asked for */
  pthread_mutex_unlock(&h.mu);
  CHECK_INT(h.opened, AGORA_OK);
  agora_world *p = NULL;
  int seen = 0;
  agora_options po = {.flags = AGORA_OPTIONS_3 | AGORA_OPTIONS_4 | AGORA_NO_SAVE, .nats_url = h.url,
                      .on_event = count_reply, .on_event_ctx = &seen};
  if (!h.opened) CHECK_INT(agora_world_open(duo, NULL, &po, &p), AGORA_OK);
  /* the step waits until a0 has answered in some host: this process's host thread */
  if (p) CHECK_INT(agora_script_step(p, 0), AGORA_OK);
  agora_world_close(p);
  atomic_store(&h.stop, 1);
  pthread_join(t, NULL);
  CHECK_INT(seen, 1);
  CHECK_INT(h.ran, AGORA_OK);
  CHECK_INT(h.replies, 1);
  CHECK(h.chat_none);
  nats_node_stop(&node, SIGTERM);
  unit_rmrf(dir);
  free(dir);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {UNIT(a_host_answers_a_publisher)};
  if (!nats_available()) {
    fprintf(stderr, "nats-server is not installed (apt-get install nats-server)\n");
    return 1;
  }
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
