/* A world on NATS JetStream (docs/distributed.md) against the in-process bus, with a nats-server started
 * here on loopback: (1) the added cost per message — a human message published and delivered back,
 * one at a time (latency) and 1,000 at once (throughput); (2) 1,000 agents spread over three
 * `agora host` processes answering one public message from the loopback LLM server at 200 ms, as a ratio
 * to one agent answering; (3) failover: a host holding one agent is SIGKILLed and that agent is asked at
 * once: time until its answer comes from the surviving host. Usage: bench_nats AGORA_BIN [runs] [messages]
 * ("messages": (1) only). */
#include "cluster/cluster.h"
#include "support/bench_stat.h"
#include "support/llm_server.h"
#include "support/nats_lease.h"
#include "support/nats_proc.h"
#include "support/unit.h"
#include "world/world.h"

#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static char *tmp;
static const char *url;

typedef struct counter {
  int replies, messages;
  const char *from; /* count replies from this agent only (NULL: any) */
} counter;

static void on_msg(void *ud, bus_topic topic, void *payload) {
  counter *c = ud;
  ag_msg *m = payload;
  if (topic != BUS_MESSAGE) return;
  c->messages++;
  if (m->kind == AG_KIND_AGENT && (!c->from || !strcmp(c->from, m->sender))) c->replies++;
}

/* A publisher world (nats: joined to the stream, hosting nothing) counting what it is delivered. */
static world *make_world(struct event_base *base, const char *json, int nats, cluster **cl, counter *cnt) {
  world_spec spec;
  ag_errmsg em = {""};
  world *w = NULL;
  if (world_spec_parse(json, strlen(json), "bench", &spec, &em) || world_new(base, &spec, &w, &em)) {
    fprintf(stderr, "%s\n", em.text);
    exit(1);
  }
  world_spec_free(&spec);
  bus_subscribe(world_bus(w), BUS_MESSAGE, BUS_PHASE_OUTPUT, on_msg, cnt, NULL);
  if (nats) {
    cluster_opts o = {.url = url, .replicas = 1, .lease_ms = 3000};
    if (cluster_open(w, &o, cl, &em) || cluster_wait_ready(*cl, 30000, &em) || cluster_use_chat(*cl, NULL)) {
      fprintf(stderr, "nats: %s\n", em.text);
      exit(1);
    }
  }
  return w;
}

/* (1) µs per message: n sequential round trips, then n at once. */
static void per_message(int nats, int n, double *seq_us, double *burst_us) {
  static const char json[] = "{\"name\": \"solo\", \"agents\": [{\"name\": \"quiet\", \"replies\": [\"x\"]}]}";
  struct event_base *base = event_base_new();
  cluster *cl = NULL;
  counter cnt = {0, 0, NULL};
  world *w = make_world(base, json, nats, &cl, &cnt);
  cnt.messages = 0; /* joining replays the earlier runs' chats: not counted */
  double t0 = bench_now_s();
  for (int i = 0; i < n; i++) {
    world_publish(w, "human", "@human nothing for the agents", NULL);
    world_run_until_quiet(w);
  }
  double t1 = bench_now_s();
  for (int i = 0; i < n; i++) world_publish(w, "human", "@human nothing for the agents", NULL);
  world_run_until_quiet(w);
  double t2 = bench_now_s();
  if (cnt.messages != 2 * n) fprintf(stderr, "per_message: %d of %d delivered\n", cnt.messages, 2 * n);
  *seq_us = (t1 - t0) * 1e6 / n;
  *burst_us = (t2 - t1) * 1e6 / n;
  cluster_free(cl);
  world_free(w);
  event_base_free(base);
}

static const char *agents_world(llm_server *srv, int n, const char *name) {
  size_t cap = (size_t)n * 40 + 1024;
  char *t = malloc(cap);
  size_t k = (size_t)snprintf(t, cap,
                              "{\"name\": \"%s\", \"turn_limit\": 1, \"defaults\": {\"provider\": \"openai\", \"model\": \"m\","
                              " \"base_url\": \"%s\", \"system_prompt\": \"[[mock reply=ok latency=200]]\"}, \"agents\": [",
                              name, llm_server_url(srv, "/v1"));
  for (int i = 0; i < n; i++) k += (size_t)snprintf(t + k, cap - k, "%s{\"name\": \"g%d\"}", i ? ", " : "", i);
  snprintf(t + k, cap - k, "]}");
  static char path[4096];
  snprintf(path, sizeof path, "%s/%s.json", tmp, name);
  unit_write_file(path, t);
  return path;
}

static pid_t host(const char *world, const char *tag, const char *agents) {
  char out[4200], err[4200];
  snprintf(out, sizeof out, "%s/%s.out", tmp, tag);
  snprintf(err, sizeof err, "%s/%s.err", tmp, tag);
  const char *args[] = {"host", world, "--nats", url, agents ? "--agents" : NULL, agents, NULL};
  return agora_spawn(args, out, err, NULL);
}

/* (2) ms from publish until n replies are delivered to the publisher, the agents on hosts processes. */
static double fan_out(llm_server *srv, int n, int hosts, const char *name) {
  const char *path = agents_world(srv, n, name);
  char *json = unit_read_file(path);
  pid_t pids[3];
  for (int i = 0; i < hosts; i++) {
    char tag[32];
    snprintf(tag, sizeof tag, "%s-h%d", name, i);
    pids[i] = host(path, tag, NULL);
  }
  /* every agent held, by every host (observed, not guessed from how long a host takes to start) */
  if (!nats_lease_wait(url, name, "g", n, hosts, 60000)) fprintf(stderr, "fan_out: leases not spread in time\n");
  struct event_base *base = event_base_new();
  cluster *cl = NULL;
  counter cnt = {0, 0, NULL};
  world *w = make_world(base, json, 1, &cl, &cnt);
  double t0 = bench_now_s();
  world_publish(w, "human", "hello everyone", NULL);
  world_run_until_quiet(w);
  double ms = (bench_now_s() - t0) * 1e3;
  if (cnt.replies != n) fprintf(stderr, "fan_out: %d of %d replies\n", cnt.replies, n);
  cluster_free(cl);
  world_free(w);
  event_base_free(base);
  free(json);
  for (int i = 0; i < hosts; i++) agora_stop(pids[i], SIGTERM);
  return ms;
}

/* (3) ms from SIGKILL of the host holding g0 until g0's answer, asked at the kill. */
static double failover(llm_server *srv, const char *name) {
  const char *path = agents_world(srv, 4, name);
  char *json = unit_read_file(path);
  /* a first, so that it holds g0 (b, started with it, often took g0 first and nothing failed over) */
  pid_t a = host(path, "fa", "g0");
  if (!nats_lease_wait(url, name, "g", 1, 1, 60000)) fprintf(stderr, "failover: g0 not held in time\n");
  pid_t b = host(path, "fb", NULL);
  if (!nats_lease_wait(url, name, "g", 4, 2, 60000)) fprintf(stderr, "failover: leases not spread in time\n");
  struct event_base *base = event_base_new();
  cluster *cl = NULL;
  counter cnt = {0, 0, "g0"};
  world *w = make_world(base, json, 1, &cl, &cnt);
  double t0 = bench_now_s();
  agora_stop(a, SIGKILL);
  world_publish(w, "human", "@g0 are you there?", NULL);
  world_run_until_quiet(w);
  double ms = (bench_now_s() - t0) * 1e3;
  if (cnt.replies != 1) fprintf(stderr, "failover: %d replies from g0\n", cnt.replies);
  cluster_free(cl);
  world_free(w);
  event_base_free(base);
  free(json);
  agora_stop(b, SIGTERM);
  return ms;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_nats AGORA_BIN [runs] [messages]\n");
    return 2;
  }
  setenv("AGORA_BIN", argv[1], 1);
  int runs = argc > 2 ? atoi(argv[2]) : 3, only_messages = argc > 3 && !strcmp(argv[3], "messages");
  if (runs < 1 || runs > 50) runs = 3;
  unit_raise_fd_limit();
  tmp = unit_tmpdir();
  nats_node node;
  llm_server *srv = NULL;
  if (cluster_lib_open() || nats_start(tmp, 1, NULL, &node) || llm_server_start(&srv)) {
    fprintf(stderr, "cannot start nats-server or the LLM server\n");
    return 1;
  }
  llm_server_set_recording(srv, 0);
  static char u[256];
  snprintf(u, sizeof u, "%s", nats_url(&node, 0, 1));
  url = u;
  double ls[50], bs[50], ln[50], bn[50], one[50], fan[50], fail[50];
  for (int r = 0; r < runs; r++) {
    per_message(0, 1000, &ls[r], &bs[r]);
    per_message(1, 1000, &ln[r], &bn[r]);
    if (only_messages) continue;
    char name[32];
    snprintf(name, sizeof name, "one%d", r);
    one[r] = fan_out(srv, 1, 1, name);
    snprintf(name, sizeof name, "fan%d", r);
    fan[r] = fan_out(srv, 1000, 3, name);
    snprintf(name, sizeof name, "fail%d", r);
    fail[r] = failover(srv, name);
  }
  printf("| scenario | min | median | max | unit |\n|---|---|---|---|---|\n");
  bench_row("message round trip, in-process", "µs", ls, runs);
  bench_row("message round trip, NATS (publish → stream → delivered)", "µs", ln, runs);
  bench_row("1,000 messages at once, in-process, per message", "µs", bs, runs);
  bench_row("1,000 messages at once, NATS, per message", "µs", bn, runs);
  double ratio[50];
  for (int r = 0; r < runs && !only_messages; r++) ratio[r] = fan[r] / one[r];
  if (!only_messages) {
    bench_row("one agent answers (200 ms LLM), NATS, 1 host", "ms", one, runs);
    bench_row("1,000 agents on 3 hosts answer one message (200 ms LLM)", "ms", fan, runs);
    bench_row("… as a ratio to one agent", "×", ratio, runs);
    bench_row("failover: SIGKILL → the orphaned agent answers (lease 3 s)", "ms", fail, runs);
  }
  llm_server_stop(srv);
  nats_node_stop(&node, SIGTERM);
  cluster_lib_close();
  unit_rmrf(tmp);
  free(tmp);
  return 0;
}
