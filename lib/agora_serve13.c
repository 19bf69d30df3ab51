/* libagora API 13 (include/agora_server.h): what `agora serve` needs beyond API 12 to answer on the
 * public API alone — a published message's number, a page of a stored chat with its thread's steps, and
 * a stored world's MCP servers — on the code serve answers with today, so the answers do not change. */
#include "lib/agora_int.h"

#include "chat/id_prefix.h"
#include "chat/transcript.h"
#include "runtime/db.h"
#include "runtime/mcp_status.h"
#include "runtime/output.h"

#include <stddef.h>
#include <stdint.h>

int agora_publish_seq(agora_world *w, const char *sender, const char *text, uint64_t *seq) {
  ag_msg *m = NULL;
  if (seq) *seq = 0;
  int rc = agora__publish(w, "agora_publish_seq", sender, text, &m);
  if (!rc && m && seq) *seq = m->seq; /* no message handed back on NATS: the stream numbers it */
  return rc;
}

/* A page being filled: messages until left runs out, and every step among them, anchored to the
 * message it follows (last: the page's last message so far, from - 1 before its first). */
typedef struct page {
  cJSON *messages, *steps;
  const char *world, *chat;
  uint64_t last;
  size_t left;
} page;

static int page_row(const chat_entry *e, void *arg) {
  page *p = arg;
  if (!e->msg) { /* a thread step (tool call or result, failed call), anchored after the last message */
    cJSON *j = output_step_json(p->world, p->chat, e->kind, e->fields);
    if (!j) return AG_ERR_NOMEM;
    cJSON_AddNumberToObject(j, "after_seq", (double)p->last);
    cJSON_AddItemToArray(p->steps, j);
    return 0;
  }
  if (!p->left) return CHAT_STOP; /* the first message past the page: the steps before it were the page's */
  cJSON *j = output_message_json(p->world, p->chat, e->msg);
  if (!j) return AG_ERR_NOMEM;
  cJSON_AddItemToArray(p->messages, j);
  p->last = e->msg->seq;
  p->left--;
  return 0;
}

/* Chat id's page (from >= 1, max >= 1) into *json. */
static int page_json(store *st, const char *id, uint64_t from, size_t max, char **json, ag_errmsg *em) {
  chat_info info;
  int rc = chat_info_get(st, id, &info, em);
  if (rc) return rc;
  cJSON *j = cJSON_CreateObject();
  page p = {.messages = cJSON_AddArrayToObject(j, "messages"), .steps = cJSON_AddArrayToObject(j, "steps"),
            .world = info.world_id, .chat = id, .last = from - 1, .left = max};
  rc = p.messages && p.steps ? chat_transcript_from(st, id, from, page_row, &p, em)
                             : ag_fail(em, AG_ERR_NOMEM, "out of memory");
  if (!rc) return agora__hand_out(j, json, em);
  cJSON_Delete(j);
  return rc;
}

int agora_db_transcript_page(agora_db *db, const char *chat, uint64_t from, size_t max, char **json) {
  ag_errmsg em = {""};
  char id[CHAT_ID_MAX];
  if (json) *json = NULL;
  int rc = !db      ? ag_fail(&em, AG_ERR_INVALID, "agora_db_transcript_page: db is NULL")
           : !chat  ? ag_fail(&em, AG_ERR_INVALID, "agora_db_transcript_page: chat is NULL")
           : !json  ? ag_fail(&em, AG_ERR_INVALID, "agora_db_transcript_page: json is NULL")
           : !from  ? ag_fail(&em, AG_ERR_INVALID, "agora_db_transcript_page: from must be 1 or more")
           : !max   ? ag_fail(&em, AG_ERR_INVALID, "agora_db_transcript_page: max must be 1 or more")
                    : chat_id_resolve(db->st, chat, id, &em);
  if (!rc) rc = page_json(db->st, id, from, max, json, &em);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

int agora_db_mcp_servers(agora_db *db, const char *world, char **json) {
  ag_errmsg em = {""};
  char wid[CHAT_ID_MAX];
  world_spec spec;
  if (json) *json = NULL;
  int rc = !db      ? ag_fail(&em, AG_ERR_INVALID, "agora_db_mcp_servers: db is NULL")
           : !world ? ag_fail(&em, AG_ERR_INVALID, "agora_db_mcp_servers: world is NULL")
           : !json  ? ag_fail(&em, AG_ERR_INVALID, "agora_db_mcp_servers: json is NULL")
                    : AG_OK;
  /* rt_pick_world refuses a named world only when there is none ("no world 'X'") */
  if (!rc && (rc = rt_pick_world(db->st, world, wid, &em)) == AG_ERR_INVALID) rc = AG_ERR_NOT_FOUND;
  if (!rc && !(rc = chat_world_spec(db->st, wid, &spec, &em))) {
    cJSON *j = rt_mcp_status_json(NULL, &spec); /* rt NULL: a stored world's servers, never started */
    world_spec_free(&spec);
    rc = j ? agora__hand_out(j, json, &em) : ag_fail(&em, AG_ERR_NOMEM, "out of memory");
  }
  return rc ? agora__fail(rc, &em) : AG_OK;
}
