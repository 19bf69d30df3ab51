/* libagora's memory listing (API version 9): what an agent remembers in a chat, from a world the program
 * has open (agora_memories: nothing sent anywhere) and from a database alone (agora_db_memories, what
 * `agora memory` prints, a hosted embedder asked for the query), linked against libagora.so as a program
 * is. */
#include "agora.h"
#include "support/proc.h"
#include "support/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* m keeps a memory stream (hash embedder: relevance needs nothing sent); w keeps a window only; h's
 * stream is embedded by a hosted embedder that is not there (port 1 refuses). */
static const char town[] =
  "{\"name\": \"Mem\", \"agents\": ["
  "{\"name\": \"m\", \"provider\": \"script\", \"replies\": [\"noted\"], \"auto_reply\": false,"
  " \"memory\": {\"mode\": \"stream\", \"importance\": 7}},"
  "{\"name\": \"w\", \"provider\": \"script\", \"replies\": [\"ok\"], \"auto_reply\": false},"
  "{\"name\": \"h\", \"provider\": \"script\", \"replies\": [\"heard\"], \"auto_reply\": false,"
  " \"memory\": {\"mode\": \"stream\", \"importance\": 5, \"embedder\": {\"provider\": \"ollama\","
  " \"model\": \"e\", \"base_url\": \"http://127.0.0.1:1\"}}}]}";

/* The JSON a call handed back, released (the next call writes *json again). */
static void release(char **json) {
  agora_free(*json);
  *json = NULL;
}

/* The town's chat in db after a message to every agent; its id into cur. 0 when it failed. */
static int tell_the_town(const char *db, char cur[AGORA_ID_MAX]) {
  agora_world *w = NULL;
  CHECK_INT(agora_world_open(town, db, NULL, &w), AGORA_OK);
  if (!w) return 0;
  CHECK_INT(agora_publish(w, "human", "@m @w @h the well is dry"), AGORA_OK);
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  snprintf(cur, AGORA_ID_MAX, "%s", agora_chat_current(w));
  char *json = NULL;
  CHECK_INT(agora_memories(w, "m", NULL, &json), AGORA_OK);
  CHECK_HAS(json, "\"agent\":\"m\"", "\"memories\":[{", "the well is dry");
  release(&json);
  CHECK_INT(agora_memories(w, "h", "well", &json), AGORA_OK);
  CHECK_HAS(json, "\"query\":\"well\"", "\"relevance_left_out\":", "\"scores\":");
  release(&json);
  CHECK_INT(agora_memories(w, "nobody", NULL, &json), AGORA_ERR_NOT_FOUND);
  CHECK_INT(agora_memories(w, "w", NULL, &json), AGORA_ERR_INVALID);
  CHECK_INT(agora_memories(w, NULL, NULL, &json), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_memories: agent is NULL");
  agora_world_close(w);
  return 1;
}

static void memories_from_a_world_and_from_the_database(void) {
  char *db = unit_tmpdir(), cur[AGORA_ID_MAX], want[AGORA_ID_MAX + 16], prefix[8], *json = NULL;
  agora_db *d = NULL;
  if (!tell_the_town(db, cur)) return;
  CHECK_INT(agora_db_open(db, 0, &d), AGORA_OK);
  if (!d) return;
  snprintf(prefix, sizeof prefix, "%.6s", cur); /* a unique prefix names the chat too */
  snprintf(want, sizeof want, "{\"chat\":\"%s\"", cur);
  CHECK_INT(agora_db_memories(d, prefix, "m", NULL, NULL, 0, 0, &json), AGORA_OK);
  CHECK_HAS(json, want, "\"sender\":\"human\"", "the well is dry", "\"importance\":7");
  release(&json);
  /* The hash embedder ranks with relevance, and nothing is left out. */
  CHECK_INT(agora_db_memories(d, cur, "m", "well", NULL, 0, 0, &json), AGORA_OK);
  CHECK_HAS(json, "\"query\":\"well\"", "\"relevance\":", "\"total\":");
  CHECK(json && !strstr(json, "left_out") && !strstr(json, "embedder_failed"));
  release(&json);
  /* A hosted embedder that fails: the listing still comes, saying why. */
  CHECK_INT(agora_db_memories(d, cur, "h", "well", NULL, 0, 0, &json), AGORA_OK);
  CHECK_HAS(json, "\"embedder_failed\":", "the well is dry");
  release(&json);
  CHECK_INT(agora_db_memories(d, "zzzz", "m", NULL, NULL, 0, 0, &json), AGORA_ERR_NOT_FOUND);
  CHECK(strstr(agora_errmsg(), "zzzz") != NULL);
  CHECK_INT(agora_db_memories(d, cur, "w", NULL, NULL, 0, 0, &json), AGORA_ERR_INVALID);
  CHECK_INT(agora_db_memories(d, NULL, "m", NULL, NULL, 0, 0, &json), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_db_memories: chat is NULL");
  CHECK(json == NULL);
  agora_db_close(d);
  unit_rmrf(db);
  free(db);
}

/* agora_memories names the world's current chat as it is now: a program that never asked for it
 * (agora_chat_current) was told the world had none, and one that moved to a new chat was shown the
 * old chat's id. */
static void memories_of_the_chat_current_now(void) {
  char *db = unit_tmpdir(), want[AGORA_ID_MAX + 16], *json = NULL;
  agora_world *w = NULL;
  CHECK_INT(agora_world_open(town, db, NULL, &w), AGORA_OK);
  if (!w) goto done;
  CHECK_INT(agora_publish(w, "human", "@m the well is dry"), AGORA_OK);
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  CHECK_INT(agora_memories(w, "m", NULL, &json), AGORA_OK);
  snprintf(want, sizeof want, "{\"chat\":\"%s\"", agora_chat_current(w));
  CHECK_HAS(json ? json : "", want, "the well is dry");
  release(&json);
  CHECK_INT(agora_chat_title(w, "first"), AGORA_OK);
  CHECK_INT(agora_chat_new(w), AGORA_OK);
  CHECK_INT(agora_memories(w, "m", NULL, &json), AGORA_OK);
  snprintf(want, sizeof want, "{\"chat\":\"%s\"", agora_chat_current(w));
  CHECK_HAS(json ? json : "", want);
  release(&json);
  agora_world_close(w);
done:
  unit_rmrf(db);
  free(db);
}

/* `agora memory` (agora_db_memories with AGORA_NOTES) says that a stored agent does not verify TLS, as
 * every command that opens the world does. */
static void the_command_warns_of_insecure(void) {
  static const char insecure[] =
    "{\"name\": \"Insec\", \"agents\": [{\"name\": \"m\", \"provider\": \"script\", \"replies\": [\"ok\"],"
    " \"memory\": {\"mode\": \"stream\"}}, {\"name\": \"o\", \"provider\": \"openai\", \"model\": \"x\","
    " \"api_key_env\": \"MEM_TEST_KEY\", \"base_url\": \"https://127.0.0.1:9/v1\", \"insecure\": true}]}";
  char *db = unit_tmpdir(), cur[AGORA_ID_MAX] = "";
  agora_world *w = NULL;
  setenv("MEM_TEST_KEY", "k", 1);
  CHECK_INT(agora_world_open(insecure, db, NULL, &w), AGORA_OK);
  if (!w) return;
  agora_publish(w, "human", "@m the gate is open");
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  snprintf(cur, sizeof cur, "%s", agora_chat_current(w));
  agora_world_close(w);
  proc_result r = {0};
  PROC_OK(((const char *const[]){"memory", cur, "m", "--db", db, NULL}), NULL,
          ((const char *const[]){"MEM_TEST_KEY=k", NULL}), &r);
  CHECK_HAS(r.out, "human: @m the gate is open");
  CHECK_HAS(r.err, "agora: warning: insecure: true (https://127.0.0.1:9/v1)");
  proc_result_free(&r);
  unit_rmrf(db);
  free(db);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {UNIT(memories_from_a_world_and_from_the_database),
                                    UNIT(memories_of_the_chat_current_now), UNIT(the_command_warns_of_insecure)};
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
