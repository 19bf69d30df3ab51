/* agora_db_messages (API 12): agora_messages' window of a chat's messages, on a database with no world
 * open, so that a server pages through a stored chat (agora serve's search) without reading it whole. */
#include "lib/agora_int.h"

#include "chat/id_prefix.h"

int agora_db_messages(agora_db *db, const char *chat, uint64_t from, size_t max, char **json) {
  ag_errmsg em = {""};
  char id[CHAT_ID_MAX];
  int rc = !db     ? ag_fail(&em, AG_ERR_INVALID, "agora_db_messages: db is NULL")
           : !chat ? ag_fail(&em, AG_ERR_INVALID, "agora_db_messages: chat is NULL")
           : !json ? ag_fail(&em, AG_ERR_INVALID, "agora_db_messages: json is NULL")
                   : chat_id_resolve(db->st, chat, id, &em);
  if (!rc) rc = agora__messages_json(db->st, id, from, max, json, &em);
  return rc ? agora__fail(rc, &em) : AG_OK;
}
