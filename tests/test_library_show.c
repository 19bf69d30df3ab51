/* libagora's chat as `agora chats show` prints it, from a database with no world open (API version 3:
 * agora_db_chat_info, agora_db_transcript, agora_db_usage, agora_db_chat_state), and a snapshot's as
 * `agora replay` prints it (API version 4: agora_snapshot_transcript), linked against libagora.so as a
 * program is. */
#include "agora.h"
#include "support/unit.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A monadic agent that saves its context once (a tool step in the thread, a state of version 1). */
static const char keeper[] =
  "{\"name\": \"Keep\", \"agents\": [{\"name\": \"k\", \"monadic\": true, \"provider\": \"script\","
  " \"replies\": [{\"tool\": \"save_context\", \"args\": {\"message\": \"@human saved\", \"notes\": [\"n1\"]}}]}]}";

/* The JSON text a call handed back into *json (read here, after the call), checked for what it must
 * hold, then released. */
static void check_json(int rc, char **json, const char *const *want) {
  CHECK_INT(rc, AGORA_OK);
  for (size_t i = 0; *json && want[i]; i++)
    if (!strstr(*json, want[i])) unit_fail_(__FILE__, __LINE__, "%s lacks %s", *json, want[i]);
  CHECK(*json != NULL);
  agora_free(*json);
  *json = NULL;
}

/* The keeper's chat in db: one message, a tool step and a note; its id into cur. 0 when it failed. */
static int keep_a_note(const char *db, char cur[AGORA_ID_MAX]) {
  agora_world *w = NULL;
  CHECK_INT(agora_world_open(keeper, db, NULL, &w), AGORA_OK);
  if (!w) return 0;
  agora_publish(w, "human", "@k remember n1");
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  snprintf(cur, AGORA_ID_MAX, "%s", agora_chat_current(w));
  agora_world_close(w);
  return 1;
}

static void a_chat_as_show_prints_it(void) {
  char *db = unit_tmpdir(), cur[AGORA_ID_MAX], want_id[AGORA_ID_MAX + 16], *json = NULL;
  agora_db *d = NULL;
  if (!keep_a_note(db, cur)) return;
  CHECK_INT(agora_db_open(db, AGORA_DB_READ, &d), AGORA_OK);
  if (!d) return;
  char prefix[8];
  snprintf(prefix, sizeof prefix, "%.6s", cur); /* a unique prefix names the chat too */
  snprintf(want_id, sizeof want_id, "{\"id\":\"%s\"", cur);
  check_json(agora_db_chat_info(d, prefix, &json), &json,
             (const char *const[]){want_id, "\"world\":\"keep\"", "\"message_count\":2", NULL});
  check_json(agora_db_transcript(d, cur, &json), &json,
             (const char *const[]){"\"seq\":1,\"sender\":\"human\"", "\"event\":\"tool-call\"", "@human saved", NULL});
  check_json(agora_db_chat_state(d, cur, &json), &json,
             (const char *const[]){"[{\"version\":1,\"updated_at\":\"", "\"notes\":[\"n1\"]", "\"agent\":\"k\"}]", NULL});
  check_json(agora_db_usage(d, cur, &json), &json, (const char *const[]){"[", NULL});
  CHECK_INT(agora_db_transcript(d, "zzzz", &json), AGORA_ERR_NOT_FOUND);
  CHECK(strstr(agora_errmsg(), "zzzz") != NULL);
  CHECK_INT(agora_db_chat_state(d, NULL, &json), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_db_chat_state: chat is NULL");
  agora_db_close(d);
  unit_rmrf(db);
  free(db);
}

/* A snapshot's transcript without importing it (API 4, `agora replay SNAPSHOT.json`): the stored chat's
 * transcript, entry for entry, and nothing written; a bad document is refused naming its source. */
static void a_snapshot_read_as_it_is(void) {
  char *db = unit_tmpdir(), cur[AGORA_ID_MAX], *snap = NULL, *stored = NULL, *read = NULL, *chats = NULL;
  agora_db *d = NULL;
  if (!keep_a_note(db, cur)) return;
  CHECK_INT(agora_db_open(db, 0, &d), AGORA_OK);
  if (!d) return;
  CHECK_INT(agora_db_chat_export(d, cur, &snap), AGORA_OK);
  CHECK_INT(agora_db_transcript(d, cur, &stored), AGORA_OK);
  CHECK_INT(agora_snapshot_transcript(snap, "keep.json", &read), AGORA_OK);
  if (stored && read) CHECK_STR(read, stored);
  agora_free(read);
  read = NULL;
  CHECK_INT(agora_db_chats(d, NULL, &chats), AGORA_OK);
  CHECK(chats && strstr(chats, cur) && !strstr(strstr(chats, cur) + 1, "\"id\"")); /* still one chat */
  CHECK_INT(agora_snapshot_transcript("{\"format\": 1}", "bad.json", &read), AGORA_ERR_INVALID);
  CHECK(strncmp(agora_errmsg(), "bad.json", 8) == 0);
  CHECK_INT(agora_snapshot_transcript("not json", NULL, &read), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "snapshot: malformed JSON");
  CHECK_INT(agora_snapshot_transcript(NULL, NULL, &read), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_snapshot_transcript: snapshot_json is NULL");
  agora_free(snap), agora_free(stored), agora_free(chats);
  agora_db_close(d);
  unit_rmrf(db);
  free(db);
}

/* The worlds of a database (API 4, `agora worlds`): listed, shown by display name with their settings,
 * deleted with their chats (not through a read-only handle). */
static void worlds_listed_shown_deleted(void) {
  char *db = unit_tmpdir(), *json = NULL, id[AGORA_ID_MAX] = "";
  agora_world *w = NULL;
  agora_db *d = NULL;
  size_t chats = 0;
  CHECK_INT(agora_world_open(keeper, db, NULL, &w), AGORA_OK);
  if (!w) return;
  agora_world_close(w);
  CHECK_INT(agora_db_open(db, AGORA_DB_READ, &d), AGORA_OK);
  if (!d) return;
  check_json(agora_db_worlds(d, &json), &json,
             (const char *const[]){"[{\"id\":\"keep\",\"name\":\"Keep\",\"agents\":1,\"chats\":1,\"current_chat\":\"", NULL});
  check_json(agora_db_world(d, "Keep", &json), &json,
             (const char *const[]){"{\"id\":\"keep\",\"name\":\"Keep\",\"chats\":1,", "\"settings\":{", "\"monadic\":true", NULL});
  CHECK_INT(agora_db_world(d, "nope", &json), AGORA_ERR_INVALID);
  CHECK(strstr(agora_errmsg(), "nope") != NULL);
  CHECK_INT(agora_db_world_delete(d, "keep", id, &chats), AGORA_ERR_STORAGE); /* read only */
  agora_db_close(d);
  CHECK_INT(agora_db_open(db, 0, &d), AGORA_OK);
  if (!d) return;
  CHECK_INT(agora_db_world_delete(d, "Keep", id, &chats), AGORA_OK);
  CHECK_STR(id, "keep");
  CHECK_INT((int)chats, 1);
  check_json(agora_db_worlds(d, &json), &json, (const char *const[]){"[]", NULL});
  agora_db_close(d);
  unit_rmrf(db);
  free(db);
}

/* The LLM response cache outside any world (API 4, `agora cache`): an empty one's counts, a clear. The
 * counts of a filled cache are test_llm_cache's, through the binary. */
static void cache_counted_and_cleared(void) {
  char *db = unit_tmpdir(), *json = NULL, cache[4200];
  size_t removed = 9;
  snprintf(cache, sizeof cache, "%s/c", db);
  check_json(agora_cache_stats(db, NULL, &json), &json,
             (const char *const[]){"{\"entries\":0,\"bytes\":0,\"oldest\":null,\"newest\":null}", NULL});
  CHECK_INT(agora_cache_clear(NULL, cache, INT64_MAX, &removed), AGORA_OK);
  CHECK_INT((int)removed, 0);
  CHECK_INT(agora_cache_stats(db, NULL, NULL), AGORA_ERR_INVALID);
  unit_rmrf(db);
  free(db);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {UNIT(a_chat_as_show_prints_it), UNIT(a_snapshot_read_as_it_is),
                                    UNIT(worlds_listed_shown_deleted), UNIT(cache_counted_and_cleared)};
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
