/* libagora API 13 (include/agora_server.h): what `agora serve` needs beyond API 12 — a published
 * message's number (agora_publish_seq), a page of a stored chat with its thread's steps
 * (agora_db_transcript_page) and a stored world's MCP servers (agora_db_mcp_servers). Linked against
 * libagora.so as a program is, nothing internal included. */
#include "agora.h"
#include "support/unit.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char town[] =
  "{\"name\": \"Town\", \"agents\": [{\"name\": \"ann\", \"replies\": [\"@human ann here\"]}]}";

/* A monadic agent that saves its context at each turn: a tool call and its result in the thread after
 * each message that names it, then its answer. */
static const char keeper[] =
  "{\"name\": \"Keep\", \"agents\": [{\"name\": \"k\", \"monadic\": true, \"provider\": \"script\","
  " \"replies\": [{\"tool\": \"save_context\", \"args\": {\"message\": \"@human saved\", \"notes\": [\"n1\"]}}]}]}";

/* Two publishes before the loop runs are numbered 1 and 2; a new chat starts again at 1. */
static void publish_numbers(void) {
  agora_world *w = NULL;
  char *db = unit_tmpdir();
  uint64_t seq = 99;
  CHECK_INT(agora_world_open(town, db, NULL, &w), AGORA_OK);
  if (!w) goto done;
  CHECK_INT(agora_publish_seq(w, "human", "hello", &seq), AGORA_OK);
  CHECK_INT((int)seq, 1);
  CHECK_INT(agora_publish_seq(w, "human", "@ann hello again", &seq), AGORA_OK);
  CHECK_INT((int)seq, 2);
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  CHECK_INT(agora_publish_seq(w, "human", "and a third", NULL), AGORA_OK); /* seq may be NULL */
  CHECK_INT(agora_chat_new(w), AGORA_OK);
  CHECK_INT(agora_publish_seq(w, "human", "a new chat", &seq), AGORA_OK);
  CHECK_INT((int)seq, 1);
  seq = 99;
  CHECK_INT(agora_publish_seq(w, "human", " \n", &seq), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_publish_seq: the text is empty");
  CHECK_INT((int)seq, 0);
  CHECK_INT(agora_publish_seq(w, NULL, "x", &seq), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_publish_seq: sender is NULL");
  CHECK_INT(agora_publish(w, "human", ""), AGORA_ERR_INVALID); /* agora_publish's own name stays */
  CHECK_STR(agora_errmsg(), "agora_publish: the text is empty");
  CHECK(agora_api_version() >= 13);
  agora_world_close(w);
done:
  unit_rmrf(db);
  free(db);
}

/* agora_db_transcript_page(d, chat, from, max) parsed (NULL on failure, rc into *rc). */
static cJSON *page(agora_db *d, const char *chat, uint64_t from, size_t max, int *rc) {
  char *json = NULL;
  *rc = agora_db_transcript_page(d, chat, from, max, &json);
  cJSON *j = json ? cJSON_Parse(json) : NULL;
  agora_free(json);
  return j;
}

/* The page's items under key as "seq" (messages) or "after_seq:event" (steps), space separated. */
static const char *shape(const cJSON *j, const char *key) {
  static char out[1024];
  const cJSON *e;
  size_t n = 0;
  out[0] = '\0';
  cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, key)) {
    const cJSON *after = cJSON_GetObjectItemCaseSensitive(e, "after_seq");
    if (after)
      n += (size_t)snprintf(out + n, sizeof out - n, "%s%d:%s", n ? " " : "", (int)after->valuedouble,
                            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "event")));
    else
      n += (size_t)snprintf(out + n, sizeof out - n, "%s%d", n ? " " : "",
                            (int)cJSON_GetObjectItemCaseSensitive(e, "seq")->valuedouble);
    if (n >= sizeof out) break;
  }
  return out;
}

/* The keeper's chat of six messages (three asks, three answers), its steps after 1, 3 and 5; its id into
 * chat. 0 when it failed. */
static int keep_three(const char *db, char chat[AGORA_ID_MAX]) {
  agora_world *w = NULL;
  CHECK_INT(agora_world_open(keeper, db, NULL, &w), AGORA_OK);
  if (!w) return 0;
  for (int i = 0; i < 3; i++) {
    CHECK_INT(agora_publish(w, "human", "@k remember n1"), AGORA_OK);
    CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  }
  snprintf(chat, AGORA_ID_MAX, "%s", agora_chat_current(w) ? agora_chat_current(w) : "");
  agora_world_close(w);
  return 1;
}

static void pages_with_steps(void) {
  char *db = unit_tmpdir(), chat[AGORA_ID_MAX] = "", *json = NULL;
  agora_db *d = NULL;
  int rc;
  if (!keep_three(db, chat)) goto done;
  CHECK_INT(agora_db_open(db, AGORA_DB_READ, &d), AGORA_OK);
  if (!d) goto done;
  cJSON *j = page(d, chat, 1, 6, &rc); /* the whole chat, as agora_db_transcript has it */
  CHECK_INT(rc, AGORA_OK);
  CHECK_STR(shape(j, "messages"), "1 2 3 4 5 6");
  CHECK_STR(shape(j, "steps"), "1:tool-call 1:tool-result 3:tool-call 3:tool-result 5:tool-call 5:tool-result");
  cJSON_Delete(j);
  j = page(d, chat, 1, 2, &rc); /* a page ends before the first message past it, its steps in */
  CHECK_STR(shape(j, "messages"), "1 2");
  CHECK_STR(shape(j, "steps"), "1:tool-call 1:tool-result");
  cJSON_Delete(j);
  j = page(d, chat, 2, 2, &rc); /* the steps after message 1 were the page before's */
  CHECK_STR(shape(j, "messages"), "2 3");
  CHECK_STR(shape(j, "steps"), "3:tool-call 3:tool-result");
  cJSON_Delete(j);
  j = page(d, chat, 5, 1, &rc); /* the last steps, after the page's only message */
  CHECK_STR(shape(j, "messages"), "5");
  CHECK_STR(shape(j, "steps"), "5:tool-call 5:tool-result");
  cJSON_Delete(j);
  CHECK_INT(agora_db_transcript_page(d, chat, 7, 10, &json), AGORA_OK); /* past the end */
  CHECK_STR(json, "{\"messages\":[],\"steps\":[]}");
  agora_free(json);
  json = NULL;
  CHECK_INT(agora_db_transcript_page(d, chat, 1, 1, &json), AGORA_OK); /* the objects as agora_db_messages' */
  CHECK_HAS(json, "\"type\":\"message\"", "\"seq\":1", "\"sender\":\"human\"", "\"world\":\"keep\"",
            "\"event\":\"tool-call\"", "\"after_seq\":1");
  agora_free(json);
  json = (char *)"untouched";
  CHECK_INT(agora_db_transcript_page(d, chat, 0, 1, &json), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_db_transcript_page: from must be 1 or more");
  CHECK(json == NULL);
  CHECK_INT(agora_db_transcript_page(d, chat, 1, 0, &json), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_db_transcript_page: max must be 1 or more");
  CHECK_INT(agora_db_transcript_page(d, "nochat", 1, 1, &json), AGORA_ERR_NOT_FOUND);
  CHECK_HAS(agora_errmsg(), "nochat");
  CHECK(json == NULL);
  CHECK_INT(agora_db_transcript_page(d, NULL, 1, 1, &json), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_db_transcript_page: chat is NULL");
  CHECK_INT(agora_db_transcript_page(d, chat, 1, 1, NULL), AGORA_ERR_INVALID);
done:
  agora_db_close(d);
  unit_rmrf(db);
  free(db);
}

/* A stored world's servers, never started: one row each, the transport from the world file. */
static void stored_mcp_servers(void) {
  char *db = unit_tmpdir(), id[AGORA_ID_MAX] = "", *json = NULL;
  agora_db *d = NULL;
  CHECK_INT(agora_db_open(db, 0, &d), AGORA_OK);
  if (!d) goto done;
  CHECK_INT(agora_db_world_create(d,
                                  "{\"name\": \"Tooled\", \"mcp_servers\": {\"files\": {\"command\": \"node\","
                                  " \"args\": [\"server.js\"]}, \"web\": {\"url\": \"http://127.0.0.1:9/mcp\"}},"
                                  " \"agents\": [{\"name\": \"t\", \"provider\": \"script\"}]}",
                                  id),
            AGORA_OK);
  CHECK_INT(agora_db_world_create(d, "{\"name\": \"Plain\", \"agents\": [{\"name\": \"a\", \"provider\": \"script\"}]}",
                                  NULL),
            AGORA_OK);
  CHECK_INT(agora_db_mcp_servers(d, id, &json), AGORA_OK);
  CHECK_HAS(json, "{\"started\":false,\"reason\":\"",
            "\"servers\":[{\"name\":\"files\",\"transport\":\"stdio\",\"state\":\"not started\",\"tools\":[],"
            "\"error\":null},{\"name\":\"web\",\"transport\":\"http\",\"state\":\"not started\",\"tools\":[],"
            "\"error\":null}]}");
  agora_free(json);
  json = NULL;
  CHECK_INT(agora_db_mcp_servers(d, "Plain", &json), AGORA_OK); /* by display name */
  CHECK_STR(json, "{\"started\":false,\"reason\":\"the world has no mcp_servers\",\"servers\":[]}");
  agora_free(json);
  json = (char *)"untouched";
  CHECK_INT(agora_db_mcp_servers(d, "nowhere", &json), AGORA_ERR_NOT_FOUND);
  CHECK_HAS(agora_errmsg(), "no world 'nowhere'");
  CHECK(json == NULL);
  CHECK_INT(agora_db_mcp_servers(d, NULL, &json), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_db_mcp_servers: world is NULL");
done:
  agora_db_close(d);
  unit_rmrf(db);
  free(db);
}

/* API 14: agora_db_search over the keeper's chat (asks "@k remember n1", answers "@human saved"): case
 * folded, a sender matched, after and max paging with more, the refusals. */
static void search_a_chat(void) {
  char *db = unit_tmpdir(), chat[AGORA_ID_MAX] = "", *json = NULL;
  agora_db *d = NULL;
  if (!keep_three(db, chat)) goto done;
  CHECK_INT(agora_db_open(db, AGORA_DB_READ, &d), AGORA_OK);
  CHECK_INT(agora_db_search(d, chat, "REMEMBER", 0, 10, &json), AGORA_OK);
  cJSON *j = cJSON_Parse(json), *m;
  agora_free(json);
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(j, "matches")), 3);
  CHECK(cJSON_IsFalse(cJSON_GetObjectItem(j, "more")));
  uint64_t seqs = 0;
  cJSON_ArrayForEach(m, cJSON_GetObjectItem(j, "matches")) seqs = seqs * 10 + (uint64_t)cJSON_GetObjectItem(m, "seq")->valuedouble;
  CHECK_INT((int)seqs, 135); /* the asks: 1, 3, 5 */
  cJSON_Delete(j);
  CHECK_INT(agora_db_search(d, chat, "k", 1, 1, &json), AGORA_OK); /* the sender "k" and "remember": from 2 on */
  j = cJSON_Parse(json);
  agora_free(json);
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(j, "matches")), 1);
  CHECK_INT((int)cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "matches"), 0), "seq")->valuedouble, 2);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(j, "more")));
  cJSON_Delete(j);
  CHECK_INT(agora_db_search(d, chat, "nowhere", 0, 5, &json), AGORA_OK);
  CHECK_STR(json, "{\"matches\":[],\"more\":false}");
  agora_free(json);
  json = NULL;
  CHECK_INT(agora_db_search(d, chat, "", 0, 5, &json), AGORA_ERR_INVALID);
  CHECK(json == NULL);
  CHECK_INT(agora_db_search(d, chat, "x", 0, 0, &json), AGORA_ERR_INVALID);
  CHECK_INT(agora_db_search(d, "0000000000000", "x", 0, 5, &json), AGORA_ERR_NOT_FOUND);
done:
  agora_db_close(d);
  unit_rmrf(db);
  free(db);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {UNIT(publish_numbers), UNIT(pages_with_steps), UNIT(stored_mcp_servers),
                                    UNIT(search_a_chat)};
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
