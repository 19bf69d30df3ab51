/* What the NATS end-to-end tests on the agora binary (test_nats, test_nats_queue) share: their scratch
 * directory, a ring world of scripted agents, `agora host` started on it, and waits on what is observed
 * (leases held, progress printed), never on how long something takes. */
#ifndef AG_TEST_NATS_RING_H
#define AG_TEST_NATS_RING_H

#include <stddef.h>
#include <sys/types.h>

#include "support/nats_proc.h"

/* The suite's scratch directory: a test file hands it to suite_main (.tmp = &nats_ring_tmp). */
extern char *nats_ring_tmp;

/* name in the scratch directory (one of suite_file's rotating static buffers). */
const char *nats_ring_path(const char *name);

/* n scripted agents a0..a(n-1): a human message to ak makes a relay around the ring (each agent's first
 * reply passes it on), then answers go back to the human; steps human messages, one agent each, so
 * the order is the same in every run however the agents are spread. The world file's path (one of two
 * static buffers). */
const char *nats_ring_world(const char *name, int n, int steps);

/* How many times needle occurs in hay (NULL: none), not overlapping. */
size_t nats_ring_count(const char *hay, const char *needle);

/* Waits (polling; at most 60 s) until agents PREFIX0..PREFIX(n-1) of world each have a lease, held by
 * hosts hosts in all; 1 when they do (else the test failed). */
int nats_ring_await_leases(const char *url, const char *world, const char *prefix, int n, int hosts);
/* Waits (polling; at most 60 s) until measure(NAME's text) reaches min; 1 when it does. */
int nats_ring_await_output(const char *name, size_t (*measure)(const char *), size_t min);
/* Messages in an `agora ... --json` output. */
size_t nats_ring_messages_printed(const char *out);

/* `agora host` with its output in TAG.out, TAG.err and its database in TAG.db; only agents (when not
 * NULL); the stream's replicas (nats_ring_start_host: "1"). */
pid_t nats_ring_start_host_r(const char *world, const char *url, const char *tag, const char *agents,
                             const char *replicas);
pid_t nats_ring_start_host(const char *world, const char *url, const char *tag, const char *agents);

/* A case's one nats-server and its URL. */
typedef struct nats_ring_one {
  nats_node node;
  char url[256];
} nats_ring_one;

/* One nats-server in TMP/SUB, in *one. -1 (the case failed) when it does not start. */
int nats_ring_one_node(const char *sub, nats_ring_one *one);

#endif
