/* libagora: what `agora console` needs beyond API 6 (API version 7): agora_messages, a window of a
 * chat's messages with their numbers (/show N, the last messages of a resumed chat);
 * agora_agent_add_like, a copy of an agent of the world's own that keeps where its key may go (/add NAME
 * --like OTHER); how the open went (agora_world_db, agora_world_stored, agora_chat_resumed); the
 * database's only world (a NULL name with AGORA_FROM_STORE); agora_duration_parse (/advance). AGORA_VIEW
 * is test_library_view's. Linked against libagora.so as a program is. */
#include "agora.h"
#include "support/lib_say.h"
#include "support/llm_server.h"
#include "support/proc.h"
#include "support/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char town[] =
  "{\"name\": \"Town\", \"agents\": [{\"name\": \"ann\", \"replies\": [\"@human ann here\"]}]}";

/* agora_messages(w, chat, from, max) as text ("" on failure, rc into *rc). */
static char *window(agora_world *w, const char *chat, uint64_t from, size_t max, int *rc) {
  char *json = NULL;
  *rc = agora_messages(w, chat, from, max, &json);
  return json ? json : strdup("");
}

/* Six messages (three human, three answers): the last two, a window from seq 2, all of them, none past
 * the end; the current chat or one named by a prefix; the errors. */
static void messages_window(void) {
  char *db = unit_tmpdir(), *s = NULL, *json = NULL;
  agora_world *w = NULL;
  int rc = 0;
  CHECK_INT(agora_world_open(town, db, NULL, &w), AGORA_OK);
  if (!w) goto done;
  lib_say_numbered(w, "@ann hello", 3);
  s = window(w, NULL, 0, 2, &rc);
  CHECK_INT(rc, AGORA_OK);
  CHECK_HAS(s, "\"seq\":5", "\"text\":\"@ann hello 3\"", "\"seq\":6", "\"sender\":\"ann\"");
  CHECK_INT((int)unit_count(s, "\"type\":\"message\""), 2);
  free(s);
  s = window(w, NULL, 2, 3, &rc);
  CHECK_INT(rc, AGORA_OK);
  CHECK_HAS(s, "\"seq\":2", "\"seq\":3", "\"seq\":4");
  CHECK_INT((int)unit_count(s, "\"type\":\"message\""), 3);
  free(s);
  char prefix[9];
  snprintf(prefix, sizeof prefix, "%s", agora_chat_current(w) ? agora_chat_current(w) : "");
  s = window(w, prefix, 0, 0, &rc); /* every message, the chat named by a prefix of its id */
  CHECK_INT(rc, AGORA_OK);
  CHECK_INT((int)unit_count(s, "\"type\":\"message\""), 6);
  CHECK(!strstr(s, "llm-")); /* messages only: no thread steps or events */
  free(s);
  s = window(w, NULL, 7, 5, &rc);
  CHECK_INT(rc, AGORA_OK);
  CHECK_STR(s, "[]");
  free(s);
  s = window(w, "nochat", 0, 1, &rc);
  CHECK_INT(rc, AGORA_ERR_NOT_FOUND);
  CHECK_HAS(agora_errmsg(), "nochat");
  CHECK_STR(s, "");
  free(s);
  CHECK_INT(agora_messages(w, NULL, 0, 1, NULL), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_messages: json is NULL");
  agora_world_close(w);
  w = NULL;
  CHECK_INT(agora_world_open(town, NULL, &(agora_options){.flags = AGORA_NO_SAVE}, &w), AGORA_OK);
  if (w) CHECK_INT(agora_messages(w, NULL, 0, 1, &json), AGORA_ERR_STATE);
  CHECK(!json);
  agora_world_close(w);
done:
  unit_rmrf(db);
  free(db);
}

/* A copy of a world file's agent at its own base_url sends the key there, as the original does (an
 * agent added by agora_agent_add with the same settings does not: new_agent_key_rules in
 * test_library_edit); a copy that names its own base_url is held to the untrusted rules. The copy has
 * the original's settings without its scripted replies, and is stored with the world. */
static void copy_keeps_key_rule(void) {
  llm_server *srv = NULL;
  char *db = unit_tmpdir(), *s = NULL, *a = NULL;
  agora_world *w = NULL;
  CHECK_INT(llm_server_start(&srv), 0);
  if (!srv) goto done;
  llm_server_rule(srv, NULL, "reply=\"@human from the server\"");
  setenv("AGORA_TEST_KEY", "k", 1);
  char world[1024], url[256], erin[512];
  snprintf(url, sizeof url, "%s", llm_server_url(srv, "/v1"));
  snprintf(world, sizeof world, "{\"name\": \"Town\", \"agents\": [{\"name\": \"ann\", \"replies\": [\"@human ann "
           "here\"]}, {\"name\": \"carol\", \"provider\": \"openai\", \"model\": \"m\", \"base_url\": \"%s\", "
           "\"api_key_env\": \"AGORA_TEST_KEY\", \"temperature\": 0.5}]}", url);
  CHECK_INT(agora_world_open(world, db, NULL, &w), AGORA_OK);
  if (!w) goto done;
  /* what /add NAME makes of a like agent: its LLM settings, a prompt of its own, none of its memory */
  CHECK_INT(agora_agent_add_like(w, "carol", "{\"name\": \"dave\", \"system_prompt\": \"You are dave.\", "
                                 "\"memory\": null}", &a), AGORA_OK);
  CHECK_HAS(a ? a : "", "\"name\":\"dave\"", "\"temperature\":0.5", "\"api_key_env\":\"AGORA_TEST_KEY\"",
            "\"system_prompt\":\"You are dave.\"");
  agora_free(a);
  CHECK_HAS(s = lib_say(w, "@dave hello"), "from the server");
  free(s);
  CHECK_INT((int)llm_server_requests_with(srv, NULL, "Bearer k"), 1);
  snprintf(erin, sizeof erin, "{\"name\": \"erin\", \"base_url\": \"%s\"}", url);
  CHECK_INT(agora_agent_add_like(w, "carol", erin, NULL), AGORA_OK);
  CHECK_HAS(s = lib_say(w, "@erin hello"), "from the server");
  free(s);
  CHECK_INT((int)llm_server_requests_with(srv, NULL, "Bearer k"), 1); /* erin's went without the key */
  CHECK_INT(agora_agent_add_like(w, "ann", "{\"name\": \"zed\", \"system_prompt\": \"You are zed.\"}", NULL), AGORA_OK);
  CHECK_HAS(s = lib_say(w, "@zed hello"), "\"sender\":\"zed\"");
  CHECK(!strstr(s, "\"sender\":\"zed\",\"text\":\"@human ann here\"")); /* ann's replies are ann's */
  free(s);
  CHECK_INT(agora_agent_add_like(w, "carol", "{\"name\": \"Dave\"}", NULL), AGORA_ERR_EXISTS);
  CHECK_INT(agora_agent_add_like(w, "nobody", "{\"name\": \"fay\"}", NULL), AGORA_ERR_NOT_FOUND);
  CHECK_HAS(agora_errmsg(), "nobody");
  CHECK_INT(agora_agent_add_like(w, NULL, "{\"name\": \"fay\"}", NULL), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_agent_add_like: like is NULL");
  CHECK_INT(agora_agent_add_like(w, "carol", "{\"name\": \"fay\", \"temprature\": 1}", NULL), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "temprature");
  CHECK_INT(agora_settings(w, &s), AGORA_OK);
  CHECK_HAS(s ? s : "", "\"name\":\"dave\"", "\"name\":\"erin\"", "\"name\":\"zed\"");
  CHECK(s && !strstr(s, "\"fay\""));
  agora_free(s);
done:
  agora_world_close(w);
  llm_server_stop(srv);
  unit_rmrf(db);
  free(db);
}

/* What the console tells a person about its open: the database it uses (its history goes there), a
 * world from its file or from the database, a chat continued or new. */
static void how_it_opened(void) {
  char *db = unit_tmpdir();
  agora_world *w = NULL;
  CHECK_INT(agora_world_open(town, db, NULL, &w), AGORA_OK);
  if (!w) goto done;
  CHECK_STR(agora_world_db(w) ? agora_world_db(w) : "(null)", db);
  CHECK_INT(agora_world_stored(w), 0);
  CHECK_INT(agora_chat_resumed(w), 0); /* the world's first chat */
  free(lib_say(w, "@ann hi"));
  agora_world_close(w);
  w = NULL;
  CHECK_INT(agora_world_open("town", db, &(agora_options){.flags = AGORA_FROM_STORE}, &w), AGORA_OK);
  if (!w) goto done;
  CHECK_INT(agora_world_stored(w), 1);
  CHECK_INT(agora_chat_resumed(w), 1);
  agora_world_close(w);
  w = NULL;
  CHECK_INT(agora_world_open(town, db, &(agora_options){.flags = AGORA_NEW_CHAT}, &w), AGORA_OK);
  if (w) CHECK_INT(agora_chat_resumed(w), 0);
  if (w) CHECK_INT(agora_world_stored(w), 0);
  agora_world_close(w);
  w = NULL;
  CHECK_INT(agora_world_open(town, NULL, &(agora_options){.flags = AGORA_NO_SAVE}, &w), AGORA_OK);
  if (w) CHECK(!agora_world_db(w));
  if (w) CHECK_INT(agora_chat_resumed(w), 0);
  agora_world_close(w);
done:
  unit_rmrf(db);
  free(db);
}

/* No world named, with AGORA_FROM_STORE: the database's only world (`agora console --db DIR`); none or
 * several are refused naming the database. */
static void the_only_world(void) {
  char *db = unit_tmpdir();
  agora_world *w = NULL;
  agora_options from_store = {.flags = AGORA_FROM_STORE};
  CHECK_INT(agora_world_open(NULL, db, &from_store, &w), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), db, "holds no world yet");
  CHECK_INT(agora_world_open(town, db, NULL, &w), AGORA_OK);
  agora_world_close(w);
  w = NULL;
  CHECK_INT(agora_world_open(NULL, db, &from_store, &w), AGORA_OK);
  if (w) CHECK_STR(agora_world_id(w), "town");
  if (w) CHECK_INT(agora_world_stored(w), 1);
  agora_world_close(w);
  w = NULL;
  CHECK_INT(agora_world_open("{\"name\": \"Other\", \"agents\": [{\"name\": \"o\"}]}", db, NULL, &w), AGORA_OK);
  agora_world_close(w);
  w = NULL;
  CHECK_INT(agora_world_open(NULL, db, &from_store, &w), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "holds 2 worlds");
  CHECK_INT(agora_world_open(NULL, db, NULL, &w), AGORA_ERR_INVALID); /* without the flag: a world is named */
  CHECK(!w);
  unit_rmrf(db);
  free(db);
}

/* /advance's argument: the world file's durations, and why one is not. */
static void durations(void) {
  int64_t ms = -1;
  CHECK_INT(agora_duration_parse("1h30m", &ms), AGORA_OK);
  CHECK(ms == 5400000);
  CHECK_INT(agora_duration_parse("2d", &ms), AGORA_OK);
  CHECK(ms == 172800000);
  CHECK_INT(agora_duration_parse("3 hours", &ms), AGORA_ERR_INVALID);
  CHECK(agora_errmsg()[0]);
  CHECK(ms == 172800000); /* untouched */
  CHECK_INT(agora_duration_parse("0s", &ms), AGORA_ERR_INVALID);
  CHECK_INT(agora_duration_parse(NULL, &ms), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_duration_parse: text is NULL");
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {UNIT(messages_window), UNIT(copy_keeps_key_rule), UNIT(how_it_opened),
                                    UNIT(the_only_world), UNIT(durations)};
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
