/* An agent's memory stream as JSON (see world_memory.h). */
#include "world/world_memory.h"

#include "common/clock.h"
#include "common/jsonnum.h"

#include <stdlib.h>

/* Entry e as {"seq", "time", "sender", "text", "importance"}. */
static cJSON *entry_json(const mem_entry *e) {
  cJSON *o = cJSON_CreateObject();
  char when[AG_TIME_LEN];
  ag_time_format(e->at_ms, when, sizeof when);
  ag_json_add_int(o, "seq", (int64_t)e->msg->seq);
  cJSON_AddStringToObject(o, "time", when);
  cJSON_AddStringToObject(o, "sender", e->msg->sender);
  cJSON_AddStringToObject(o, "text", e->msg->text);
  cJSON_AddNumberToObject(o, "importance", e->importance);
  if (!e->msg->seq) cJSON_AddBoolToObject(o, "note", 1); /* remember or reflection: in no chat's messages */
  if (e->n_sources) {
    cJSON *s = cJSON_AddArrayToObject(o, "sources");
    for (size_t i = 0; s && i < e->n_sources; i++) cJSON_AddItemToArray(s, cJSON_CreateNumber((double)e->sources[i]));
  }
  return o;
}

static cJSON *scores_json(const mem_hit *h) {
  cJSON *s = cJSON_CreateObject();
  cJSON_AddNumberToObject(s, "recency", h->recency);
  cJSON_AddNumberToObject(s, "importance", h->importance);
  cJSON_AddNumberToObject(s, "relevance", h->relevance);
  cJSON_AddNumberToObject(s, "total", h->score);
  return s;
}

/* The agent name names, in mode stream: AG_OK, or an error em explains. */
static int stream_agent(world *w, const char *name, agent **out, ag_errmsg *em) {
  agent *a = world_agent_find(w, name);
  *out = a;
  if (!a) return ag_fail(em, AG_ERR_NOT_FOUND, "no agent '%s' in world '%s'", name, world_id(w));
  if (agent_settings_of(a)->memory.mode != MEM_MODE_STREAM)
    return ag_fail(em, AG_ERR_INVALID, "%s keeps no memory stream: its memory.mode is '%s' (set \"memory\": "
                   "{\"mode\": \"stream\"} in the world file)", agent_id(a), mem_mode_name(agent_settings_of(a)->memory.mode));
  return AG_OK;
}

int world_memory_recall(world *w, const char *name, const char *query, int memories, agent_recall_done done,
                        void *ud, agent_recall **out, ag_errmsg *em) {
  agent *a;
  *out = NULL;
  int rc = stream_agent(w, name, &a, em);
  if (rc || agent_settings_of(a)->memory.embedder == MEM_EMBED_HASH) return rc;
  return agent_recall_start(a, query, memories, done, ud, out, em);
}

int world_memory_list(world *w, const char *name, const char *query, const agent_recall *r, cJSON **out,
                      ag_errmsg *em) {
  agent *a;
  *out = NULL;
  int rc = stream_agent(w, name, &a, em);
  if (rc) return rc;
  const mem_stream *s = agent_memory_stream(a);
  cJSON *arr = cJSON_CreateArray();
  mem_hit *hits = query ? malloc(WORLD_MEMORY_QUERY_MAX * sizeof *hits) : NULL;
  rc = arr && (!query || hits) ? AG_OK : AG_ERR_NOMEM;
  if (!rc && query) {
    size_t n = r ? agent_recall_top(r, world_now(w), hits, WORLD_MEMORY_QUERY_MAX)
                 : agent_memory_query(a, query, world_now(w), hits, WORLD_MEMORY_QUERY_MAX);
    for (size_t i = 0; i < n; i++) {
      cJSON *o = entry_json(&s->e[hits[i].i]);
      cJSON_AddItemToObject(o, "scores", scores_json(&hits[i]));
      cJSON_AddItemToArray(arr, o);
    }
  }
  for (size_t i = 0; !rc && !query && i < s->n; i++) cJSON_AddItemToArray(arr, entry_json(&s->e[i]));
  free(hits);
  if (rc) {
    cJSON_Delete(arr);
    return rc;
  }
  *out = arr;
  return AG_OK;
}

const char *world_memory_no_relevance(world *w, const char *name) {
  agent *a = world_agent_find(w, name);
  if (!a || agent_settings_of(a)->memory.embedder == MEM_EMBED_HASH) return NULL;
  return "the agent's embedder is hosted and embedding the query would be a paid request: a GET sends none, "
         "so relevance is 0 (agora memory --query embeds it)";
}
