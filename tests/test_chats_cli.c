/* End to end through the built binary: saving by `run` (titles, counts, --chat, --no-save) and `chats
 * list|new` per docs/cli.md and docs/behaviour.md §6 — reuse of an empty chat, the old chat's state kept,
 * usage errors. Deleting and showing are in test_chats_show_delete, snapshots in test_chats_snapshot. */
#include "support/proc.h"
#include "support/suite.h"
#include "support/tchats.h"
#include "support/tjson.h"
#include "support/unit.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- helpers ---- */

/* "2026-11-22T10:00:00.123Z" exactly. */
static int is_rfc3339_ms(const char *s) {
  static const char pat[] = "dddd-dd-ddTdd:dd:dd.dddZ";
  if (!s || strlen(s) != sizeof pat - 1) return 0;
  for (size_t i = 0; pat[i]; i++)
    if (pat[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != pat[i]) return 0;
  return 1;
}

/* The snapshot's state of agent id (borrowed), or NULL. */
static const cJSON *snap_agent(const cJSON *snap, const char *id) {
  const cJSON *a;
  cJSON_ArrayForEach(a, cJSON_GetObjectItem(snap, "agents")) if (!strcmp(tjson_str(a, "id"), id)) return a;
  return NULL;
}

/* Only a world message that addresses no one: the chat keeps the title "New Chat". */
static const char quiet_world[] =
  "{\"name\": \"Quiet\", \"defaults\": {\"provider\": \"script\"},"
  " \"agents\": [{\"name\": \"a\", \"replies\": [\"hm\"]}],"
  " \"script\": [{\"from\": \"world\", \"text\": \"Rain falls. Somewhere @a sleeps.\"}]}";

/* ---- run saves ---- */

static void run_saves_chat(void) {
  tchats_env e;
  tchats_env_open(&e);
  char world[4096], id[64];
  tchats_env_file(&e, "trip.json", tchats_trip_world, world);
  char *msgs = tchats_run_saved(e.db, world, id, sizeof id);
  CHECK_STR(msgs, "world|world|The office is quiet; nobody calls @planner yet.\n"
                  "human|human|Hello, can you help me plan a trip to **Lisbon**\n"
                  "planner|agent|Sure, Lisbon in May.\n");
  CHECK_INT(strlen(id), 13);
  cJSON *list = tchats_list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 1);
  const cJSON *c = cJSON_GetArrayItem(list, 0);
  CHECK_INT(cJSON_GetArraySize(c), 7); /* exactly the fields of docs/cli.md */
  CHECK_STR(tjson_str(c, "id"), id);
  CHECK_STR(tjson_str(c, "world"), "trip-planner");
  CHECK_STR(tjson_str(c, "title"), "Plan a trip to Lisbon"); /* the first human message, not the world's */
  CHECK_INT(tjson_num(c, "message_count"), 3);
  CHECK(is_rfc3339_ms(tjson_str(c, "created_at")));
  CHECK(is_rfc3339_ms(tjson_str(c, "updated_at")));
  CHECK(tjson_str(c, "created_at") && tjson_str(c, "updated_at") && strcmp(tjson_str(c, "created_at"), tjson_str(c, "updated_at")) <= 0);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(c, "current")));

  proc_result r;
  tchats_ag(&r, e.db, "worlds", "list", "--json", NULL);
  CHECK_INT(r.status, 0);
  cJSON *w = cJSON_Parse(r.out);
  CHECK_INT(cJSON_GetArraySize(w), 5);
  CHECK_STR(tjson_str(w, "id"), "trip-planner");
  CHECK_STR(tjson_str(w, "name"), "Trip Planner");
  CHECK_INT(tjson_num(w, "agents"), 1);
  CHECK_INT(tjson_num(w, "chats"), 1);
  CHECK_STR(tjson_str(w, "current_chat"), id);
  CHECK(strchr(r.out, '\n') == r.out + strlen(r.out) - 1); /* one line */
  cJSON_Delete(w);
  proc_result_free(&r);
  cJSON_Delete(list);
  free(msgs);
  tchats_env_close(&e);
}

/* Newest updated first; --world filters; worlds list has one line per world. */
static void list_order_and_filter(void) {
  tchats_env e;
  tchats_env_open(&e);
  char trip[4096], counter[4096], id1[64], id2[64], id3[64];
  tchats_env_file(&e, "trip.json", tchats_trip_world, trip);
  tchats_env_file(&e, "counter.json", tchats_counter_world, counter);
  free(tchats_run_saved(e.db, trip, id1, sizeof id1));
  free(tchats_run_saved(e.db, counter, id2, sizeof id2));
  free(tchats_run_saved(e.db, trip, id3, sizeof id3)); /* the titled chat is not reused: a new one */
  CHECK(strcmp(id1, id3) != 0);
  cJSON *list = tchats_list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 3);
  CHECK_STR(tjson_str(cJSON_GetArrayItem(list, 0), "id"), id3);
  CHECK_STR(tjson_str(cJSON_GetArrayItem(list, 1), "id"), id2);
  CHECK_STR(tjson_str(cJSON_GetArrayItem(list, 2), "id"), id1);
  for (int i = 0; i + 1 < cJSON_GetArraySize(list); i++) {
    const char *a = tjson_str(cJSON_GetArrayItem(list, i), "updated_at"), *b = tjson_str(cJSON_GetArrayItem(list, i + 1), "updated_at");
    CHECK(a && b && strcmp(a, b) >= 0);
  }
  /* Each world has its own current chat. */
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(tchats_find_chat(list, id3), "current")));
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(tchats_find_chat(list, id2), "current")));
  CHECK(cJSON_IsFalse(cJSON_GetObjectItem(tchats_find_chat(list, id1), "current")));
  cJSON_Delete(list);

  list = tchats_list_chats(e.db, "trip-planner");
  CHECK_INT(cJSON_GetArraySize(list), 2);
  const cJSON *c;
  cJSON_ArrayForEach(c, list) CHECK_STR(tjson_str(c, "world"), "trip-planner");
  cJSON_Delete(list);
  list = tchats_list_chats(e.db, "counter");
  CHECK_INT(cJSON_GetArraySize(list), 1);
  CHECK_STR(tjson_str(cJSON_GetArrayItem(list, 0), "id"), id2);
  cJSON_Delete(list);

  /* A world by its display name too; an unknown one is an error (issue 15 item 9). */
  list = tchats_list_chats(e.db, "Trip Planner");
  CHECK_INT(cJSON_GetArraySize(list), 2);
  cJSON_Delete(list);
  proc_result r;
  TCHATS_REFUSED(e.db, "no world 'nope'", "chats", "list", "--world", "nope", NULL);
  tchats_ag(&r, e.db, "chats", "new", "--world", "Counter", NULL);
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  tchats_ag(&r, e.db, "worlds", "list", NULL);
  CHECK_INT(r.status, 0);
  CHECK(strstr(r.out, "  1 agent ") != NULL && strstr(r.out, "1 agents") == NULL);
  CHECK(strstr(r.out, "    2 chats  current") != NULL);
  proc_result_free(&r);
  tchats_ag(&r, e.db, "worlds", "list", "--json", NULL);
  CHECK_INT(r.status, 0);
  char *nl = strchr(r.out, '\n');
  CHECK(nl != NULL);
  cJSON *w1 = cJSON_Parse(r.out), *w2 = nl ? cJSON_Parse(nl + 1) : NULL;
  CHECK_STR(tjson_str(w1, "id"), "counter");
  CHECK_INT(tjson_num(w1, "chats"), 2); /* the one `chats new --world Counter` made */
  CHECK_STR(tjson_str(w2, "id"), "trip-planner");
  CHECK_INT(tjson_num(w2, "chats"), 2);
  CHECK_STR(tjson_str(w2, "current_chat"), id3);
  cJSON_Delete(w1);
  cJSON_Delete(w2);
  proc_result_free(&r);

  /* With two worlds, `chats new` must be told which. */
  TCHATS_REFUSED(e.db, "--world", "chats", "new", NULL);
  tchats_env_close(&e);
}

/* ---- reuse ---- */

static void new_reuses_empty_chat(void) {
  tchats_env e;
  tchats_env_open(&e);
  proc_result r;
  TCHATS_REFUSED(e.db, "no world", "chats", "new", NULL); /* no world yet */

  char world[4096], id1[64], id2[64], id3[64];
  tchats_env_file(&e, "trip.json", tchats_trip_world, world);
  free(tchats_run_saved(e.db, world, id1, sizeof id1));
  tchats_ag(&r, e.db, "chats", "new", NULL);
  CHECK_INT(r.status, 0);
  tchats_out_trim(&r, id2, sizeof id2);
  proc_result_free(&r);
  CHECK(strcmp(id1, id2) != 0); /* the titled chat is kept, a fresh one made */
  CHECK_INT(strlen(id2), 13);
  tchats_ag(&r, e.db, "chats", "new", "--world", "trip-planner", NULL);
  CHECK_INT(r.status, 0);
  tchats_out_trim(&r, id3, sizeof id3);
  proc_result_free(&r);
  CHECK_STR(id3, id2); /* an empty New Chat is reused */
  cJSON *list = tchats_list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 2);
  const cJSON *c = tchats_find_chat(list, id2);
  CHECK_STR(tjson_str(c, "title"), "New Chat");
  CHECK_INT(tjson_num(c, "message_count"), 0);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(c, "current")));
  c = tchats_find_chat(list, id1);
  CHECK_INT(tjson_num(c, "message_count"), 3);
  CHECK(cJSON_IsFalse(cJSON_GetObjectItem(c, "current")));
  cJSON_Delete(list);
  tchats_env_close(&e);
}

/* A chat that only holds a world message keeps "New Chat" and is reused with its messages. */
static void new_reuses_untitled_chat(void) {
  tchats_env e;
  tchats_env_open(&e);
  char world[4096], id1[64], id2[64];
  tchats_env_file(&e, "quiet.json", quiet_world, world);
  char *msgs = tchats_run_saved(e.db, world, id1, sizeof id1);
  CHECK_STR(msgs, "world|world|Rain falls. Somewhere @a sleeps.\n");
  free(msgs);
  cJSON *list = tchats_list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 1);
  CHECK_STR(tjson_str(cJSON_GetArrayItem(list, 0), "title"), "New Chat");
  CHECK_INT(tjson_num(cJSON_GetArrayItem(list, 0), "message_count"), 1);
  cJSON_Delete(list);

  proc_result r;
  tchats_ag(&r, e.db, "chats", "new", NULL);
  CHECK_INT(r.status, 0);
  tchats_out_trim(&r, id2, sizeof id2);
  proc_result_free(&r);
  CHECK_STR(id2, id1);
  list = tchats_list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 1);
  CHECK_INT(tjson_num(cJSON_GetArrayItem(list, 0), "message_count"), 1);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "current")));
  cJSON_Delete(list);

  /* A run reuses it too, and its seq goes on after the kept message. */
  tchats_ag(&r, e.db, "run", world, "--json", NULL);
  CHECK_INT(r.status, 0);
  CHECK(strstr(r.out, "\"event\":\"chat-reused\"") != NULL);
  CHECK(strstr(r.out, "\"seq\":2,\"sender\":\"world\"") != NULL);
  proc_result_free(&r);
  list = tchats_list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 1);
  CHECK_STR(tjson_str(cJSON_GetArrayItem(list, 0), "id"), id1);
  CHECK_INT(tjson_num(cJSON_GetArrayItem(list, 0), "message_count"), 2);
  cJSON_Delete(list);
  tchats_ag(&r, e.db, "replay", id1, "--json", NULL);
  CHECK_INT(r.status, 0);
  CHECK_MESSAGES(r.out, "world|world|Rain falls. Somewhere @a sleeps.\nworld|world|Rain falls. Somewhere @a sleeps.\n");
  proc_result_free(&r);
  tchats_env_close(&e);
}

/* Making a new chat (by `chats new` or by another `run`) must not touch the saved state of the chat
 * it leaves: the agents' turn counts and reply counters stay as they were stored. */
static void new_chat_keeps_old_state(void) {
  tchats_env e;
  tchats_env_open(&e);
  char id1[64], id2[64], id3[64];
  free(tchats_run_saved(e.db, unit_src_path("examples/debate.json"), id1, sizeof id1));
  cJSON *before = tchats_export_chat(e.db, id1);
  const cJSON *alice = snap_agent(before, "alice");
  CHECK_INT(tjson_num(alice, "turn_count"), 3);
  CHECK_INT(tjson_num(alice, "reply_counter"), 3);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(alice, "notice_sent")));

  proc_result r;
  tchats_ag(&r, e.db, "chats", "new", NULL);
  CHECK_INT(r.status, 0);
  tchats_out_trim(&r, id2, sizeof id2);
  proc_result_free(&r);
  CHECK(strcmp(id1, id2) != 0);
  cJSON *after = tchats_export_chat(e.db, id1);
  if (!cJSON_Compare(cJSON_GetObjectItem(before, "agents"), cJSON_GetObjectItem(after, "agents"), 1)) {
    char *a = cJSON_PrintUnformatted(cJSON_GetObjectItem(before, "agents"));
    char *b = cJSON_PrintUnformatted(cJSON_GetObjectItem(after, "agents"));
    unit_fail_(__FILE__, __LINE__, "`chats new` changed the old chat's agents:\n    before %s\n    after  %s", a, b);
    free(a);
    free(b);
  }
  CHECK(cJSON_Compare(cJSON_GetObjectItem(before, "messages"), cJSON_GetObjectItem(after, "messages"), 1));
  cJSON_Delete(after);

  /* A run reuses the empty id2 and titles it; the next run leaves it for a new chat. */
  free(tchats_run_saved(e.db, unit_src_path("examples/debate.json"), id3, sizeof id3));
  CHECK_STR(id3, id2);
  free(tchats_run_saved(e.db, unit_src_path("examples/debate.json"), id3, sizeof id3));
  CHECK(strcmp(id3, id2) != 0);
  after = tchats_export_chat(e.db, id2);
  alice = snap_agent(after, "alice");
  CHECK_INT(tjson_num(alice, "reply_counter"), 3);
  CHECK_INT(tjson_num(alice, "turn_count"), 3);
  cJSON_Delete(after);
  cJSON_Delete(before);
  tchats_env_close(&e);
}

/* ---- run --chat, --no-save ---- */

static void run_continues_chat(void) {
  tchats_env e;
  tchats_env_open(&e);
  char world[4096], id[64], id2[64];
  tchats_env_file(&e, "counter.json", tchats_counter_world, world);
  char *msgs = tchats_run_saved(e.db, world, id, sizeof id);
  CHECK_STR(msgs, "human|human|@a count with me\na|agent|one\n");
  free(msgs);

  proc_result r;
  tchats_ag(&r, e.db, "run", world, "--chat", id, "--json", NULL);
  CHECK_INT(r.status, 0);
  msgs = proc_messages(r.out);
  /* The script provider's counter goes on: the agent remembers it already said "one". */
  CHECK_STR(msgs, "human|human|@a count with me\na|agent|two\n");
  free(msgs);
  CHECK(strstr(r.out, "\"seq\":3,\"sender\":\"human\"") != NULL);
  CHECK(strstr(r.out, "\"seq\":4,\"sender\":\"a\"") != NULL);
  CHECK(strstr(r.out, "\"seq\":1,") == NULL);
  CHECK(strstr(r.out, "new-chat-created") == NULL && strstr(r.out, "chat-reused") == NULL);
  char *chat = strstr(r.out, "\"chat\":\"");
  CHECK(chat && strncmp(chat + 8, id, strlen(id)) == 0);
  proc_result_free(&r);

  cJSON *list = tchats_list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 1);
  CHECK_STR(tjson_str(cJSON_GetArrayItem(list, 0), "id"), id);
  CHECK_INT(tjson_num(cJSON_GetArrayItem(list, 0), "message_count"), 4);
  CHECK_STR(tjson_str(cJSON_GetArrayItem(list, 0), "title"), "Count with me");
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "current")));
  cJSON_Delete(list);
  /* Its memory holds the earlier messages, then the new ones. */
  cJSON *snap = tchats_export_chat(e.db, id);
  char *mem = cJSON_PrintUnformatted(cJSON_GetObjectItem(snap_agent(snap, "a"), "memory"));
  CHECK_STR(mem, "[1,2,3,4]");
  free(mem);
  cJSON_Delete(snap);

  /* A continued chat can be continued again, even after another chat became current. */
  tchats_ag(&r, e.db, "chats", "new", NULL);
  CHECK_INT(r.status, 0);
  tchats_out_trim(&r, id2, sizeof id2);
  proc_result_free(&r);
  CHECK(strcmp(id2, id) != 0);
  tchats_ag(&r, e.db, "run", world, "--chat", id, "--json", NULL);
  CHECK_INT(r.status, 0);
  msgs = proc_messages(r.out);
  CHECK_STR(msgs, "human|human|@a count with me\na|agent|three\n");
  free(msgs);
  CHECK(strstr(r.out, "\"seq\":5,\"sender\":\"human\"") != NULL);
  proc_result_free(&r);
  list = tchats_list_chats(e.db, NULL);
  CHECK_INT(tjson_num(tchats_find_chat(list, id), "message_count"), 6);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(tchats_find_chat(list, id), "current")));
  CHECK(cJSON_IsFalse(cJSON_GetObjectItem(tchats_find_chat(list, id2), "current")));
  cJSON_Delete(list);

  char *raw = tchats_list_raw(e.db);
  TCHATS_REFUSED(e.db, "0zzzzzzzzzzzz", "run", world, "--chat", "0zzzzzzzzzzzz", NULL);
  TCHATS_REFUSED(e.db, "--no-save", "run", world, "--chat", id, "--no-save", NULL);
  char *raw2 = tchats_list_raw(e.db);
  CHECK_STR(raw2, raw);
  free(raw);
  free(raw2);
  tchats_env_close(&e);
}

static void no_save_writes_nothing(void) {
  tchats_env e;
  tchats_env_open(&e);
  char world[4096];
  tchats_env_file(&e, "trip.json", tchats_trip_world, world);
  proc_result r;
  tchats_ag(&r, e.db, "run", world, "--json", "--no-save", NULL);
  CHECK_INT(r.status, 0);
  CHECK_MESSAGES(r.out, "world|world|The office is quiet; nobody calls @planner yet.\n"
                        "human|human|Hello, can you help me plan a trip to **Lisbon**\n"
                        "planner|agent|Sure, Lisbon in May.\n");
  CHECK(strstr(r.out, "state-saved") == NULL);
  proc_result_free(&r);
  struct stat sb;
  CHECK(stat(e.db, &sb) != 0); /* not even the directory */

  /* With a database already there, --no-save changes nothing in it. */
  free(tchats_run_saved(e.db, world, NULL, 0));
  char *before = tchats_list_raw(e.db);
  tchats_ag(&r, e.db, "run", world, "--no-save", NULL);
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  char *after = tchats_list_raw(e.db);
  CHECK_STR(after, before);
  cJSON *list = tchats_list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 1);
  cJSON_Delete(list);
  free(before);
  free(after);
  tchats_env_close(&e);
}

/* ---- usage ---- */

static void usage_errors(void) {
  tchats_env e;
  tchats_env_open(&e);
  /* The default data directory points into the scratch directory, in case anything opened it. */
  char home[4200];
  snprintf(home, sizeof home, "AGORA_HOME=%s", e.db);
  const char *env_vars[] = {home, NULL};
  static const struct {
    const char *args[7];
    const char *want;
  } cases[] = {
    {{"chats", NULL}, "usage: agora chats"},
    {{"chats", "frob", NULL}, "unknown command 'frob'"},
    {{"chats", "show", NULL}, "chats show: expected 1 argument"},
    {{"chats", "show", "--json", NULL}, "chats show: expected 1 argument"},
    {{"chats", "delete", NULL}, "chats delete: expected 1 argument"},
    {{"chats", "export", NULL}, "chats export: expected 1 argument"},
    {{"chats", "import", NULL}, "chats import: expected 1 argument"},
    {{"chats", "list", "extra", NULL}, "chats list: expected 0 arguments"},
    {{"chats", "list", "--bogus", NULL}, "unknown option '--bogus'"},
    {{"chats", "export", "x", "-o", NULL}, "-o needs a value"},
    {{"chats", "list", "--world", NULL}, "--world needs a value"},
    {{"replay", NULL}, "replay: missing CHAT_ID"},
    {{"replay", "--json", NULL}, "replay: missing CHAT_ID"},
    {{"replay", "x", "--bogus", NULL}, "unknown option '--bogus'"},
    {{"replay", "x", "y", NULL}, "unexpected argument 'y'"},
    {{"replay", "x", "--delay", NULL}, "--delay needs a value"},
    {{"replay", "x", "--delay", "soon", NULL}, "--delay: 'soon'"},
    {{"worlds", NULL}, "usage: agora worlds"},
    {{"worlds", "frob", NULL}, "worlds: unknown command 'frob'"},
    {{"worlds", "list", "--x", NULL}, "unknown option '--x'"},
    {{"worlds", "list", "extra", NULL}, "unexpected argument 'extra'"},
    {{"run", "w.json", "--chat", NULL}, "--chat needs a value"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    proc_result r;
    if (proc_agora(cases[i].args, NULL, env_vars, &r)) {
      unit_fail_(__FILE__, __LINE__, "cannot run agora");
      continue;
    }
    if (r.status != 2 || !strstr(r.err, cases[i].want) || r.out[0])
      unit_fail_(__FILE__, __LINE__, "case %zu (%s %s): status %d, stdout \"%.100s\", stderr \"%.200s\", want \"%s\"", i,
                 cases[i].args[0], cases[i].args[1] ? cases[i].args[1] : "", r.status, r.out, r.err, cases[i].want);
    proc_result_free(&r);
  }
  /* None of that created a database. */
  struct stat sb;
  CHECK(stat(e.db, &sb) != 0);
  proc_result r;
  const char *help[] = {"chats", "--help", NULL};
  PROC_OK(help, NULL, env_vars, &r);
  CHECK(strstr(r.out, "import SNAPSHOT.json") != NULL);
  proc_result_free(&r);
  tchats_env_close(&e);
}

SUITE_RUN((UNIT(run_saves_chat), UNIT(list_order_and_filter), UNIT(new_reuses_empty_chat),
  UNIT(new_reuses_untitled_chat), UNIT(new_chat_keeps_old_state), UNIT(run_continues_chat),
  UNIT(no_save_writes_nothing), UNIT(usage_errors)))
