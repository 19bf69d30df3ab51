/* agora_db_search (API 14): the messages of a stored chat whose text or sender holds a piece of text,
 * found in one pass over the chat on the database's side, what agora serve's GET …/search answers (a scan
 * of 100,000 messages in ~10 ms; paging them out as JSON for the caller to filter took 26 times that). */
#include "lib/agora_int.h"

#include "chat/id_prefix.h"
#include "chat/transcript.h"
#include "runtime/output.h"

#include <string.h>

#define SEARCH_NEEDLE_MAX 255

typedef struct search {
  const char *world, *chat;
  char needle[SEARCH_NEEDLE_MAX + 1]; /* ASCII lower case */
  size_t n, left;
  cJSON *matches;
  int more; /* a match past the limit exists */
} search;

/* 1 when needle (n bytes, ASCII lower case) is in hay, ASCII letters compared without case (other bytes,
 * UTF-8 included, as they are). */
static int contains(const char *hay, const char *needle, size_t n) {
  for (; *hay; hay++) {
    size_t i = 0;
    while (i < n && hay[i] && (hay[i] >= 'A' && hay[i] <= 'Z' ? hay[i] + 32 : hay[i]) == needle[i]) i++;
    if (i == n) return 1;
  }
  return 0;
}

static int search_row(const chat_entry *e, void *arg) {
  search *q = arg;
  if (!e->msg || (!contains(e->msg->text, q->needle, q->n) && !contains(e->msg->sender, q->needle, q->n)))
    return 0;
  if (!q->left) return q->more = 1, CHAT_STOP;
  cJSON *j = output_message_json(q->world, q->chat, e->msg);
  if (!j) return AG_ERR_NOMEM;
  cJSON_AddItemToArray(q->matches, j);
  q->left--;
  return 0;
}

/* The checks of the arguments; AG_OK or the failure, em saying which. */
static int check(const agora_db *db, const char *chat, const char *text, size_t max, char **json, ag_errmsg *em) {
  if (!db || !chat || !text || !json)
    return ag_fail(em, AG_ERR_INVALID, "agora_db_search: %s is NULL",
                   !db ? "db" : !chat ? "chat" : !text ? "text" : "json");
  size_t n = strlen(text);
  if (!n || n > SEARCH_NEEDLE_MAX)
    return ag_fail(em, AG_ERR_INVALID, "agora_db_search: text: 1 to %d bytes, got %zu", SEARCH_NEEDLE_MAX, n);
  if (!max) return ag_fail(em, AG_ERR_INVALID, "agora_db_search: max is 0");
  return AG_OK;
}

int agora_db_search(agora_db *db, const char *chat, const char *text, uint64_t after, size_t max, char **json) {
  ag_errmsg em = {""};
  char id[CHAT_ID_MAX];
  chat_info info;
  cJSON *j = NULL;
  if (json) *json = NULL;
  int rc = check(db, chat, text, max, json, &em);
  if (!rc) rc = chat_id_resolve(db->st, chat, id, &em);
  if (!rc) rc = chat_info_get(db->st, id, &info, &em);
  if (!rc && !(j = cJSON_CreateObject())) rc = ag_fail(&em, AG_ERR_NOMEM, "out of memory");
  if (rc) goto done;
  search q = {.world = info.world_id, .chat = id, .n = strlen(text), .left = max,
              .matches = cJSON_AddArrayToObject(j, "matches")};
  for (size_t i = 0; i < q.n; i++) q.needle[i] = text[i] >= 'A' && text[i] <= 'Z' ? (char)(text[i] + 32) : text[i];
  rc = q.matches ? chat_messages_each(db->st, id, after + 1, search_row, &q, &em)
                 : ag_fail(&em, AG_ERR_NOMEM, "out of memory");
  if (!rc && !cJSON_AddBoolToObject(j, "more", q.more)) rc = ag_fail(&em, AG_ERR_NOMEM, "out of memory");
  if (!rc) rc = agora__hand_out(j, json, &em), j = NULL;
done:
  cJSON_Delete(j);
  return rc ? agora__fail(rc, &em) : AG_OK;
}
