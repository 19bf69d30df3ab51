/* A world joined to NATS JetStream in this process (cluster/cluster.h) while deliveries wait for its
 * loop, with real nats-server processes on loopback and `agora host`: the replies and turn ends of a
 * whole relay reaching a held-up publisher in one batch, and a process leaving with deliveries queued
 * or still pouring in (libnats' threads running). The agora processes among themselves: test_nats. */
#include "cluster/cluster.h"
#include "support/nats_proc.h"
#include "support/nats_ring.h"
#include "support/suite.h"
#include "support/unit.h"
#include "support/wait.h"

#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "world/world_file.h"

/* A world (json) joined to the stream in this process, hosting nothing; NULL when it cannot join. */
static world *joined_world(struct event_base *base, const char *url, const char *json, cluster **cl, int wait) {
  world_spec spec;
  ag_errmsg em = {""};
  world *w = NULL;
  if (world_spec_parse(json, strlen(json), "queue", &spec, &em)) return NULL;
  int rc = world_new(base, &spec, &w, &em);
  world_spec_free(&spec);
  cluster_opts o = {.url = url, .replicas = 1, .lease_ms = 3000};
  if (!rc) rc = cluster_open(w, &o, cl, &em);
  if (!rc && wait) rc = cluster_wait_ready(*cl, 30000, &em);
  if (rc) fprintf(stderr, "joined_world: %s\n", em.text);
  if (rc && w) world_free(w), w = NULL;
  return w;
}

static const char queue_json[] =
  "{\"name\": \"Queue\", \"agents\": [{\"name\": \"quiet\", \"replies\": [\"x\"]}]}";

static void count_replies(void *ud, bus_topic topic, void *payload) {
  if (topic == BUS_MESSAGE && ((ag_msg *)payload)->kind == AG_KIND_AGENT) ++*(int *)ud;
}

static void interrupt_world(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  world_interrupt(arg);
}

/* A publisher whose loop was held up while a host answered a whole relay (three agents): the replies
 * and the turns' ends reach it in one batch. Each end must wait until the bus has delivered the message
 * before it, which starts the turn it ends; acting on it at once left that turn waiting for an end
 * already gone, and `run --nats` hung (seen under load). */
static void test_records_in_one_batch(void) {
  nats_ring_one one;
  if (nats_ring_one_node("batch", &one)) return;
  const char *path = nats_ring_world("batch.json", 3, 1);
  pid_t h = nats_ring_start_host(path, one.url, "b1", NULL);
  CHECK(nats_ring_await_leases(one.url, "ring", "a", 3, 1)); /* the host holds the three leases */
  char *json = unit_read_file(path);
  struct event_base *base = event_base_new();
  cluster *cl = NULL;
  world *w = json ? joined_world(base, one.url, json, &cl, 1) : NULL;
  CHECK(w != NULL);
  if (w) {
    int replies = 0;
    bus_subscribe(world_bus(w), BUS_MESSAGE, BUS_PHASE_OUTPUT, count_replies, &replies, NULL);
    CHECK_INT(cluster_use_chat(cl, NULL), 0);
    CHECK_INT(world_publish(w, "human", "@a0 question 0", NULL), 0); /* sent at once, by this thread */
    /* meanwhile a0 -> a1 -> a2 -> a0 -> human, with the loop held up: the host printed all five */
    CHECK(nats_ring_await_output("b1.out", nats_ring_messages_printed, 5));
    struct timeval guard = {20, 0};
    struct event *t = evtimer_new(base, interrupt_world, w);
    evtimer_add(t, &guard);
    CHECK_INT(world_run_until_quiet(w), 0); /* AG_ERR_CANCELLED: still waiting after 20 s */
    event_free(t);
    CHECK_INT(replies, 4);
    cluster_free(cl);
    world_free(w);
  }
  event_base_free(base);
  free(json);
  CHECK_INT(agora_stop(h, SIGTERM), 0);
  nats_node_stop(&one.node, SIGTERM);
}

/* A world joins, publishes n human messages nobody answers and leaves: the stream holds n records. */
static void fill_stream(const char *url, int n) {
  struct event_base *base = event_base_new();
  cluster *cl = NULL;
  world *w = joined_world(base, url, queue_json, &cl, 1);
  CHECK(w != NULL);
  if (w) {
    CHECK_INT(cluster_use_chat(cl, NULL), 0);
    for (int i = 0; i < n; i++) world_publish(w, "human", "@human nobody answers", NULL);
    CHECK_INT(world_run_until_quiet(w), 0);
    cluster_free(cl);
    world_free(w);
  }
  event_base_free(base);
}

/* What the relay holds, waiting for a loop that does not turn. */
static size_t queued(void *cl) { return cluster_pending(cl); }

/* A process leaving while deliveries wait for its loop (the relay holds them): each is destroyed while
 * libnats still runs. Destroying them after nats_CloseAndWait crashed `run --nats` and `host` now and
 * then at exit (SIGSEGV; a silent abort under ASan: libnats' mutex, destroyed, refuses to lock). */
static void test_leave_with_deliveries_queued(void) {
  nats_ring_one one;
  if (nats_ring_one_node("queued", &one)) return;
  fill_stream(one.url, 300);
  struct event_base *base = event_base_new();
  cluster *cl = NULL;
  /* A second process's world joins and, its loop never running, leaves with the 300 records queued. */
  world *w = joined_world(base, one.url, queue_json, &cl, 0);
  CHECK(w != NULL);
  if (w) {
    CHECK(wait_count(queued, cl, 300, 30000)); /* the 300 records wait for the loop */
    cluster_free(cl);
    world_free(w);
  }
  event_base_free(base);
  nats_node_stop(&one.node, SIGTERM);
}

/* Leaving while the stream's records pour in, many times over. libnats 3.4 aborts (a lock on a freed
 * subscription's mutex) when a subscription is destroyed while its reading thread handles a delivery
 * (nats.c issue 637); cluster_free closed the connection after destroying it, and a host stopped by
 * SIGTERM in CI died so. With the old order this case aborted or segfaulted in 3 runs of 3. */
static void test_leave_while_delivering(void) {
  nats_ring_one one;
  if (nats_ring_one_node("leaving", &one)) return;
  fill_stream(one.url, 2000);
  unsigned seed = 7;
  for (int round = 0; round < 150; round++) {
    struct event_base *base = event_base_new();
    cluster *cl = NULL;
    world *w = joined_world(base, one.url, queue_json, &cl, 0); /* the 2,000 records start coming at once */
    if (!w) {
      CHECK(w != NULL);
      event_base_free(base);
      break;
    }
    seed = seed * 1103515245u + 12345u;
    /* leave at a point of the delivery drawn anew each round: once the relay holds that many records */
    CHECK(wait_count(queued, cl, (seed >> 16) % 2000, 30000));
    cluster_free(cl);
    world_free(w);
    event_base_free(base);
  }
  nats_node_stop(&one.node, SIGTERM);
}

/* Three nodes (R3), three hosts, 300 agents, 50 questions; meanwhile a host is SIGKILLed and started again,
 * a node is SIGKILLed and started again, and the third host's only node is stopped for 10 s. */

/* The parked hand-over queues are freed: LeakSanitizer sees what is left. */
static void close_lib(void) { CHECK_INT(cluster_lib_close(), AG_OK); }

int main(int argc, char **argv) {
  static const unit_test tests[] = {
    {"leave_with_deliveries_queued", test_leave_with_deliveries_queued},
    {"records_in_one_batch", test_records_in_one_batch}, {"leave_while_delivering", test_leave_while_delivering},
  };
  if (!nats_available()) {
    fprintf(stderr, "nats-server is not installed (apt-get install nats-server)\n");
    return 1;
  }
  return suite_main(argc, argv, &(suite){SUITE_TESTS(tests), .tmp = &nats_ring_tmp, .no_sigpipe = 1, .after = close_lib});
}
