/* The bundled examples that need nothing from outside (examples/moderator.json, examples/week.json),
 * run through the built binary: each transcript must make sense — every reply answers the message it
 * follows, and only the agents the rules address speak. (relay, debate and town-hall are in test_run;
 * the MCP example, which needs the npm peers, is in test_example_mcp.) */
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"
#include "support/vectors.h"
#include "world/world_file.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runs an example with --json --no-save; *out gets the whole NDJSON (caller frees). Returns the compact
 * "sender|kind|text" transcript (caller frees). */
static char *run_example(const char *name, char **out) {
  char rel[256];
  snprintf(rel, sizeof rel, "examples/%s", name);
  const char *args[] = {"run", unit_src_path(rel), "--json", "--no-save", NULL};
  proc_result r;
  if (proc_agora(args, NULL, NULL, &r)) return NULL;
  CHECK_INT(r.status, 0);
  if (r.status) fprintf(stderr, "  stderr: %s\n", r.err);
  char *msgs = proc_messages(r.out);
  if (out) *out = r.out, r.out = NULL;
  proc_result_free(&r);
  return msgs;
}

/* A message that mentions no one goes to the main agent alone, which hands it to an expert; a message
 * that opens with an expert's mention skips the moderator. */
static void moderator_routes_questions(void) {
  char *got = run_example("moderator.json", NULL);
  CHECK_STR(got,
            "human|human|When was the old bridge built?\n"
            "moderator|agent|@Historian this one is yours.\n"
            "historian|agent|It was built in 1887, the year the railway reached the town.\n"
            "human|human|Is it still safe to cross?\n"
            "moderator|agent|@Engineer over to you.\n"
            "engineer|agent|Yes: it was inspected last spring and carries cars up to 3.5 tonnes.\n"
            "human|human|@Historian who paid for it?\n"
            "historian|agent|The mill owners paid for it, as a gift to the town.\n");
  free(got);
}

/* The simulated instant of the NDJSON message with this seq ("" when it has none). */
static const char *sim_time_of(const char *ndjson, int seq, char *buf, size_t cap) {
  buf[0] = '\0';
  for (const char *line = ndjson; line && *line;) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    cJSON *o = cJSON_ParseWithLength(line, len);
    const cJSON *s = cJSON_GetObjectItem(o, "seq"), *t = cJSON_GetObjectItem(o, "sim_time");
    if (cJSON_IsNumber(s) && s->valueint == seq && cJSON_IsString(t)) snprintf(buf, cap, "%s", t->valuestring);
    cJSON_Delete(o);
    line = nl ? nl + 1 : NULL;
  }
  return buf;
}

/* Five weekday mornings at 07:00 simulated, each answered by that day's bread, then the fair on
 * Saturday at 10:00; the run ends at clock.until with no item past it. */
static void week_on_a_virtual_clock(void) {
  char *ndjson = NULL;
  char *got = run_example("week.json", &ndjson);
  CHECK_STR(got,
            "system|system|A week in Millbrook begins.\n"
            "world|world|@Baker it is Monday 2026-03-02, 07:00 in Millbrook: what is in the oven?\n"
            "baker|agent|Monday: rye loaves, as every week starts.\n"
            "world|world|@Baker it is Tuesday 2026-03-03, 07:00 in Millbrook: what is in the oven?\n"
            "baker|agent|Tuesday: spelt rolls.\n"
            "world|world|@Baker it is Wednesday 2026-03-04, 07:00 in Millbrook: what is in the oven?\n"
            "baker|agent|Wednesday: brioche for the school.\n"
            "world|world|@Baker it is Thursday 2026-03-05, 07:00 in Millbrook: what is in the oven?\n"
            "baker|agent|Thursday: seeded bread.\n"
            "world|world|@Baker it is Friday 2026-03-06, 07:00 in Millbrook: what is in the oven?\n"
            "baker|agent|Friday: plaited loaves for the weekend.\n"
            "world|world|@Mayor it is Saturday 10:00: open the Millbrook fair.\n"
            "mayor|agent|The Millbrook fair is open. Welcome, everyone!\n");
  char t[64];
  CHECK_STR(sim_time_of(ndjson, 1, t, sizeof t), "2026-03-02T00:00:00.000Z");
  CHECK_STR(sim_time_of(ndjson, 3, t, sizeof t), "2026-03-02T07:00:00.000Z"); /* the answer takes no simulated time */
  CHECK_STR(sim_time_of(ndjson, 10, t, sizeof t), "2026-03-06T07:00:00.000Z");
  CHECK_STR(sim_time_of(ndjson, 12, t, sizeof t), "2026-03-07T10:00:00.000Z");
  CHECK_STR(sim_time_of(ndjson, 14, t, sizeof t), ""); /* nothing after the fair: Monday 9 is clock.until */
  free(got);
  free(ndjson);
}

/* The complete example of docs/world-file.md (its first ```json block) loads, with what it says. */
static void world_file_doc_example_loads(void) {
  char *doc = unit_read_file(unit_src_path("docs/world-file.md"));
  CHECK(doc != NULL);
  const char *start = doc ? strstr(doc, "```json\n") : NULL;
  const char *end = start ? strstr(start + 8, "\n```") : NULL;
  CHECK(start && end);
  if (!start || !end) {
    free(doc);
    return;
  }
  world_spec spec;
  ag_errmsg em = {""};
  int rc = world_spec_parse(start + 8, (size_t)(end - start - 8), "docs/world-file.md", &spec, &em);
  if (rc) fprintf(stderr, "  %s\n", em.text);
  CHECK_INT(rc, AG_OK);
  if (!rc) {
    CHECK_STR(spec.id, "design-review");
    CHECK_STR(spec.main_agent, "moderator");
    CHECK_INT(spec.n_agents, 4);
    CHECK_INT(spec.n_steps, 3);
    CHECK_INT(spec.n_sched, 1);
    CHECK_INT(spec.n_mcp, 1);
    CHECK(spec.clock.is_virtual && spec.clock.has_until);
    CHECK(spec.agents[1].monadic && !spec.agents[2].auto_reply);
    world_spec_free(&spec);
  }
  free(doc);
}

/* 1 when doc holds text with each line break written as the tables write it (⏎). */
static int doc_has(const char *doc, const char *text) {
  char want[1024];
  size_t n = 0;
  for (const char *p = text; *p && n + 4 < sizeof want; p++) {
    if (*p == '\n') memcpy(want + n, "\xE2\x8F\x8E", 3), n += 3;
    else want[n++] = *p;
  }
  want[n] = '\0';
  if (strstr(doc, want)) return 1;
  fprintf(stderr, "  docs/behaviour.md lacks the vector: %s\n", want);
  return 0;
}

/* docs/behaviour.md shows every worked example the tests run (tests/data/vectors.json), so the page
 * and the data cannot drift apart. */
static void behaviour_doc_holds_the_vectors(void) {
  char *doc = unit_read_file(unit_src_path("docs/behaviour.md"));
  CHECK(doc != NULL);
  const cJSON *parse = NULL, *shape = NULL, *worlds = NULL, *v;
  cJSON *a = vectors_load("parse", 20, &parse), *b = vectors_load("shape", 10, &shape);
  cJSON *c = vectors_load("worlds", 4, &worlds);
  if (doc && a && b && c) {
    cJSON_ArrayForEach(v, parse) {
      const char *t = cJSON_GetObjectItem(v, "text")->valuestring;
      if (t[0]) CHECK(doc_has(doc, t));
    }
    cJSON_ArrayForEach(v, shape) {
      CHECK(doc_has(doc, cJSON_GetObjectItem(v, "reply")->valuestring));
      const cJSON *pub = cJSON_GetObjectItem(v, "published");
      if (cJSON_IsString(pub)) CHECK(doc_has(doc, pub->valuestring));
    }
    cJSON_ArrayForEach(v, worlds) {
      const cJSON *m;
      cJSON_ArrayForEach(m, cJSON_GetObjectItem(v, "messages")) {
        char line[512];
        snprintf(line, sizeof line, "%s (%s): %s", cJSON_GetObjectItem(m, "sender")->valuestring,
                 cJSON_GetObjectItem(m, "kind")->valuestring, cJSON_GetObjectItem(m, "text")->valuestring);
        CHECK(doc_has(doc, line));
      }
    }
  }
  cJSON_Delete(a);
  cJSON_Delete(b);
  cJSON_Delete(c);
  free(doc);
}

SUITE_RUN((UNIT(moderator_routes_questions), UNIT(week_on_a_virtual_clock), UNIT(world_file_doc_example_loads),
  UNIT(behaviour_doc_holds_the_vectors)))
