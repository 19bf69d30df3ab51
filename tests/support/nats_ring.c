/* The NATS end-to-end tests' shared helpers (see nats_ring.h), moved from test_nats.c when it was split. */
#include "support/nats_ring.h"

#include "support/nats_lease.h"
#include "support/suite.h"
#include "support/unit.h"
#include "support/wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char *nats_ring_tmp;

const char *nats_ring_path(const char *name) { return suite_file(nats_ring_tmp, name, NULL); }

/* n scripted agents a0..a(n-1): a human message to ak makes a relay around the ring (each agent's first
 * reply passes it on), then answers go back to the human; steps human messages, one agent each, so
 * the order is the same in every run however the agents are spread. */
const char *nats_ring_world(const char *name, int n, int steps) {
  size_t cap = 4096 + (size_t)n * 512 + (size_t)steps * 128;
  char *t = malloc(cap);
  size_t k = (size_t)snprintf(t, cap, "{\"name\": \"Ring\", \"defaults\": {\"provider\": \"script\"}, \"agents\": [");
  for (int i = 0; i < n; i++)
    k += (size_t)snprintf(t + k, cap - k,
                          "%s{\"name\": \"a%d\", \"replies\": [\"@a%d relay from a%d\", \"@human answer 2 of a%d\","
                          " \"@human answer 3 of a%d\", \"@human answer 4 of a%d\"]}",
                          i ? ", " : "", i, (i + 1) % n, i, i, i, i);
  k += (size_t)snprintf(t + k, cap - k, "], \"script\": [");
  for (int i = 0; i < steps; i++)
    k += (size_t)snprintf(t + k, cap - k, "%s{\"from\": \"human\", \"text\": \"@a%d question %d\"}", i ? ", " : "",
                          (i * 7) % n, i);
  snprintf(t + k, cap - k, "]}\n");
  static char p[2][4096];
  static int which;
  which = !which;
  snprintf(p[which], sizeof p[which], "%s", nats_ring_path(name));
  unit_write_file(p[which], t);
  free(t);
  return p[which];
}

size_t nats_ring_count(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = hay; p && (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

/* Waits (polling; 60 s, stretched on slow builds) until agents PREFIX0..PREFIX(n-1) of world each have a lease, held by
 * hosts hosts in all: what a case needs to have happened before it goes on, observed rather than
 * guessed from how long a host takes to start (much longer under load). */
int nats_ring_await_leases(const char *url, const char *world, const char *prefix, int n, int hosts) {
  int done = nats_lease_wait(url, world, prefix, n, hosts, 60000);
  if (!done) unit_fail_(__FILE__, __LINE__, "%s: agents %s* not held by %d hosts within 60 s", world, prefix, hosts);
  return done;
}

/* Waits (polling; at most 60 s) until measure(NAME's text) reaches min: a process's own printed
 * progress, the moment a case acts on. */
int nats_ring_await_output(const char *name, size_t (*measure)(const char *), size_t min) {
  for (long long end = now_ms() + wait_budget_ms(60000); now_ms() < end;) {
    char *o = unit_read_file(nats_ring_path(name));
    size_t got = o ? measure(o) : 0;
    free(o);
    if (got >= min) return 1;
    wait_nap_ms(20); /* a poll of the process's progress, not the moment itself */
  }
  unit_fail_(__FILE__, __LINE__, "%s: no progress to %zu within 60 s", name, min);
  return 0;
}

/* Messages in an `agora ... --json` output. */
size_t nats_ring_messages_printed(const char *out) { return nats_ring_count(out, "{\"type\":\"message\""); }

/* `agora host` with its output in TAG.out, TAG.err and its database in TAG.db; only agents (when not
 * NULL). */
pid_t nats_ring_start_host_r(const char *world, const char *url, const char *tag, const char *agents, const char *replicas) {
  char out[64], err[64], db[64];
  snprintf(out, sizeof out, "%s.out", tag);
  snprintf(err, sizeof err, "%s.err", tag);
  snprintf(db, sizeof db, "%s.db", tag);
  const char *args[] = {"host", world, "--nats", url, "--lease-ms", "900", "--json", "--nats-replicas", replicas,
                        "--db", nats_ring_path(db), agents ? "--agents" : NULL, agents, NULL};
  return agora_spawn(args, nats_ring_path(out), nats_ring_path(err), NULL);
}

pid_t nats_ring_start_host(const char *world, const char *url, const char *tag, const char *agents) {
  return nats_ring_start_host_r(world, url, tag, agents, "1");
}

/* One nats-server in TMP/SUB; its URL in url. -1 (the case failed) when it does not start. */
int nats_ring_one_node(const char *sub, nats_ring_one *one) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/%s", nats_ring_tmp, sub);
  mkdir(dir, 0700);
  if (nats_start(dir, 1, NULL, &one->node)) {
    unit_fail_(__FILE__, __LINE__, "nats-server did not start");
    return -1;
  }
  snprintf(one->url, sizeof one->url, "%s", nats_url(&one->node, 0, 1));
  return 0;
}
