/* libagora's calls for a command-line program's arguments and documents (API version 9): the id a
 * display name makes (agora_name_id), the values agora_options takes (agora_option_check), a snapshot's
 * and a world's Markdown (agora_snapshot_markdown, agora_world_markdown), and the process's name in the
 * lock of a chat it holds (agora_process_name), linked against libagora.so as a program is. */
#include "agora.h"
#include "support/proc.h"
#include "support/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void names_make_ids(void) {
  char id[AGORA_ID_MAX] = "";
  CHECK_INT(agora_name_id("Starter 2", id), AGORA_OK);
  CHECK_STR(id, "starter-2");
  CHECK_INT(agora_name_id("The  Old Town", id), AGORA_OK);
  CHECK_STR(id, "the-old-town");
  CHECK_INT(agora_name_id("-dash first", id), AGORA_ERR_INVALID);
  CHECK(strstr(agora_errmsg(), "'-dash first' makes no id") != NULL);
  CHECK_INT(agora_name_id(NULL, id), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_name_id: name is NULL");
}

static void option_values_checked(void) {
  CHECK_INT(agora_option_check("provider", "ollama"), AGORA_OK);
  CHECK_INT(agora_option_check("llm_cache", "replay"), AGORA_OK);
  CHECK_INT(agora_option_check("provider", "nope"), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "unknown provider 'nope' (expected script, openai, anthropic, gemini or ollama)");
  CHECK_INT(agora_option_check("llm_cache", "always"), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "unknown mode 'always' (expected off, use or replay)");
  CHECK_INT(agora_option_check("model", "x"), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_option_check: no field 'model' (provider or llm_cache)");
}

static const char town[] = "{\"name\": \"Hold\", \"agents\": [{\"name\": \"a\", \"provider\": \"script\","
                           " \"replies\": [\"hi\"], \"auto_reply\": false}]}";

/* A chat exported and made Markdown; the world's settings too; bad documents refused; the chat's id from a
 * prefix. */
static void documents_as_markdown(void) {
  char *db = unit_tmpdir(), *json = NULL, *md = NULL, cur[AGORA_ID_MAX] = "";
  agora_world *w = NULL;
  CHECK_INT(agora_world_open(town, db, NULL, &w), AGORA_OK);
  if (!w) return;
  agora_publish(w, "human", "@a hello there");
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  CHECK_INT(agora_chat_export(w, NULL, &json), AGORA_OK);
  snprintf(cur, sizeof cur, "%s", agora_chat_current(w));
  agora_world_close(w);
  CHECK_INT(agora_snapshot_markdown(json, &md), AGORA_OK);
  CHECK(md && strstr(md, "hello there") && strstr(md, "# "));
  agora_free(md);
  agora_free(json);
  CHECK_INT(agora_world_markdown("{\"name\": \"Hold\", \"agents\": [{\"name\": \"a\", \"provider\": \"script\"}]}", &md),
            AGORA_OK);
  CHECK(md && strstr(md, "Hold") && strstr(md, "script"));
  agora_free(md);
  md = (char *)"x";
  CHECK_INT(agora_snapshot_markdown("{\"messages\": [", &md), AGORA_ERR_INVALID);
  CHECK(md == NULL);
  CHECK_INT(agora_world_markdown(NULL, &md), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_world_markdown: json is NULL");
  /* The chat's id from a prefix of it (what agora_memories' caller compares with the current chat). */
  agora_db *d = NULL;
  char id[AGORA_ID_MAX] = "", prefix[8];
  CHECK_INT(agora_db_open(db, AGORA_DB_READ, &d), AGORA_OK);
  snprintf(prefix, sizeof prefix, "%.5s", cur);
  CHECK_INT(agora_db_chat_id(d, prefix, id), AGORA_OK);
  CHECK_STR(id, cur);
  CHECK_INT(agora_db_chat_id(d, "zz", id), AGORA_ERR_NOT_FOUND);
  CHECK_INT(agora_db_chat_id(d, NULL, id), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_db_chat_id: chat is NULL");
  agora_db_close(d);
  unit_rmrf(db);
  free(db);
}

/* A chat this process holds names it to another process refused it: `agora say` starts another chat and
 * says who holds the world's current one. */
static void the_holder_is_named(void) {
  char *db = unit_tmpdir(), want[256];
  agora_world *w = NULL;
  agora_process_name("holder");
  CHECK_INT(agora_world_open(town, db, NULL, &w), AGORA_OK);
  if (!w) return;
  snprintf(want, sizeof want, "chat %s is in use by pid %ld (holder)", agora_chat_current(w), (long)getpid());
  proc_result r = {0};
  proc_agora((const char *const[]){"say", "hold", "@a hi", "--db", db, NULL}, NULL, NULL, &r);
  if (!r.err || !strstr(r.err, want)) unit_fail_(__FILE__, __LINE__, "stderr lacks '%s': %s", want, r.err ? r.err : "");
  proc_result_free(&r);
  agora_world_close(w);
  agora_process_name(NULL);
  unit_rmrf(db);
  free(db);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {UNIT(names_make_ids), UNIT(option_values_checked), UNIT(documents_as_markdown),
                                    UNIT(the_holder_is_named)};
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
