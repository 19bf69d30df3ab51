/* libagora API 12: agora_db_messages, agora_messages' window of a chat on a database with no world open
 * (agora serve's search pages through a stored chat with it). Linked against libagora.so as a program
 * is, nothing internal included. */
#include "agora.h"
#include "support/lib_say.h"
#include "support/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char town[] =
  "{\"name\": \"Town\", \"agents\": [{\"name\": \"ann\", \"replies\": [\"@human ann here\"]}]}";

/* agora_db_messages(d, chat, from, max) as text ("" on failure, rc into *rc). */
static char *page(agora_db *d, const char *chat, uint64_t from, size_t max, int *rc) {
  char *json = NULL;
  *rc = agora_db_messages(d, chat, from, max, &json);
  char *s = strdup(json ? json : "");
  agora_free(json);
  return s;
}

/* A stored chat of six messages (three said, three answered), paged as a server would. */
static void pages_of_a_stored_chat(void) {
  char *db = unit_tmpdir(), chat[AGORA_ID_MAX] = "", *s = NULL, *json = NULL;
  agora_world *w = NULL;
  agora_db *d = NULL;
  int rc;
  CHECK_INT(agora_world_open(town, db, NULL, &w), AGORA_OK);
  if (!w) goto done;
  lib_say_numbered(w, "@ann hello", 3);
  snprintf(chat, sizeof chat, "%s", agora_chat_current(w) ? agora_chat_current(w) : "");
  agora_world_close(w);
  CHECK_INT(agora_db_open(db, AGORA_DB_READ, &d), AGORA_OK);
  if (!d) goto done;
  s = page(d, chat, 1, 4, &rc); /* the first page of four */
  CHECK_INT(rc, AGORA_OK);
  CHECK_HAS(s, "\"seq\":1", "\"text\":\"@ann hello 1\"", "\"seq\":4", "\"sender\":\"ann\"");
  CHECK_INT((int)unit_count(s, "\"type\":\"message\""), 4);
  free(s);
  s = page(d, chat, 5, 4, &rc); /* the next page: the two left */
  CHECK_INT(rc, AGORA_OK);
  CHECK_HAS(s, "\"seq\":5", "\"text\":\"@ann hello 3\"", "\"seq\":6");
  CHECK_INT((int)unit_count(s, "\"type\":\"message\""), 2);
  free(s);
  s = page(d, chat, 7, 4, &rc); /* past the last */
  CHECK_INT(rc, AGORA_OK);
  CHECK_STR(s, "[]");
  free(s);
  s = page(d, chat, 0, 2, &rc); /* from 0: the last two */
  CHECK_INT(rc, AGORA_OK);
  CHECK_HAS(s, "\"seq\":5", "\"seq\":6");
  CHECK_INT((int)unit_count(s, "\"type\":\"message\""), 2);
  free(s);
  char prefix[9];
  memcpy(prefix, chat, 8);
  prefix[8] = '\0';
  s = page(d, prefix, 0, 0, &rc); /* every message, the chat named by a prefix of its id */
  CHECK_INT(rc, AGORA_OK);
  CHECK_INT((int)unit_count(s, "\"type\":\"message\""), 6);
  CHECK(!strstr(s, "llm-")); /* messages only: no thread steps or events */
  free(s);
  s = page(d, "nochat", 1, 1, &rc);
  CHECK_INT(rc, AGORA_ERR_NOT_FOUND);
  CHECK_HAS(agora_errmsg(), "nochat");
  CHECK_STR(s, "");
  free(s);
  CHECK_INT(agora_db_messages(d, NULL, 1, 1, &json), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_db_messages: chat is NULL");
  CHECK_INT(agora_db_messages(d, chat, 1, 1, NULL), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_db_messages: json is NULL");
  CHECK_INT(agora_db_messages(NULL, chat, 1, 1, &json), AGORA_ERR_INVALID);
  CHECK(json == NULL);
  CHECK(agora_api_version() >= 12);
done:
  agora_db_close(d);
  unit_rmrf(db);
  free(db);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {UNIT(pages_of_a_stored_chat)};
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
