/* Hostile input (issue 17): numbers that are not whole, finite or in range, duplicate agents in a
 * snapshot, huge worlds and mention lists that must load in linear time, and world files that are
 * directories or hold NULs — each through the function and end to end through the binary. */
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"

#include "agents/context.h"
#include "agents/mention.h"
#include "chat/snapshot.h"
#include "common/jsonnum.h"
#include "common/strset.h"
#include "world/world.h"
#include "world/world_file.h"

#include <cjson/cJSON.h>
#include <event2/event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the checked number helper ---- */

static int num(const char *json, int64_t min, int64_t max, int64_t *out) {
  cJSON *v = cJSON_Parse(json);
  int rc = ag_json_int(v, min, max, out);
  cJSON_Delete(v);
  return rc;
}

static void json_int_whole_finite_in_range(void) {
  int64_t n = -7;
  CHECK_INT(num("42", 0, 100, &n), AG_OK);
  CHECK_INT(n, 42);
  CHECK_INT(num("-3", -5, 5, &n), AG_OK);
  CHECK_INT(n, -3);
  CHECK_INT(num("9007199254740991", 0, AG_JSON_INT_MAX, &n), AG_OK);
  CHECK_INT(n, AG_JSON_INT_MAX);
  CHECK_INT(num("-9007199254740991", INT64_MIN, 0, &n), AG_OK);
  CHECK_INT(n, -AG_JSON_INT_MAX);
  /* 2^53 is also what 2^53 + 1 reads as: not exact, whatever range is asked for. */
  CHECK_INT(num("9007199254740992", 0, INT64_MAX, &n), AG_ERR_TOO_BIG);
  CHECK_INT(num("9007199254740993", 0, INT64_MAX, &n), AG_ERR_TOO_BIG);
  CHECK_INT(num("-9007199254740992", INT64_MIN, 0, &n), AG_ERR_TOO_BIG);
  CHECK_INT(n, -AG_JSON_INT_MAX);
  n = 5;
  CHECK_INT(num("0.5", 0, 100, &n), AG_ERR_INVALID);
  CHECK_INT(num("1e999", 0, INT64_MAX, &n), AG_ERR_INVALID);  /* parsed as infinity */
  CHECK_INT(num("-1e999", INT64_MIN, 0, &n), AG_ERR_INVALID);
  CHECK_INT(num("\"3\"", 0, 100, &n), AG_ERR_INVALID);
  CHECK_INT(num("null", 0, 100, &n), AG_ERR_INVALID);
  CHECK_INT(ag_json_int(NULL, 0, 100, &n), AG_ERR_INVALID);
  CHECK_INT(num("1e300", 0, INT64_MAX, &n), AG_ERR_TOO_BIG);
  CHECK_INT(num("2147483648", 0, INT32_MAX, &n), AG_ERR_TOO_BIG);
  CHECK_INT(num("-1", 0, 100, &n), AG_ERR_TOO_BIG);
  CHECK_INT(num("18014398509481984", 0, INT64_MAX, &n), AG_ERR_TOO_BIG); /* 2^54: past exact doubles */
  CHECK_INT(n, 5); /* left alone on every failure */
}

/* The exact-integer writer: every int64 prints as its decimal text, reads back through ag_json_int, and
 * a parsed tree prints its integers back as it read them. */
static void json_int_written_exactly(void) {
  static const int64_t vals[] = {0, -5, 2147483648, 999999999999999, 1000000000000000, 9000000001999981,
                                 AG_JSON_INT_MAX, -AG_JSON_INT_MAX, INT64_MAX, INT64_MIN};
  static const char *const texts[] = {"0", "-5", "2147483648", "999999999999999", "1000000000000000",
                                      "9000000001999981", "9007199254740991", "-9007199254740991",
                                      "9223372036854775807", "-9223372036854775808"};
  for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
    cJSON *o = cJSON_CreateObject();
    CHECK(ag_json_add_int(o, "n", vals[i]) != NULL);
    char *s = cJSON_PrintUnformatted(o), want[64];
    snprintf(want, sizeof want, "{\"n\":%s}", texts[i]);
    CHECK_STR(s, want);
    int64_t n = 0;
    int in_range = vals[i] >= -AG_JSON_INT_MAX && vals[i] <= AG_JSON_INT_MAX;
    CHECK_INT(ag_json_int_member(o, "n", INT64_MIN, INT64_MAX, &n), in_range ? AG_OK : AG_ERR_TOO_BIG);
    if (in_range) CHECK_INT(n, vals[i]);
    cJSON *back = cJSON_Parse(s); /* the text is JSON, and reads as a number */
    CHECK(back && cJSON_IsNumber(cJSON_GetObjectItem(back, "n")));
    cJSON_Delete(back);
    free(s);
    cJSON_Delete(o);
  }
  /* A raw value that is not an integer is no number to ag_json_int. */
  cJSON *raw = cJSON_CreateRaw("\"12\"");
  int64_t n;
  CHECK_INT(ag_json_int(raw, 0, 100, &n), AG_ERR_INVALID);
  cJSON_Delete(raw);
  /* Parsed, then printed exactly: whole numbers within +-(2^53-1); others as cJSON prints them. */
  const char *in = "{\"a\":[9000000001999981,-9007199254740991,1e15,-0,2.5,1e300,9007199254740993],"
                   "\"b\":{\"c\":8999999999999999},\"d\":7}";
  cJSON *t = cJSON_Parse(in);
  char *s = ag_json_print_exact(t);
  CHECK_STR(s, "{\"a\":[9000000001999981,-9007199254740991,1000000000000000,-0,2.5,1e+300,9.00719925474099e+15],"
               "\"b\":{\"c\":8999999999999999},\"d\":7}");
  free(s);
  CHECK(cJSON_IsNumber(cJSON_GetArrayItem(cJSON_GetObjectItem(t, "a"), 0))); /* the original is untouched */
  CHECK_INT(ag_json_exact_ints(t), AG_OK);
  CHECK_INT(ag_json_int(cJSON_GetArrayItem(cJSON_GetObjectItem(t, "a"), 0), 0, INT64_MAX, &n), AG_OK);
  CHECK_INT(n, 9000000001999981);
  cJSON_Delete(t);
}

static void strset_adds_finds_and_refuses_duplicates(void) {
  ag_strset s = {0};
  char keys[3000][8];
  for (int i = 0; i < 3000; i++) {
    snprintf(keys[i], sizeof keys[i], "k%d", i);
    CHECK_INT(ag_strset_add(&s, keys[i]), AG_OK);
  }
  CHECK_INT(s.n, 3000);
  CHECK(ag_strset_has(&s, "k0") && ag_strset_has(&s, "k2999"));
  CHECK(!ag_strset_has(&s, "k3000"));
  CHECK_INT(ag_strset_add(&s, "k17"), AG_ERR_EXISTS);
  ag_strset_clear(&s);
  CHECK(!ag_strset_has(&s, "k0"));
}

/* ---- snapshots ---- */

/* A valid snapshot: one agent with a context, two messages. */
static const char good_snapshot[] =
    "{\"format\":1,"
    "\"world\":{\"name\":\"Hostile\",\"agents\":[{\"name\":\"alice\",\"provider\":\"script\"},"
    "{\"name\":\"bob\",\"provider\":\"script\"}]},"
    "\"chat\":{\"id\":\"c1\",\"world\":\"hostile\",\"title\":\"T\",\"message_count\":2,"
    "\"created_at\":\"2026-11-22T10:00:00.000Z\",\"updated_at\":\"2026-11-22T10:00:01.000Z\"},"
    "\"messages\":[{\"seq\":1,\"sender\":\"human\",\"kind\":\"human\",\"text\":\"@alice hi\","
    "\"ts\":\"2026-11-22T10:00:00.000Z\"},{\"seq\":2,\"sender\":\"alice\",\"kind\":\"agent\",\"text\":\"hello\","
    "\"ts\":\"2026-11-22T10:00:01.000Z\"}],"
    "\"agents\":[{\"id\":\"alice\",\"turn_count\":1,\"notice_sent\":false,\"reply_counter\":1,\"memory\":[1,2],"
    "\"context\":{\"version\":1,\"updated_at\":\"2026-11-22T10:00:01.000Z\",\"data\":{\"k\":1}}},"
    "{\"id\":\"bob\",\"turn_count\":0,\"notice_sent\":false,\"reply_counter\":0,\"memory\":[1]}],"
    "\"thread\":[]}";

typedef struct snap_case {
  const char *from, *to; /* the good snapshot with the first `from` replaced by `to` */
  const char *want;      /* in the error */
} snap_case;

static const snap_case snap_cases[] = {
    {"\"turn_count\":1", "\"turn_count\":2147483648", "agents[0].turn_count: must be a whole number from 0 to"},
    {"\"turn_count\":1", "\"turn_count\":1.5", "agents[0].turn_count: must be"},
    {"\"version\":1,", "\"version\":1e300,", "agents[0].context.version: must be a whole number"},
    {"\"version\":1,", "\"version\":-1,", "agents[0].context.version: must be a whole number"},
    {"\"format\":1", "\"format\":1e15", "format: 1000000000000000 is newer than this Agora reads"},
    {"\"format\":1", "\"format\":1e300", "format: must be a whole number"},
    {"\"reply_counter\":1", "\"reply_counter\":1e300", "agents[0].reply_counter: must be a whole number"},
    {"{\"id\":\"bob\"", "{\"id\":\"alice\"", "agents[1].id: duplicate agent id 'alice'"},
    {"\"memory\":[1,2]", "\"memory\":[1,1e300]", "agents[0].memory[1]: must be the seq"},
    {"\"seq\":2", "\"seq\":1e300", "messages[1].seq: must be a whole number"},
    {NULL, NULL, NULL},
};

/* The good snapshot with one substitution (caller frees). */
static char *snap_variant(const snap_case *c) {
  const char *at = strstr(good_snapshot, c->from);
  if (!at) return NULL;
  size_t pre = (size_t)(at - good_snapshot), fl = strlen(c->from), tl = strlen(c->to);
  char *s = malloc(sizeof good_snapshot + tl);
  if (!s) return NULL;
  memcpy(s, good_snapshot, pre);
  memcpy(s + pre, c->to, tl);
  strcpy(s + pre + tl, at + fl);
  return s;
}

static void snapshot_numbers_checked(void) {
  ag_errmsg em;
  cJSON *good = cJSON_Parse(good_snapshot);
  CHECK(good != NULL);
  em.text[0] = '\0';
  CHECK_INT(chat_snapshot_validate(good, "good.json", &em), AG_OK);
  if (em.text[0]) unit_fail_(__FILE__, __LINE__, "good snapshot: %s", em.text);
  cJSON_Delete(good);
  for (size_t i = 0; snap_cases[i].want; i++) {
    char *text = snap_variant(&snap_cases[i]);
    cJSON *snap = text ? cJSON_Parse(text) : NULL;
    if (!snap) unit_fail_(__FILE__, __LINE__, "case %zu: no variant", i);
    em.text[0] = '\0';
    int rc = chat_snapshot_validate(snap, "bad.json", &em);
    if (rc == AG_OK || !strstr(em.text, snap_cases[i].want))
      unit_fail_(__FILE__, __LINE__, "case %zu: rc %d, \"%s\", want \"%s\"", i, rc, em.text, snap_cases[i].want);
    cJSON_Delete(snap);
    free(text);
  }
}

/* The input libFuzzer found at once (issue 17): a context version of 1e300, which was cast to
 * uint64_t — undefined behaviour. */
static void context_version_out_of_range(void) {
  const char *const bad[] = {"{\"version\":1e300,\"updated_at\":null,\"data\":{}}",
                             "{\"version\":0.5,\"updated_at\":null,\"data\":{}}",
                             "{\"version\":-1,\"updated_at\":null,\"data\":{}}"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cJSON *j = cJSON_Parse(bad[i]);
    context_state cs;
    if (context_from_json(j, &cs) != AG_ERR_INVALID) {
      unit_fail_(__FILE__, __LINE__, "accepted %s", bad[i]);
      context_free(&cs);
    }
    cJSON_Delete(j);
  }
  cJSON *j = cJSON_Parse("{\"version\":9007199254740991,\"updated_at\":null,\"data\":{}}");
  context_state cs;
  CHECK_INT(context_from_json(j, &cs), AG_OK);
  CHECK(cs.version == UINT64_C(9007199254740991));
  /* Written back exactly (cJSON's own print would give 9.00719925474099e+15). */
  cJSON *back = context_to_json(&cs);
  char *text = cJSON_PrintUnformatted(back);
  CHECK_STR(text, "{\"version\":9007199254740991,\"updated_at\":\"1970-01-01T00:00:00.000Z\",\"data\":{}}");
  free(text);
  cJSON_Delete(back);
  context_free(&cs);
  cJSON_Delete(j);
}

/* ---- end to end through the binary ---- */

typedef struct env {
  char *dir;
  char db[4096];
} env;

static void run_agora(proc_result *r, const char *const *args) {
  if (proc_agora(args, NULL, NULL, r)) {
    unit_fail_(__FILE__, __LINE__, "cannot run agora");
    r->status = -1;
    r->out = strdup("");
    r->err = strdup("");
  }
}

static void import_refuses_bad_numbers(void) {
  env e = {unit_tmpdir(), ""};
  snprintf(e.db, sizeof e.db, "%s/db", e.dir);
  char path[4096];
  proc_result r;
  for (size_t i = 0; snap_cases[i].want; i++) {
    char *text = snap_variant(&snap_cases[i]);
    snprintf(path, sizeof path, "%s/bad%zu.json", e.dir, i);
    if (!text || unit_write_file(path, text)) unit_fail_(__FILE__, __LINE__, "cannot write %s", path);
    free(text);
    const char *args[] = {"chats", "import", path, "--db", e.db, NULL};
    run_agora(&r, args);
    const char *at = strstr(r.err, path);
    /* A newer format is a version error (exit 2 as well: bad input). */
    if (r.status != 2 || !at || !strstr(at, snap_cases[i].want) || r.out[0])
      unit_fail_(__FILE__, __LINE__, "case %zu: status %d, stdout \"%s\", stderr \"%.300s\", want \"%s\"", i,
                 r.status, r.out, r.err, snap_cases[i].want);
    proc_result_free(&r);
  }
  /* Nothing was stored; the good one imports and lists. */
  snprintf(path, sizeof path, "%s/good.json", e.dir);
  CHECK_INT(unit_write_file(path, good_snapshot), 0);
  const char *imp[] = {"chats", "import", path, "--db", e.db, NULL};
  run_agora(&r, imp);
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  const char *list[] = {"chats", "list", "--json", "--db", e.db, NULL};
  run_agora(&r, list);
  CHECK_INT(r.status, 0);
  /* One NDJSON line: the imported chat, none of the refused ones. */
  CHECK(strchr(r.out, '\n') == strrchr(r.out, '\n'));
  CHECK(strstr(r.out, "\"message_count\":2") != NULL);
  proc_result_free(&r);
  unit_rmrf(e.dir);
  free(e.dir);
}

/* Runs agora with args; returns its stdout (caller frees), checking that it exits 0. */
static char *agora_out(const char *const *args) {
  proc_result r;
  run_agora(&r, args);
  if (r.status != 0) unit_fail_(__FILE__, __LINE__, "%s %s: status %d, %.300s", args[0], args[1], r.status, r.err);
  char *out = r.out;
  r.out = NULL;
  proc_result_free(&r);
  return out;
}

/* `chats import PATH` into db, then `chats export` of the chat made: its text (caller frees); the chat's id
 * in id (64 bytes). */
static char *import_export(const char *path, const char *db, char id[64]) {
  const char *imp[] = {"chats", "import", path, "--db", db, NULL};
  char *out = agora_out(imp);
  snprintf(id, 64, "%.*s", out ? (int)strcspn(out, "\n") : 0, out ? out : "");
  free(out);
  const char *exp[] = {"chats", "export", id, "--db", db, NULL};
  return agora_out(exp);
}

/* text with every `from` replaced by `to` (same length: chat ids), in place. */
static void replace_all(char *text, const char *from, const char *to) {
  size_t n = strlen(from);
  if (n != strlen(to)) return unit_fail_(__FILE__, __LINE__, "ids of different lengths");
  for (char *p = text; (p = strstr(p, from)); p += n) memcpy(p, to, n);
}

/* (export pretty-prints: a tab after each colon.) Numbers near 2^53 (counters, a context version, a thread's ms, a context's data) come back from export
 * exactly (cJSON's own print gives 9.00000000199998e+15, 1 off), and export -> import -> export is
 * byte-identical but for the new chat's id. */
static void snapshot_numbers_round_trip_exactly(void) {
  env e = {unit_tmpdir(), ""};
  snprintf(e.db, sizeof e.db, "%s/db", e.dir);
  char path[4096], path2[4096];
  snprintf(path, sizeof path, "%s/big.json", e.dir);
  snprintf(path2, sizeof path2, "%s/again.json", e.dir);
  static const char snap[] =
      "{\"format\":1,\"world\":{\"name\":\"Big\",\"agents\":[{\"name\":\"alice\",\"provider\":\"script\"}]},"
      "\"chat\":{\"id\":\"c1\",\"world\":\"big\",\"title\":\"T\",\"message_count\":1,"
      "\"created_at\":\"2026-11-22T10:00:00.000Z\",\"updated_at\":\"2026-11-22T10:00:01.000Z\"},"
      "\"messages\":[{\"seq\":1,\"sender\":\"human\",\"kind\":\"human\",\"text\":\"hi\","
      "\"ts\":\"2026-11-22T10:00:00.000Z\"}],"
      "\"agents\":[{\"id\":\"alice\",\"turn_count\":2147483647,\"notice_sent\":true,"
      "\"reply_counter\":9000000001999981,\"memory\":[1],"
      "\"context\":{\"version\":9007199254740991,\"updated_at\":\"2026-11-22T10:00:01.000Z\","
      "\"data\":{\"k\":9000000001999981,\"neg\":-9007199254740991,\"half\":0.5}}}],"
      "\"thread\":[{\"type\":\"llm-done\",\"agent\":\"alice\",\"after_seq\":1,\"at_ms\":9007199254740990,"
      "\"input_tokens\":1000000000000001}]}";
  CHECK_INT(unit_write_file(path, snap), 0);
  char id1[64], id2[64];
  char *first = import_export(path, e.db, id1);
  static const char *const exact[] = {"\"turn_count\":\t2147483647", "\"reply_counter\":\t9000000001999981",
                                      "\"version\":\t9007199254740991",  "\"k\":\t9000000001999981",
                                      "\"neg\":\t-9007199254740991",     "\"at_ms\":\t9007199254740990",
                                      "\"input_tokens\":\t1000000000000001"};
  for (size_t i = 0; i < sizeof exact / sizeof *exact; i++)
    if (!strstr(first, exact[i])) unit_fail_(__FILE__, __LINE__, "export lacks %s:\n%s", exact[i], first);
  CHECK(!strstr(first, "e+15"));
  CHECK_INT(unit_write_file(path2, first), 0);
  char *second = import_export(path2, e.db, id2);
  replace_all(first, id1, id2);
  CHECK_STR(second, first);
  free(first), free(second);
  unit_rmrf(e.dir);
  free(e.dir);
}

static void world_file_numbers_checked(void) {
  static const unit_io cases[] = {
      {"{\"name\":\"w\",\"turn_limit\":1e300}", "turn_limit: must be between 1 and 1000000"},
      {"{\"name\":\"w\",\"turn_limit\":2.5}", "turn_limit: must be an integer"},
      {"{\"name\":\"w\",\"agents\":[{\"name\":\"a\",\"max_tokens\":2147483648}]}",
       "agents[0].max_tokens: must be between 1 and 10000000"},
      {"{\"name\":\"w\",\"defaults\":{\"timeout_ms\":-1e999}}", "defaults.timeout_ms: must be an integer"},
      {"{\"name\":\"w\",\"defaults\":{\"temperature\":1e999}}", "defaults.temperature: must be between 0 and 2"},
  };
  for (size_t i = 0; i <= sizeof cases / sizeof *cases; i++) {
    /* The last case: a raw NUL byte inside a string (cJSON keeps it, and the C string ends there). */
    static const char raw_nul[] = "{\"name\":\"w\",\"script\":[{\"from\":\"human\",\"text\":\"ab\0cd\"}]}";
    const char *json = i < sizeof cases / sizeof *cases ? cases[i].in : raw_nul;
    size_t len = i < sizeof cases / sizeof *cases ? strlen(json) : sizeof raw_nul - 1;
    const char *want = i < sizeof cases / sizeof *cases ? cases[i].want : "line 1, column 49: a string holds";
    world_spec spec;
    ag_errmsg em = {""};
    int rc = world_spec_parse(json, len, "w.json", &spec, &em);
    if (rc != AG_ERR_INVALID || !strstr(em.text, want))
      unit_fail_(__FILE__, __LINE__, "case %zu: rc %d, \"%s\", want \"%s\"", i, rc, em.text, want);
    if (rc == AG_OK) world_spec_free(&spec);
  }
  /* Found by fuzz_world when scripted tool calls were marked by a leading U+001E in the reply text: such a
   * text was taken for a call. Replies are typed now, so it is plain text and stays so. */
  static const char marked[] = "{\"name\":\"w\",\"agents\":[{\"name\":\"a\",\"replies\":[\"\\u001e-2a\"]}]}";
  world_spec spec;
  ag_errmsg em = {""};
  CHECK_INT(world_spec_parse(marked, strlen(marked), "w.json", &spec, &em), AG_OK);
  if (!em.text[0]) {
    const llm_script_options *so = &spec.agents[0].llm.script;
    CHECK_INT(so->n_replies, 1);
    CHECK(so->replies[0].tool == NULL);
    CHECK_STR(so->replies[0].text, "\x1e-2a");
    world_spec_free(&spec);
  }
}

/* ---- size: loading is linear (timing is in bench/bench_load.c; here only that it completes and is
 * right, under the suite's timeout even with sanitizers) ---- */

/* A world file of n script agents named a0..a{n-1}, plus dup when not NULL (caller frees). */
static char *big_world(size_t n, const char *dup) {
  size_t cap = 64 + n * 40 + (dup ? 64 : 0);
  char *s = malloc(cap);
  if (!s) return NULL;
  size_t o = (size_t)snprintf(s, cap, "{\"name\":\"big\",\"agents\":[");
  for (size_t i = 0; i < n; i++)
    o += (size_t)snprintf(s + o, cap - o, "%s{\"name\":\"a%zu\",\"provider\":\"script\"}", i ? "," : "", i);
  if (dup) o += (size_t)snprintf(s + o, cap - o, ",{\"name\":\"%s\"}", dup);
  snprintf(s + o, cap - o, "]}");
  return s;
}

static void many_agents_load(void) {
  const size_t n = 80000;
  char *text = big_world(n, NULL);
  world_spec spec;
  ag_errmsg em = {""};
  CHECK_INT(world_spec_parse(text, strlen(text), "big.json", &spec, &em), AG_OK);
  CHECK_INT(spec.n_agents, n);
  struct event_base *base = event_base_new();
  world *w = NULL;
  CHECK_INT(world_new(base, &spec, &w, &em), AG_OK);
  CHECK(w && world_agent_find(w, "a79999") != NULL && world_agent_find(w, "a0") != NULL);
  CHECK(w && world_agent_find(w, "a80000") == NULL);
  world_free(w);
  event_base_free(base);
  world_spec_free(&spec);
  free(text);
  /* The duplicate is still found, and named with its first holder. */
  text = big_world(n, "A123");
  CHECK_INT(world_spec_parse(text, strlen(text), "big.json", &spec, &em), AG_ERR_INVALID);
  CHECK(strstr(em.text, "agents[80000].name: duplicate agent id 'a123' (agents[123] has it too)") != NULL);
  free(text);
}

static void many_mentions_parse(void) {
  /* 160k lines, each opening with a different mention, one repeated: ~1.3 MB. */
  const size_t n = 160000;
  char *text = malloc(n * 12 + 32);
  size_t o = 0;
  for (size_t i = 0; i < n; i++) o += (size_t)sprintf(text + o, "@m%zu hi\n", i);
  o += (size_t)sprintf(text + o, "@m7 again\n@Madame Pedagogue\n");
  const char *ids[40];
  char names[40][16];
  for (int i = 0; i < 39; i++) {
    snprintf(names[i], sizeof names[i], "x%d", i);
    ids[i] = names[i];
  }
  ids[39] = "madame-pedagogue"; /* past the scan limit: resolved through the hashed ids */
  mention_list l = {0};
  CHECK_INT(mention_leading(text, ids, 40, &l), AG_OK);
  CHECK_INT(l.n, n + 1);
  CHECK(l.n == n + 1 && !strcmp(l.ids[0], "m0") && !strcmp(l.ids[n - 1], "m159999") &&
        !strcmp(l.ids[n], "madame-pedagogue"));
  mention_list_free(&l);
  CHECK_INT(mention_anywhere(text, &l), AG_OK);
  CHECK_INT(l.n, n + 2);
  mention_list_free(&l);
  free(text);
}

/* ---- minor load errors (defect 11) ---- */

static void expect_load_error(const char *const *args, const char *want) {
  proc_result r;
  run_agora(&r, args);
  if (r.status != 2 || !strstr(r.err, want) || r.out[0])
    unit_fail_(__FILE__, __LINE__, "%s %s: status %d, stdout \"%.200s\", stderr \"%.300s\", want \"%s\"", args[0],
               args[1], r.status, r.out, r.err, want);
  proc_result_free(&r);
}

static void world_file_load_errors(void) {
  char *dir = unit_tmpdir();
  char path[4096], db[4096];
  snprintf(db, sizeof db, "%s/db", dir);
  /* A directory, as the world file or the snapshot. */
  const char *run_dir[] = {"run", dir, "--no-save", NULL};
  expect_load_error(run_dir, "is a directory");
  const char *imp_dir[] = {"chats", "import", dir, "--db", db, NULL};
  expect_load_error(imp_dir, "is a directory");
  /* A file this user cannot read (root reads everything: then there is nothing to check). */
  snprintf(path, sizeof path, "%s/secret.json", dir);
  CHECK_INT(unit_write_file(path, "{\"name\": \"w\"}"), 0);
  chmod(path, 0);
  if (access(path, R_OK) != 0) {
    const char *run_secret[] = {"run", path, "--no-save", NULL};
    expect_load_error(run_secret, "secret.json");
  }
  /* Over-long sender and text are refused at load, before anything runs or is saved. */
  snprintf(path, sizeof path, "%s/long-from.json", dir);
  CHECK_INT(unit_write_file(path, "{\"name\": \"w\", \"script\": [{\"from\": "
                                  "\"a-sender-name-that-is-far-longer-than-sixty-four-bytes-which-is-the-limit\","
                                  " \"text\": \"hi\"}]}"), 0);
  const char *run_from[] = {"run", path, "--db", db, NULL};
  expect_load_error(run_from, "script[0].from: longer than 64 bytes");
  size_t big = 1024 * 1024 + 10;
  char *text = malloc(big + 128);
  int o = snprintf(text, 128, "{\"name\": \"w\", \"script\": [{\"from\": \"human\", \"text\": \"");
  memset(text + o, 'x', big);
  strcpy(text + o + big, "\"}]}");
  snprintf(path, sizeof path, "%s/long-text.json", dir);
  CHECK_INT(unit_write_file(path, text), 0);
  free(text);
  const char *run_text[] = {"run", path, "--db", db, NULL};
  expect_load_error(run_text, "script[0].text: longer than 1048576 bytes");
  /* "ab\u0000cd" would be cut to "ab": refused, with where it is. */
  snprintf(path, sizeof path, "%s/nul.json", dir);
  CHECK_INT(unit_write_file(path, "{\"name\": \"w\",\n \"script\": [{\"from\": \"human\", \"text\": \"ab\\u0000cd\"}]}"), 0);
  const char *run_nul[] = {"run", path, "--db", db, NULL};
  expect_load_error(run_nul, "nul.json: line 2, column 42: a string holds \\u0000");
  /* An escaped backslash before "u0000" is text, not a NUL. */
  snprintf(path, sizeof path, "%s/not-nul.json", dir);
  CHECK_INT(unit_write_file(path, "{\"name\": \"w\", \"script\": [{\"from\": \"human\", \"text\": \"ab\\\\u0000cd\"}]}"), 0);
  proc_result r;
  const char *run_ok[] = {"run", path, "--no-save", NULL};
  run_agora(&r, run_ok);
  CHECK_INT(r.status, 0);
  CHECK(strstr(r.out, "ab\\u0000cd") != NULL);
  proc_result_free(&r);
  /* Nothing was saved by the refused runs. */
  const char *list[] = {"chats", "list", "--json", "--db", db, NULL};
  run_agora(&r, list);
  CHECK_STR(r.out, "");
  proc_result_free(&r);
  unit_rmrf(dir);
  free(dir);
}

static void snapshot_nul_refused(void) {
  char *dir = unit_tmpdir();
  char path[4096], db[4096];
  snprintf(db, sizeof db, "%s/db", dir);
  snap_case c = {"@alice hi", "@alice h\\u0000i", ""};
  char *text = snap_variant(&c);
  snprintf(path, sizeof path, "%s/nul.json", dir);
  CHECK_INT(unit_write_file(path, text), 0);
  free(text);
  const char *imp[] = {"chats", "import", path, "--db", db, NULL};
  expect_load_error(imp, "a string holds \\u0000");
  unit_rmrf(dir);
  free(dir);
}

SUITE_RUN((UNIT(json_int_whole_finite_in_range), UNIT(json_int_written_exactly),
  UNIT(strset_adds_finds_and_refuses_duplicates), UNIT(snapshot_numbers_checked), UNIT(context_version_out_of_range),
  UNIT(import_refuses_bad_numbers), UNIT(snapshot_numbers_round_trip_exactly), UNIT(world_file_numbers_checked),
  UNIT(many_agents_load), UNIT(many_mentions_parse), UNIT(world_file_load_errors), UNIT(snapshot_nul_refused)))
