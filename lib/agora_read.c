/* libagora: what a server reads beside its worlds that the chat calls do not give (API version 10), as
 * agora serve's GET …/graph and /metrics read it: a stored chat's graph (chat/graph_json.c, the code
 * behind serve's), a world's counts since the open and a database handle's commits. */
#include "lib/agora_int.h"

#include "chat/graph_json.h"
#include "chat/id_prefix.h"
#include "common/error.h"
#include "storage/store.h"

#include <stdio.h>

/* n within [1, max], def for 0; AG_ERR_INVALID naming the argument otherwise. */
static int bounded(size_t *n, size_t def, size_t max, const char *what, ag_errmsg *em) {
  if (!*n) *n = def;
  if (*n > max) return ag_fail(em, AG_ERR_INVALID, "agora_db_chat_graph: %s: %zu, at most %zu (0: %zu)", what, *n, max, def);
  return AG_OK;
}

int agora_db_chat_graph(agora_db *db, const char *chat, size_t nodes, size_t points, char **json) {
  ag_errmsg em = {""};
  char id[CHAT_ID_MAX];
  cJSON *j = NULL;
  int rc = !db || !json ? ag_fail(&em, AG_ERR_INVALID, "agora_db_chat_graph: %s is NULL", db ? "json" : "db")
           : chat       ? chat_id_resolve(db->st, chat, id, &em)
                        : ag_fail(&em, AG_ERR_INVALID, "agora_db_chat_graph: chat is NULL");
  if (!rc) rc = bounded(&nodes, GRAPH_NODES, GRAPH_NODES_MAX, "nodes", &em);
  if (!rc) rc = bounded(&points, GRAPH_POINTS, GRAPH_POINTS_MAX, "points", &em);
  if (!rc) rc = chat_graph_json(db->st, id, nodes, points, &j, &em);
  if (!rc) rc = agora__hand_out(j, json, &em);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

int agora_world_counts(const agora_world *w, char **json) {
  ag_errmsg em = {""};
  const rt_stats *s = &w->stats;
  cJSON *j = json ? cJSON_CreateObject() : NULL;
  if (!json) return agora__fail(ag_fail(&em, AG_ERR_INVALID, "agora_world_counts: json is NULL"), &em);
  if (!j) return agora__fail(AG_ERR_NOMEM, NULL);
  cJSON_AddNumberToObject(j, "agents", (double)world_agent_count(w->w));
  cJSON_AddNumberToObject(j, "thinking", (double)world_thinking(w->w));
  cJSON_AddNumberToObject(j, "messages", (double)s->messages);
  cJSON_AddNumberToObject(j, "events", (double)s->events);
  cJSON_AddNumberToObject(j, "llm_calls_done", (double)s->llm_done);
  cJSON_AddNumberToObject(j, "llm_calls_failed", (double)s->llm_failed);
  cJSON_AddNumberToObject(j, "rate_limited", (double)s->rate_limited);
  cJSON_AddNumberToObject(j, "input_tokens", (double)s->tokens_in);
  cJSON_AddNumberToObject(j, "output_tokens", (double)s->tokens_out);
  int rc = agora__hand_out(j, json, &em);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

int agora_db_counts(agora_db *db, char **json) {
  ag_errmsg em = {""};
  if (!db || !json) return agora__fail(ag_fail(&em, AG_ERR_INVALID, "agora_db_counts: %s is NULL", db ? "json" : "db"), &em);
  cJSON *j = cJSON_CreateObject();
  if (!j) return agora__fail(AG_ERR_NOMEM, NULL);
  cJSON_AddNumberToObject(j, "commits", (double)store_commits(db->st));
  cJSON_AddNumberToObject(j, "synced", (double)store_synced(db->st));
  int rc = agora__hand_out(j, json, &em);
  return rc ? agora__fail(rc, &em) : AG_OK;
}
