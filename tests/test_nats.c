/* End to end on NATS JetStream (docs/distributed.md), with real nats-server processes started here on
 * loopback (config in a temp dir, free ports, stopped by PID) and the agora binary: two `agora host`
 * processes share a world's agents and `agora run --nats` publishes its script; the transcript equals
 * the single-process run message for message. A host SIGKILLed in the middle of a run: its leases run
 * out, the other host takes its agents and finishes the turns it had started; every question is
 * answered exactly once. Three nodes, three hosts, 300 agents: a host and a node killed and restarted, a
 * node stopped for 10 s, and still every question answered once and every copy the same. A host with
 * --agents leaves no agent without a host. A wrong token or no server: a clear error, exit 2, nothing
 * stored. Every moment a case acts on is observed (leases held, progress printed), never guessed from
 * how long something takes. A world joined in this process, with deliveries queued: test_nats_queue. */
#include "support/llm_server.h"
#include "support/nats_lease.h"
#include "support/nats_proc.h"
#include "support/nats_ring.h"
#include "support/ports.h"
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"
#include "support/wait.h"

#include <cjson/cJSON.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "world/world_file.h"

/* `agora run WORLD --json ...` (given extra environment), stopped after 90 s: a hang fails the case
 * instead of the suite. Its messages as "sender|kind|text" lines (caller frees). */
static char *run_messages_env(const char *world, const char *url, const char *const *env, int *status) {
  const char *single[] = {"run", world, "--no-save", "--json", NULL};
  const char *dist[] = {"run", world, "--no-save", "--json", "--nats", url, NULL};
  static int n;
  char out[64], err[64];
  snprintf(out, sizeof out, "run%d.out", ++n);
  snprintf(err, sizeof err, "run%d.err", n);
  char *po = strdup(nats_ring_path(out)), *pe = strdup(nats_ring_path(err));
  pid_t pid = agora_spawn(url ? dist : single, po, pe, env);
  *status = agora_wait(pid, 90000);
  if (*status < 0) {
    agora_stop(pid, SIGKILL);
    unit_fail_(__FILE__, __LINE__, "run did not end within 90 s (%s)", po);
  }
  char *o = unit_read_file(po), *e = unit_read_file(pe);
  if (*status) fprintf(stderr, "run: %s\n", e ? e : "");
  char *m = o ? proc_messages(o) : NULL;
  free(o), free(e), free(po), free(pe);
  return m;
}

static char *run_messages(const char *world, const char *url, int *status) {
  return run_messages_env(world, url, NULL, status);
}

/* "hosting" lines in an `agora host` stderr: it has caught up with the stream. */
static size_t hosting_printed(const char *err) { return nats_ring_count(err, "agora: hosting world"); }

/* The messages of the one chat stored in TAG.db as "sender|kind|text" lines, with their seqs checked to
 * be 1..n (caller frees). */
static char *stored_messages(const char *tag) {
  char db[64];
  snprintf(db, sizeof db, "%s.db", tag);
  const char *list[] = {"chats", "list", "--db", nats_ring_path(db), "--json", NULL};
  proc_result r;
  if (proc_agora(list, NULL, NULL, &r)) return NULL;
  cJSON *arr = cJSON_Parse(r.out); /* NDJSON: the first chat */
  size_t chats = nats_ring_count(r.out, "\n");
  if (chats != 1) /* failed once under load (0 chats): keep what `chats list` said */
    fprintf(stderr, "  %s: chats list exited %d: %.2000s\n", tag, r.status, r.err ? r.err : "");
  proc_result_free(&r);
  const cJSON *id = cJSON_GetObjectItem(arr, "id");
  char *out = NULL;
  if (chats == 1 && cJSON_IsString(id)) {
    const char *show[] = {"chats", "show", id->valuestring, "--db", nats_ring_path(db), "--json", NULL};
    if (!proc_agora(show, NULL, NULL, &r)) {
      out = proc_messages(r.out);
      long seq = 0;
      for (const char *p = r.out; (p = strstr(p, "\"seq\":")); p += 6)
        if (strtol(p + 6, NULL, 10) != ++seq) unit_fail_(__FILE__, __LINE__, "%s: seq %ld out of place", tag, seq);
      proc_result_free(&r);
    }
  } else {
    unit_fail_(__FILE__, __LINE__, "%s: %zu chats stored", tag, chats);
  }
  cJSON_Delete(arr);
  return out;
}

static void test_two_hosts_match_single(void) {
  nats_node node;
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/one", nats_ring_tmp);
  mkdir(dir, 0700);
  if (nats_start(dir, 1, NULL, &node)) {
    unit_fail_(__FILE__, __LINE__, "nats-server did not start");
    return;
  }
  const char *world = nats_ring_world("ring.json", 10, 12);
  const char *url = nats_url(&node, 0, 1);
  pid_t h1 = nats_ring_start_host(world, url, "h1", NULL), h2 = nats_ring_start_host(world, url, "h2", NULL);
  CHECK(nats_ring_await_leases(url, "ring", "a", 10, 2)); /* both hosts hold leases: five agents each */
  int st1 = -1, st2 = -1;
  char *single = run_messages(world, NULL, &st1), *dist = run_messages(world, url, &st2);
  CHECK_INT(st1, 0);
  CHECK_INT(st2, 0);
  CHECK(single && nats_ring_count(single, "\n") > 24);
  CHECK_STR(dist, single);
  CHECK_INT(agora_stop(h1, SIGTERM), 0);
  CHECK_INT(agora_stop(h2, SIGTERM), 0);
  char *o1 = unit_read_file(nats_ring_path("h1.out")), *o2 = unit_read_file(nats_ring_path("h2.out"));
  /* The work was shared, and each host saw the whole transcript. */
  CHECK(nats_ring_count(o1, "\"llm-start\"") > 0);
  CHECK(nats_ring_count(o2, "\"llm-start\"") > 0);
  /* (a call may be made twice while an agent changes hands; its reply is kept once) */
  CHECK(nats_ring_count(o1, "\"llm-start\"") + nats_ring_count(o2, "\"llm-start\"") >= nats_ring_count(single, "\n") - 12);
  char *m1 = proc_messages(o1), *m2 = proc_messages(o2);
  CHECK_STR(m1, single);
  CHECK_STR(m2, single);
  /* each host's database holds the same copy: the transcript at seqs 1..n */
  char *s1 = stored_messages("h1"), *s2 = stored_messages("h2");
  CHECK_STR(s1, single);
  CHECK_STR(s2, single);
  free(s1), free(s2), free(m1), free(m2), free(o1), free(o2), free(single), free(dist);
  nats_node_stop(&node, SIGTERM);
}

/* Agents on the loopback LLM server, each answer taking 250 ms, so that turns are in flight when a
 * host dies. */
static const char *slow_world(llm_server *srv, int n, int steps, int latency) {
  char t[32768];
  size_t k = (size_t)snprintf(t, sizeof t,
                              "{\"name\": \"Slow\", \"defaults\": {\"provider\": \"openai\", \"model\": \"m\","
                              " \"base_url\": \"%s\", \"system_prompt\": \"[[mock echo=1 latency=%d]]\"},"
                              " \"agents\": [",
                              llm_server_url(srv, "/v1"), latency);
  for (int i = 0; i < n; i++) k += (size_t)snprintf(t + k, sizeof t - k, "%s{\"name\": \"s%d\"}", i ? ", " : "", i);
  k += (size_t)snprintf(t + k, sizeof t - k, "], \"script\": [");
  for (int i = 0; i < steps; i++)
    k += (size_t)snprintf(t + k, sizeof t - k, "%s{\"from\": \"human\", \"text\": \"@s%d question %d\"}",
                          i ? ", " : "", (i * 7) % n, i);
  snprintf(t + k, sizeof t - k, "]}\n");
  static char p[4096];
  snprintf(p, sizeof p, "%s", nats_ring_path("slow.json"));
  unit_write_file(p, t);
  return p;
}

/* Turns s0 and s1 started (LLM calls begun) in a host's output. */
static size_t victim_calls(const char *out) {
  return nats_ring_count(out, "\"agent\":\"s0\",\"provider\"") + nats_ring_count(out, "\"agent\":\"s1\",\"provider\"");
}

/* Every moment is the processes' own observed progress: the survivor starts once the victim holds s0
 * and s1 (were it first, it would keep them), the run once both hold their share, and the kill lands
 * when the victim has answered question 0 (s0) and started question 3 (s1), whose LLM call takes
 * 250 ms: in the middle of a turn, however slow the machine. */
static void test_host_killed(void) {
  llm_server *srv = NULL;
  nats_node node;
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/kill", nats_ring_tmp);
  mkdir(dir, 0700);
  if (llm_server_start(&srv) || nats_start(dir, 1, NULL, &node)) {
    unit_fail_(__FILE__, __LINE__, "servers did not start");
    return;
  }
  const char *world = slow_world(srv, 4, 16, 250);
  const char *url = nats_url(&node, 0, 1);
  int st = -1;
  char *single = run_messages(world, NULL, &st);
  CHECK_INT(st, 0);
  /* a host for s0,s1 that will die, and one for everyone (it takes what is free) */
  pid_t victim = nats_ring_start_host(world, url, "k1", "s0,s1");
  CHECK(nats_ring_await_leases(url, "slow", "s", 2, 1));
  pid_t survivor = nats_ring_start_host(world, url, "k2", NULL);
  CHECK(nats_ring_await_leases(url, "slow", "s", 4, 2));
  const char *args[] = {"run", world, "--no-save", "--json", "--nats", url, NULL};
  pid_t run = agora_spawn(args, nats_ring_path("krun.out"), nats_ring_path("krun.err"), NULL);
  CHECK(nats_ring_await_output("k1.out", victim_calls, 2));
  CHECK_INT(agora_stop(victim, SIGKILL), 128 + SIGKILL);
  int rs = agora_wait(run, 60000);
  if (rs < 0) agora_stop(run, SIGKILL);
  CHECK_INT(rs, 0);
  char *out = unit_read_file(nats_ring_path("krun.out"));
  char *dist = proc_messages(out);
  /* every question answered exactly once, in the same order: the transcript is the single run's */
  CHECK_STR(dist, single);
  char *k2 = unit_read_file(nats_ring_path("k2.out"));
  /* the survivor took s0 and s1 over: it ran the turn the victim had started and the ones after */
  CHECK(victim_calls(k2) > 0);
  CHECK_INT(agora_stop(survivor, SIGTERM), 0);
  free(k2), free(out), free(dist), free(single);
  nats_node_stop(&node, SIGTERM);
  llm_server_stop(srv);
}

/* A host's output file that is to hold a whole transcript. */
typedef struct transcript_goal {
  char out[64];
  const char *want;
} transcript_goal;

static int transcript_shows(void *arg) {
  const transcript_goal *g = arg;
  char *o = unit_read_file(nats_ring_path(g->out)), *m = o ? proc_messages(o) : NULL;
  int same = m && !strcmp(m, g->want);
  free(o), free(m);
  return same;
}

/* Waits up to ms for TAG.out to hold the whole transcript want. */
static int host_caught_up(const char *tag, const char *want, long ms) {
  transcript_goal g = {.want = want};
  snprintf(g.out, sizeof g.out, "%s.out", tag);
  return wait_until_every(transcript_shows, &g, ms, 200);
}

static void test_cluster_faults(void) {
  llm_server *srv = NULL;
  nats_node nodes[3];
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/cluster", nats_ring_tmp);
  mkdir(dir, 0700);
  if (llm_server_start(&srv) || nats_start(dir, 3, NULL, nodes)) {
    unit_fail_(__FILE__, __LINE__, "servers did not start");
    return;
  }
  const char *world = slow_world(srv, 300, 50, 150);
  int st = -1;
  char *single = run_messages(world, NULL, &st);
  CHECK_INT(st, 0);
  char u12[1024], u3[1024], all[1024];
  snprintf(u12, sizeof u12, "%s", nats_url(nodes, 0, 2));
  snprintf(u3, sizeof u3, "%s", nats_url(nodes, 2, 1));
  snprintf(all, sizeof all, "%s", nats_url(nodes, 0, 3));
  pid_t h[3] = {nats_ring_start_host_r(world, u12, "c1", NULL, "3"), nats_ring_start_host_r(world, u12, "c2", NULL, "3"),
                nats_ring_start_host_r(world, u3, "c3", NULL, "3")};
  for (int i = 0; i < 3; i++) { /* each has caught up and answers (the leases move while hosts start) */
    char err[16];
    snprintf(err, sizeof err, "c%d.err", i + 1);
    CHECK(nats_ring_await_output(err, hosting_printed, 1));
  }
  const char *args[] = {"run", world, "--no-save", "--json", "--nats", all, "--nats-replicas", "3", NULL};
  pid_t run = agora_spawn(args, nats_ring_path("crun.out"), nats_ring_path("crun.err"), NULL);
  CHECK(nats_ring_await_output("crun.out", nats_ring_messages_printed, 10)); /* five questions answered: the run is going */
  /* Each fault lands once the run has been seen to go on after the one before (three more questions
   * answered), so every fault falls inside the run however fast or slow the machine is. */
  CHECK_INT(agora_stop(h[0], SIGKILL), 128 + SIGKILL);
  CHECK(nats_ring_await_output("crun.out", nats_ring_messages_printed, 16)); /* its agents' leases ran out and moved */
  h[0] = nats_ring_start_host_r(world, u12, "c1", NULL, "3");
  CHECK(nats_ring_await_output("c1.err", hosting_printed, 1)); /* back, and caught up with the stream */
  nats_node_stop(&nodes[1], SIGKILL);
  CHECK(nats_ring_await_output("crun.out", nats_ring_messages_printed, 22)); /* answered with a node down */
  CHECK_INT(nats_node_start(&nodes[1]), 0);
  CHECK(nats_ring_await_output("crun.out", nats_ring_messages_printed, 28));
  nats_node_stop(&nodes[2], SIGTERM); /* c3 is cut off */
  int rs = agora_wait(run, 10000);
  CHECK_INT(nats_node_start(&nodes[2]), 0);
  if (rs < 0) rs = agora_wait(run, 60000);
  if (rs < 0) agora_stop(run, SIGKILL);
  if (rs != 0) { /* what the run said (a sanitizer report, an abort) belongs in the failure */
    char *err = unit_read_file(nats_ring_path("crun.err"));
    fprintf(stderr, "run --nats exited %d; its stderr:\n%s\n", rs, err ? err : "(none)");
    free(err);
  }
  CHECK_INT(rs, 0);
  char *out = unit_read_file(nats_ring_path("crun.out")), *dist = proc_messages(out);
  CHECK_STR(dist, single); /* every question answered exactly once, in order */
  for (int i = 0; i < 3; i++) {
    char tag[8];
    snprintf(tag, sizeof tag, "c%d", i + 1);
    CHECK(host_caught_up(tag, single, 30000));
    int hs = agora_stop(h[i], SIGTERM);
    if (hs != 0) { /* what the host said (an abort message, a sanitizer report) belongs in the failure */
      char name[16];
      snprintf(name, sizeof name, "%s.err", tag);
      char *err = unit_read_file(nats_ring_path(name));
      fprintf(stderr, "host %s exited %d; its stderr ends:\n%s\n", tag, hs,
              err ? err + (strlen(err) > 4000 ? strlen(err) - 4000 : 0) : "(none)");
      free(err);
    }
    CHECK_INT(hs, 0);
    char *stored = stored_messages(tag);
    CHECK_STR(stored, single); /* every host's database holds the same copy */
    free(stored);
  }
  free(out), free(dist), free(single);
  for (int i = 0; i < 3; i++) nats_node_stop(&nodes[i], SIGTERM);
  llm_server_stop(srv);
}

/* A host with --agents takes no share: the other hosts share out everything it does not hold. Counted
 * as a live host, it shrank their share (ceil(4 / 2) = 2 here) and an agent only they may take had no
 * host: its question was never answered. */
static void test_listed_host_not_counted(void) {
  nats_ring_one one;
  if (nats_ring_one_node("listed", &one)) return;
  const char *world = nats_ring_world("listed.json", 4, 4);
  pid_t l1 = nats_ring_start_host(world, one.url, "l1", "a0");
  CHECK(nats_ring_await_leases(one.url, "ring", "a", 1, 1));
  pid_t l2 = nats_ring_start_host(world, one.url, "l2", NULL);
  CHECK(nats_ring_await_leases(one.url, "ring", "a", 4, 2)); /* a0 on l1, a1..a3 on l2 */
  int st1 = -1, st2 = -1;
  char *single = run_messages(world, NULL, &st1), *dist = run_messages(world, one.url, &st2);
  CHECK_INT(st2, 0);
  CHECK_STR(dist, single);
  free(single), free(dist);
  CHECK_INT(agora_stop(l1, SIGTERM), 0);
  CHECK_INT(agora_stop(l2, SIGTERM), 0);
  nats_node_stop(&one.node, SIGTERM);
}

static void test_refused(void) {
  nats_node node;
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/auth", nats_ring_tmp);
  mkdir(dir, 0700);
  if (nats_start(dir, 1, "authorization { token: \"right-token-123\" }", &node)) {
    unit_fail_(__FILE__, __LINE__, "nats-server did not start");
    return;
  }
  const char *world = nats_ring_world("auth.json", 2, 1), *url = nats_url(&node, 0, 1);
  const char *wrong[] = {"AGORA_NATS_TOKEN=wrong-token-456", NULL};
  const char *host[] = {"host", world, "--nats", url, NULL};
  proc_result r;
  CHECK_INT(proc_agora(host, NULL, wrong, &r), 0);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "cannot connect to NATS at") != NULL);
  CHECK(strstr(r.err, "wrong-token-456") == NULL);
  proc_result_free(&r);
  /* run with a database: nothing is written when it cannot join */
  const char *db = nats_ring_path("authdb");
  const char *run[] = {"run", world, "--db", db, "--nats", url, NULL};
  CHECK_INT(proc_agora(run, NULL, wrong, &r), 0);
  CHECK_INT(r.status, 2);
  proc_result_free(&r);
  CHECK(access(db, F_OK) != 0);
  /* the right token works */
  const char *right[] = {"AGORA_NATS_TOKEN=right-token-123", NULL};
  pid_t h = agora_spawn(host, nats_ring_path("auth.out"), nats_ring_path("auth.err"), right);
  int st = -1;
  char *msgs = run_messages_env(world, url, right, &st);
  CHECK_INT(st, 0);
  CHECK(msgs && strstr(msgs, "a0|agent|@a1 relay from a0\n") != NULL);
  free(msgs);
  CHECK_INT(agora_stop(h, SIGTERM), 0);
  nats_node_stop(&node, SIGTERM);
  /* the server stopped: exit 2 at once */
  PROC_REFUSED(host, NULL, "cannot connect to NATS at", NULL);
}

/* A nats-server started without JetStream: joining fails (exit 2), and only then is the person asked
 * whether JetStream is enabled (test_nats_peers' starting cluster must not be). */
static void test_no_jetstream(void) {
  nats_node node = {.port = ports_free()};
  snprintf(node.conf, sizeof node.conf, "%s", nats_ring_path("nojs.conf"));
  snprintf(node.log, sizeof node.log, "%s", nats_ring_path("nojs.log"));
  char conf[64];
  snprintf(conf, sizeof conf, "listen: 127.0.0.1:%d\n", node.port);
  unit_write_file(node.conf, conf);
  if (node.port < 0 || nats_node_start(&node)) {
    unit_fail_(__FILE__, __LINE__, "nats-server without JetStream did not start");
    return;
  }
  const char *run[] = {"run", nats_ring_world("nojs.json", 1, 1), "--nats", nats_url(&node, 0, 1), "--no-save", NULL};
  PROC_REFUSED(run, NULL, "JetStream stream", "(is JetStream enabled on the server?)");
  nats_node_stop(&node, SIGTERM);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {
    {"two_hosts_match_single", test_two_hosts_match_single}, {"host_killed", test_host_killed},
    {"refused", test_refused}, {"listed_host_not_counted", test_listed_host_not_counted},
    {"cluster_faults", test_cluster_faults}, {"no_jetstream", test_no_jetstream},
  };
  if (!nats_available()) {
    fprintf(stderr, "nats-server is not installed (apt-get install nats-server)\n");
    return 1;
  }
  return suite_main(argc, argv, &(suite){SUITE_TESTS(tests), .tmp = &nats_ring_tmp, .no_sigpipe = 1});
}
