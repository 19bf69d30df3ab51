/* Worlds of many agents (issue 22): finding an agent by name or id keeps exactly the rule of the scan it
 * replaced (its id, or its name but for ASCII case) and costs the same in a world of any size; a world
 * file over the old 16 MiB cap loads, and one over the cap is refused before it is read, with an error
 * naming the file and the limit; a public message's replies reach the bus in batches, and the memory its
 * fan-out needs can be reserved at load. */
#include "support/bench_stat.h"
#include "support/suite.h"
#include "support/tworld.h"
#include "support/unit.h"

#include "agents/mention.h"
#include "common/defer.h"
#include "common/heap.h"
#include "world/world.h"
#include "world/world_file.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

/* The lookup as it was: a scan, by id or by name but for ASCII case; the first match wins. */
static agent *find_by_scan(const world *w, const char *name_or_id) {
  char id[MENTION_ID_MAX] = "";
  mention_id_from_name(name_or_id, id, sizeof id);
  for (size_t i = 0; i < world_agent_count(w); i++) {
    agent *a = world_agent_at(w, i);
    if (strcmp(agent_id(a), id) == 0 || strcasecmp(agent_name(a), name_or_id) == 0) return a;
  }
  return NULL;
}

/* Names of every kind the id rule knows (spaces, '_', Latin letters folded, other scripts hashed), and
 * queries in every case: the index finds what the scan found, and nothing else. */
static void find_agrees_with_the_scan(void) {
  struct event_base *base = event_base_new();
  world *w = tworld_make(base,
                         "{\"name\": \"w\", \"agents\": [{\"name\": \"Alice\"}, {\"name\": \"Madame Pedagogue\"},"
                         " {\"name\": \"José\"}, {\"name\": \"村長\"}, {\"name\": \"bob_2\"}, {\"name\": \"Ærø Crème\"},"
                         " {\"name\": \"x-y\"}, {\"name\": \"Straße\"}]}");
  static const char *const queries[] = {
      "Alice", "alice", "ALICE", "aLiCe", "alice ", "@alice", "alic", "Madame Pedagogue", "madame pedagogue",
      "MADAME   PEDAGOGUE", "madame-pedagogue", "Madame-Pedagogue", "madame_pedagogue", "José", "JOSÉ",
      "jose", "JOSE", "Jose", "josé", "村長", "村", "bob_2", "BOB_2", "bob-2", "Ærø Crème", "aero-creme",
      "AERO CREME", "ærø crème", "x-y", "X-Y", "x y", "Straße", "strasse", "STRASSE", "", " ", "-", "nobody",
      "ALICE\n", "ali\tce", NULL};
  CHECK(w != NULL);
  for (size_t i = 0; w && queries[i]; i++) {
    agent *want = find_by_scan(w, queries[i]), *got = world_agent_find(w, queries[i]);
    if (got != want)
      unit_fail_(__FILE__, __LINE__, "world_agent_find(\"%s\") = %s, the scan found %s", queries[i],
                 got ? agent_id(got) : "none", want ? agent_id(want) : "none");
  }
  CHECK(world_agent_find(w, "MADAME PEDAGOGUE") == world_agent_at(w, 1));
  CHECK(world_agent_find(w, "JOSÉ") == world_agent_at(w, 2));
  /* After a removal the index still finds the others, and not the one removed. */
  CHECK_INT(world_remove_agent(w, "ALICE"), AG_OK);
  CHECK(world_agent_find(w, "alice") == NULL);
  CHECK(world_agent_find(w, "bob_2") == world_agent_at(w, 3));
  world_free(w);
  event_base_free(base);
}

/* A world file named name of n agents, agent i as fmt makes it from i (one %zu; at most 96 bytes), in a
 * JSON array (caller frees). */
static char *agents_world(const char *name, size_t n, const char *fmt) {
  size_t cap = 64 + n * 97;
  char *s = malloc(cap);
  size_t o = (size_t)snprintf(s, cap, "{\"name\": \"%s\", \"agents\": [", name);
  for (size_t i = 0; i < n; i++) {
    if (i) s[o++] = ',';
    o += (size_t)snprintf(s + o, cap - o, fmt, i);
  }
  snprintf(s + o, cap - o, "]}");
  return s;
}

/* A world file of n scripted agents named "Agent 0000000".., 80 bytes each (caller frees). */
static char *many_agents(size_t n) {
  return agents_world("many", n, "{\"name\": \"Agent %07zu\", \"system_prompt\": \"You are one of many; be brief.\"}");
}

/* 50,000 lookups in a world of 50,000 agents: each costs what it costs in a world of one (before, each
 * scanned the world: 2.5 billion comparisons, many seconds). */
static void find_is_constant_time(void) {
  enum { N = 50000 };
  struct event_base *base = event_base_new();
  char *json = many_agents(N);
  world *w = tworld_make(base, json);
  free(json);
  CHECK(w != NULL);
  size_t found = 0;
  char name[32];
  double t0 = bench_now_s();
  for (size_t i = 0; w && i < N; i++) {
    size_t k = (i * 7919) % N;
    snprintf(name, sizeof name, i % 2 ? "AGENT %07zu" : "agent-%07zu", k);
    agent *a = world_agent_find(w, name);
    found += a && a == world_agent_at(w, k);
  }
  double dt = bench_now_s() - t0;
  CHECK_INT(found, N);
  CHECK(dt < 1.0);
  world_free(w);
  event_base_free(base);
}

/* Counts the replies of agent-k000000 (it answers only when another agent's reply named it). */
static void count_first(void *ud, bus_topic topic, void *payload) {
  const ag_msg *m = payload;
  if (topic == BUS_MESSAGE && m->kind == AG_KIND_AGENT && strcmp(m->sender, "agent-k000000") == 0) (*(int *)ud)++;
}

/* Display names ("@Agent K000123 hi") in a world of 100,000 agents: each message resolves them in the
 * world's index (before, every message hashed all 100,000 ids first: seconds for 2,000 messages), and a
 * reply's display names resolve the same way when it is shaped. */
static void display_names_in_a_big_world(void) {
  enum { N = 100000, MSGS = 2000 };
  struct event_base *base = event_base_new();
  char *json = agents_world("names", N, "{\"name\": \"Agent K%06zu\", \"replies\": [\"@Agent K000000 over to you\"]}");
  world *w = tworld_make(base, json);
  free(json);
  CHECK(w != NULL);
  size_t resolved = 0;
  char text[64], want[32];
  double t0 = bench_now_s();
  for (size_t i = 0; w && i < MSGS; i++) {
    size_t k = (i * 7919) % N;
    ag_msg *m = NULL;
    snprintf(text, sizeof text, "@Agent K%06zu hello", k);
    snprintf(want, sizeof want, "agent-k%06zu", k);
    CHECK_INT(world_publish(w, "outsider", text, &m), AG_OK); /* an agent's kind: routed, not broadcast */
    resolved += m && m->leading.n == 1 && strcmp(m->leading.ids[0], want) == 0;
  }
  double dt = bench_now_s() - t0;
  CHECK_INT(resolved, MSGS);
  CHECK(dt < 1.0);
  /* Each addressed agent answers "@Agent K000000 …": shaped with the index, the reply reaches it. */
  int first = 0;
  if (w) CHECK_INT(bus_subscribe(world_bus(w), BUS_MESSAGE, BUS_PHASE_OUTPUT, count_first, &first, NULL), AG_OK);
  if (w) CHECK_INT(world_run_until_quiet(w), AG_OK);
  CHECK(first > 0);
  world_free(w);
  event_base_free(base);
}

/* The bus's backlog when the first reply is delivered. */
typedef struct backlog {
  bus *b;
  size_t at_first, replies;
} backlog;

static void note_backlog(void *ud, bus_topic topic, void *payload) {
  backlog *k = ud;
  if (topic != BUS_MESSAGE || ((const ag_msg *)payload)->kind != AG_KIND_AGENT) return;
  if (!k->replies++) k->at_first = bus_pending(k->b);
}

/* A public message answered by 5,000 scripted agents: every agent answers, and the replies reach the bus
 * in batches (common/defer.h), so when the first is delivered only a batch's messages and events wait
 * behind it. Before, all 5,000 replies were made first and waited on the bus with their events (over
 * 15,000 items): at a million agents that backlog was ~360 MiB, cold by the time it was delivered. */
static void replies_reach_the_bus_in_batches(void) {
  enum { N = 5000 };
  struct event_base *base = event_base_new();
  char *json = agents_world("roll", N, "{\"name\": \"agent-%07zu\", \"replies\": [\"noted, thanks\"]}");
  world *w = tworld_make(base, json);
  free(json);
  CHECK(w != NULL);
  backlog k = {.b = w ? world_bus(w) : NULL};
  if (w) CHECK_INT(bus_subscribe(world_bus(w), BUS_MESSAGE, BUS_PHASE_OUTPUT, note_backlog, &k, NULL), AG_OK);
  ag_msg *m = NULL;
  if (w) CHECK_INT(world_publish(w, "human", "Roll call, everyone.", &m), AG_OK);
  if (w) CHECK_INT(world_run_until_quiet(w), AG_OK);
  CHECK_INT(k.replies, N);
  if (k.at_first > 8 * AG_DEFER_BATCH)
    unit_fail_(__FILE__, __LINE__, "%zu items waited on the bus behind the first reply", k.at_first);
  world_free(w);
  event_base_free(base);
}

#ifndef __SANITIZE_ADDRESS__
static long minor_faults(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}
#endif

/* The first public message to a world of a million agents allocates ~500 MB at once (WORLD_WAVE_BYTES an
 * agent), and its page faults were a quarter of its fan-out: the runtime reserves that much once the world
 * is built. In a process that tuned its heap (as agora's main does), 256 MiB of small blocks allocated
 * after ag_heap_reserve(256 MiB) find their pages there: 3% of the pages fault (without the reserve,
 * 109%: every page and the blocks' headers). ASan's allocator ignores the heap's settings: not checked there. */
static void reserve_backs_a_burst(void) {
#ifndef __SANITIZE_ADDRESS__
  enum { BLOCK = 256, BYTES = 256 << 20, N = BYTES / BLOCK };
  ag_heap_tune();
  void **p = calloc(N, sizeof *p); /* its own mapping, touched before counting */
  if (p) memset(p, 0, N * sizeof *p);
  ag_heap_reserve(BYTES + BYTES / 8); /* and each block's header */
  long f0 = minor_faults();
  size_t got = 0;
  for (; p && got < N && (p[got] = malloc(BLOCK)); got++) memset(p[got], 1, BLOCK);
  long faults = minor_faults() - f0;
  CHECK_INT(got, N);
  if (faults > BYTES / 4096 / 20) unit_fail_(__FILE__, __LINE__, "%ld page faults for %d pages", faults, BYTES / 4096);
  while (got > 0) free(p[--got]);
  free(p);
#endif
}

/* A file of more than 16 MiB (300,000 agents, the old cap) loads; one over the cap is refused at once. */
static void big_world_file_loads(void) {
  enum { N = 300000 };
  char *dir = unit_tmpdir();
  char path[512];
  snprintf(path, sizeof path, "%s/big.json", dir);
  char *json = many_agents(N);
  CHECK(strlen(json) > (16u << 20));
  CHECK_INT(unit_write_file(path, json), 0);
  free(json);
  world_spec spec;
  ag_errmsg em = {""};
  int rc = world_spec_load(path, &spec, &em);
  CHECK_INT(rc, AG_OK);
  if (rc) unit_fail_(__FILE__, __LINE__, "load: %s", em.text);
  else CHECK_INT(spec.n_agents, N);
  if (!rc) world_spec_free(&spec);

  snprintf(path, sizeof path, "%s/huge.json", dir);
  FILE *f = fopen(path, "w");
  CHECK(f && ftruncate(fileno(f), (off_t)WORLD_FILE_MAX + 1) == 0); /* sparse: nothing is written */
  if (f) fclose(f);
  double t0 = bench_now_s();
  CHECK_INT(world_spec_load(path, &spec, &em), AG_ERR_TOO_BIG);
  CHECK(bench_now_s() - t0 < 1.0); /* refused before reading 256 MiB */
  char want[600];
  snprintf(want, sizeof want, "%s: file is larger than %u bytes", path, WORLD_FILE_MAX);
  CHECK_STR(em.text, want);
  unit_rmrf(dir);
  free(dir);
}

SUITE_RUN((UNIT(find_agrees_with_the_scan), UNIT(find_is_constant_time), UNIT(display_names_in_a_big_world),
  UNIT(replies_reach_the_bus_in_batches), UNIT(reserve_backs_a_burst),
  UNIT(big_world_file_loads)))
