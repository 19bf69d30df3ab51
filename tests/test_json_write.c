/* The direct JSON writer (common/json_write.h) and the stored thread's writer of event fields
 * (chat_event_put_fields): byte for byte what cJSON_PrintUnformatted writes for the same values — every
 * byte escaped or not as cJSON does, UTF-8 (valid or not) passed through, whole numbers at the edges,
 * and every event kind against its cJSON tree (chat_event_fields). */
#include "chat/event_json.h"
#include "common/error.h"
#include "common/json_write.h"
#include "common/jsonnum.h"
#include "storage/store.h"
#include "support/suite.h"
#include "support/tsession.h"
#include "support/unit.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* What cJSON prints for the string s. Caller frees. */
static char *cjson_string(const char *s) {
  cJSON *j = cJSON_CreateString(s);
  char *text = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  return text;
}

static void check_string(const char *s) {
  ag_buf b;
  ag_buf_init(&b, 1 << 20);
  char *want = cjson_string(s);
  CHECK_INT(ag_json_put_string(&b, s, AG_JSON_UTF8_RAW), AG_OK);
  CHECK_STR(ag_buf_str(&b), want);
  free(want);
  ag_buf_free(&b);
}

/* Quotes, backslashes, every control character, DEL, and UTF-8 of 2, 3 and 4 bytes. */
static void strings_escape_as_cjson(void) {
  const char *cases[] = {"",       "plain",           "say \"hi\"",          "back\\slash\\",
                         "\\\"",   "tab\tnl\ncr\r",   "\b\f",                "\x01\x02\x1e\x1f",
                         "del\x7f", "caf\xc3\xa9",    "\xe6\x97\xa5\xe6\x9c\xac", "\xf0\x9f\x98\x80 end",
                         "\"\\\n\"", "mixed \x1b[0m \xc3\xa9 \"q\" \\ \x7f"};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_string(cases[i]);
  char one[2] = {0};
  for (int c = 1; c < 256; c++) { /* each byte alone: escaped, or copied as it is */
    one[0] = (char)c;
    check_string(one);
  }
  char all[256];
  for (int c = 1; c < 256; c++) all[c - 1] = (char)c;
  all[255] = '\0';
  check_string(all);
}

/* Bytes that are not UTF-8 go through as cJSON lets them (the raw mode the thread uses), and are
 * refused in the checking mode, which takes valid UTF-8 unchanged. */
static void invalid_utf8_raw_or_refused(void) {
  const char *bad[] = {"\xff", "a\xc3(", "\xed\xa0\x80 surrogate", "\xf0\x9f\x98 cut", "\xc0\xaf overlong"};
  ag_buf b;
  ag_buf_init(&b, 1024);
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    check_string(bad[i]);
    ag_buf_reset(&b);
    CHECK_INT(ag_json_put_string(&b, bad[i], AG_JSON_UTF8_CHECK), AG_ERR_INVALID);
  }
  const char *good = "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80 \"\n\"";
  char *want = cjson_string(good);
  ag_buf_reset(&b);
  CHECK_INT(ag_json_put_string(&b, good, AG_JSON_UTF8_CHECK), AG_OK);
  CHECK_STR(ag_buf_str(&b), want);
  free(want);
  ag_buf_free(&b);
}

/* An object's members against the same members added to a cJSON object (ints as ag_json_add_int makes
 * them: plain numbers below 10^15, exact raw text from there). */
static void members_match_cjson(void) {
  const int64_t ints[] = {0, 1, -1, 42, INT32_MAX, (int64_t)INT32_MAX + 1, INT32_MIN, 999999999999999,
                          1000000000000000, -1000000000000000, AG_JSON_INT_MAX, INT64_MAX, INT64_MIN};
  cJSON *o = cJSON_CreateObject();
  ag_buf b;
  ag_buf_init(&b, 4096);
  ag_json_members m = {.b = &b, .rc = ag_buf_append(&b, "{", 1)};
  for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
    char key[16];
    snprintf(key, sizeof key, "i%zu", i);
    ag_json_add_int(o, key, ints[i]);
    ag_json_member_int(&m, key, ints[i]);
  }
  cJSON_AddStringToObject(o, "k\"ey\n", "v\\al\x01");
  ag_json_member_string(&m, "k\"ey\n", "v\\al\x01");
  ag_json_member_string(&m, "absent", NULL); /* cJSON_AddStringToObject adds nothing for NULL */
  cJSON_AddStringToObject(o, "absent", NULL);
  cJSON_AddBoolToObject(o, "t", 1);
  ag_json_member_bool(&m, "t", 1);
  cJSON_AddBoolToObject(o, "f", 0);
  ag_json_member_bool(&m, "f", 0);
  cJSON_AddNullToObject(o, "n");
  ag_json_member_null(&m, "n");
  cJSON_AddRawToObject(o, "raw", "[1,{\"a\":2}]");
  ag_json_member_raw(&m, "raw", "[1,{\"a\":2}]");
  CHECK_INT(m.rc, AG_OK);
  CHECK_INT(ag_buf_append(&b, "}", 1), AG_OK);
  char *want = cJSON_PrintUnformatted(o);
  CHECK_STR(ag_buf_str(&b), want);
  free(want);
  cJSON_Delete(o);
  ag_buf_free(&b);
}

/* Past the buffer's cap the first error sticks and later members write nothing. */
static void cap_error_sticks(void) {
  ag_buf b;
  ag_buf_init(&b, 16);
  ag_json_members m = {.b = &b};
  ag_json_member_string(&m, "text", "far longer than sixteen bytes");
  CHECK_INT(m.rc, AG_ERR_TOO_BIG);
  size_t len = b.len;
  ag_json_member_int(&m, "n", 1);
  CHECK_INT(m.rc, AG_ERR_TOO_BIG);
  CHECK_INT(b.len, len);
  ag_buf_free(&b);
}

#define NASTY "q\"b\\s \x01\x1f\x7f\t\n caf\xc3\xa9 \xf0\x9f\x98\x80 \xff"

/* One event of every kind, strings at their worst, numbers at the edges. */
static const char *const names[] = {"bob", NASTY};

static world_event events[] = {
    {EV_LLM_START, .u.llm_start = {.agent = NASTY, .provider = "openai", .seq = 7, .rerun = 1}},
    {EV_LLM_START, .u.llm_start = {.agent = "a", .provider = NULL}},
    {EV_LLM_CHUNK, .u.llm_chunk = {.agent = "a", .text = NASTY, .len = sizeof NASTY - 1}},
    {EV_LLM_DONE, .u.llm_done = {.agent = "a", .chars = 12, .input_tokens = 1000000000000001, .output_tokens = 3,
                                 .estimated = 1, .cached = 1, .usd = 0.000123456789}},
    {EV_LLM_DONE, .u.llm_done = {.agent = "a", .chars = 0, .input_tokens = 5, .output_tokens = 0, .usd = 1.0 / 3}},
    {EV_LLM_ERROR, .u.llm_error = {.agent = "a", .error = NASTY, .has_info = 1, .http_status = 429, .attempts = 3,
                                   .error_type = "rate_limit"}},
    {EV_LLM_ERROR, .u.llm_error = {.agent = "a", .error = NULL}},
    {EV_TURN_LIMIT, .u.turn_limit = {.agent = "a", .limit = 5}},
    {EV_TOOL_CALL, .u.tool = {.agent = "a", .tool = "t", .call_id = "c1", .json = "{ \"x\" : [1, 2.5, 1e300] }"}},
    {EV_TOOL_CALL, .u.tool = {.agent = "a", .tool = NULL, .call_id = NULL, .json = "not json " NASTY}},
    {EV_TOOL_RESULT, .u.tool = {.agent = "a", .tool = "t", .call_id = "c1", .json = NULL, .error = 1,
                                .at_ms = INT64_C(1764000000123)}},
    {EV_UNKNOWN_MENTION, .u.unknown = {.sender = "human", .names = names, .n_names = 2, .seq = 9}},
    {EV_AGENT_ADDED, .u.agent = {.agent = "a", .name = NASTY, .provider = "script"}},
    {EV_AGENT_REMOVED, .u.agent = {.agent = "a", .name = "A"}},
    {EV_NEW_CHAT_CREATED, .u.chat = {.id = "c-1"}},
    {EV_CHAT_REUSED, .u.chat = {.id = "c-1"}},
    {EV_CHAT_DELETED, .u.chat = {.id = "c-1", .current = NULL}},
    {EV_CHAT_DELETED, .u.chat = {.id = "c-1", .current = "c-2"}},
    {EV_TITLE_UPDATED, .u.title = {.title = NASTY}},
    {EV_STATE_SAVED, .u.saved = {.seq = UINT64_C(9007199254740991), .messages = 4}},
    {EV_STORAGE_ERROR, .u.storage = {.error = "disk full"}},
    {EV_CHAT_RESUMED, .u.chat_open = {.id = "c", .title = "t", .messages = 3}},
    {EV_CHAT_LOADED, .u.chat_open = {.id = "c", .title = NASTY, .messages = 0}},
    {EV_APPROVAL, .u.approval = {.agent = "a", .tool = "rm", .approved = 0, .ended = "timeout"}},
    {EV_CANCELLED, .u.cancelled = {.agents = "a, b"}},
    {EV_CANCELLED, .u.cancelled = {.agents = NULL}},
    {EV_SEQS_MOVED, .u.seqs_moved = {.by = 3, .messages = 2}},
    {EV_MEMORY_CLEARED, .u.cleared = {.agent = "a"}},
    {EV_NOT_ADDRESSED, .u.not_addressed = {.who = {.sender = "human", .names = names, .n_names = 1, .seq = 2},
                                           .message = NASTY}},
    {EV_SCHEDULE_SKIPPED, .u.skipped = {.item = 2, .due_ms = INT64_C(1764000000000)}},
    {EV_CLOCK_ADVANCED, .u.advanced = {.sim_ms = INT64_C(1764000000999)}},
    {EV_TURN_QUEUED, .u.turn_queued = {.agent = "a", .seq = 4, .rerun = 1}},
    {EV_TURN_END, .u.turn_end = {.agent = "a", .seq = 4, .cancelled = 1, .queued = 1}},
    {EV_TURN_END, .u.turn_end = {.agent = "a", .seq = 5}},
    {EV_TURNS_RESUMED, .u.resumed = {.replies = 2, .agents = "a, b"}},
    {EV_MCP_ERROR, .u.mcp = {.server = "fs", .error = NASTY}},
    {EV_BUDGET_EXHAUSTED, .u.budget = {.tokens = 100, .usd = 0.1 + 0.2, .limit_tokens = 0, .limit_usd = 2}},
    {EV_RATE_LIMITED, .u.rate = {.endpoint = "http://x/v1", .until_ms = INT64_C(1764000001000)}},
    {EV_CONTEXT_SHRUNK, .u.shrunk = {.agent = "a", .error = NULL, .window = 8}},
    {EV_SUMMARY, .u.summary = {.agent = "a", .summary = NASTY, .upto = 12}},
    {EV_MEMORY_RETRIEVED, .u.retrieved = {.agent = "a", .count = 3}},
    {EV_REFLECTION, .u.reflection = {.agent = "a", .insights = "[{\"text\": \"x\", \"importance\": 7.5}]", .at_ms = 5}},
    {EV_REFLECTION, .u.reflection = {.agent = "a", .insights = "[broken", .at_ms = -5}},
    {EV_MEMORY_RATED, .u.rated = {.agent = "a", .ratings = "[[1, 5], [2, 10]]"}},
    {EV_MEMORY_RATED, .u.rated = {.agent = "a", .ratings = NULL}},
};

/* Every kind, written directly, is what cJSON prints for its tree (the stored thread was that text). */
static void event_fields_match_the_tree(void) {
  int covered[EV_KIND_COUNT] = {0};
  ag_buf b;
  ag_buf_init(&b, 1 << 20);
  for (size_t i = 0; i < sizeof events / sizeof *events; i++) {
    const world_event *e = &events[i];
    covered[e->kind] = 1;
    cJSON *tree = chat_event_fields(e);
    char *want = cJSON_PrintUnformatted(tree);
    cJSON_Delete(tree);
    ag_buf_reset(&b);
    ag_json_members m = {.b = &b, .rc = ag_buf_append(&b, "{", 1)};
    CHECK_INT(chat_event_put_fields(&m, e), AG_OK);
    CHECK_INT(ag_buf_append(&b, "}", 1), AG_OK);
    if (strcmp(ag_buf_str(&b), want)) fprintf(stderr, "event %zu (%s) differs\n", i, ev_kind_name(e->kind));
    CHECK_STR(ag_buf_str(&b), want);
    free(want);
  }
  for (int k = 0; k < EV_KIND_COUNT; k++) /* a new kind needs its row above */
    if (!covered[k]) unit_fail_(__FILE__, __LINE__, "no event of kind %s in the table", ev_kind_name((ev_kind)k));
  ag_buf_free(&b);
}

/* ---- the stored thread, end to end ---- */

static llm_server *srv;
static const char *const env[] = {"AGORA_TEST_KEY=sk-test-0123456789", NULL};

typedef struct thread_check {
  const char *chat;
  int steps, canonical;
  char kinds[512]; /* each step's type, space-separated */
} thread_check;

/* A stored step is what cJSON prints for it: its own text parsed and printed again. */
static int step_cb(const char *json, size_t len, void *arg) {
  thread_check *c = arg;
  cJSON *j = cJSON_ParseWithLength(json, len);
  char *again = j ? cJSON_PrintUnformatted(j) : NULL;
  c->steps++;
  if (again && strlen(again) == len && !memcmp(again, json, len)) c->canonical++;
  else fprintf(stderr, "not as cJSON prints it: %.*s\n", (int)len, json);
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(j, "type");
  if (cJSON_IsString(type) && strlen(c->kinds) + strlen(type->valuestring) + 2 < sizeof c->kinds)
    strcat(strcat(c->kinds, type->valuestring), " ");
  free(again);
  cJSON_Delete(j);
  return 0;
}

static int scan_txn(store_txn *t, void *arg) {
  thread_check *c = arg;
  return store_thread_scan(t, c->chat, step_cb, c);
}

/* A world whose replies leave every common step in the thread (a tool call and its result with text
 * that needs escaping, usage, an error, the turns' bookkeeping): each stored step is cJSON's text. */
static void stored_steps_are_cjson_text(void) {
  char json[2048];
  const char *url = llm_server_url(srv, "/v1");
  snprintf(json, sizeof json,
           "{\"name\": \"w\", \"defaults\": {\"provider\": \"openai\", \"base_url\": \"%s\","
           " \"api_key_env\": \"AGORA_TEST_KEY\", \"model\": \"m\", \"stream\": false}, \"agents\": ["
           "{\"name\": \"ann\", \"tools\": [\"save_context\"], \"system_prompt\": \"[[mock tool=save_context"
           " args={\\\"message\\\":\\\"caf\u00e9\\\\t\\\\\\\"q\\\\\\\"\\\",\\\"topics\\\":[\\\"a\\\"]}"
           " after_tool=\\\"saved \\\\\\\"it\\\\\\\"\\\"]]\"},"
           "{\"name\": \"bob\","
           " \"system_prompt\": \"[[mock status=400 error_message=\\\"no \\\\\\\"way\\\\\\\"\\\"]]\"}]}",
           url);
  tsession f;
  tsession_open(&f, json);
  CHECK_INT(chat_session_new(f.cs, NULL), AG_OK);
  tsession_say(&f, "human", "Hello, everyone.");
  thread_check c = {.chat = chat_session_current(f.cs)};
  CHECK_INT(store_read(f.st, scan_txn, &c, NULL), AG_OK);
  CHECK(c.steps >= 7);
  CHECK_INT(c.canonical, c.steps);
  CHECK_HAS(c.kinds, "llm-start ", "tool-call ", "tool-result ", "llm-done ", "llm-error ", "turn-end ");
  tsession_close(&f);
}

SUITE_RUN((UNIT(strings_escape_as_cjson), UNIT(invalid_utf8_raw_or_refused), UNIT(members_match_cjson),
           UNIT(cap_error_sticks), UNIT(event_fields_match_the_tree), UNIT(stored_steps_are_cjson_text)),
          .env = env, .srv = &srv)
