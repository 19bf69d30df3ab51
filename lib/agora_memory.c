/* libagora's memory listing (API version 9): what an agent remembers in a chat, as `agora memory` prints
 * it and the HTTP API's .../agents/{name}/memory returns it — from a world the program has open
 * (agora_memories: nothing is sent anywhere) or from a database alone (agora_db_memories: the chat's world
 * opened inert for the call, a hosted embedder asked for the query's embedding). */
#include "lib/agora_int.h"

#include "chat/id_prefix.h"
#include "runtime/db.h"
#include "world/world_memory.h"

#include <event2/event.h>
#include <stdio.h>
#include <string.h>

/* The listing's object: {"chat","agent","query"?,"relevance_left_out"?,"embedder_failed"?,"memories"}.
 * r is a finished recall (or NULL); failed, when not NULL, why the embedder failed. */
static int memory_json(world *w, const char *chat, const char *agent, const char *query, const agent_recall *r,
                       const char *failed, char **json, ag_errmsg *em) {
  cJSON *list = NULL, *j = NULL;
  int rc = world_memory_list(w, agent, query, r, &list, em);
  if (!rc && !(j = cJSON_CreateObject())) rc = ag_fail(em, AG_ERR_NOMEM, "out of memory");
  if (rc) {
    cJSON_Delete(list);
    return rc;
  }
  cJSON_AddStringToObject(j, "chat", chat);
  cJSON_AddStringToObject(j, "agent", agent);
  if (query) cJSON_AddStringToObject(j, "query", query);
  const char *why = query && !r && !failed ? world_memory_no_relevance(w, agent) : NULL;
  if (why) cJSON_AddStringToObject(j, "relevance_left_out", why);
  if (failed) cJSON_AddStringToObject(j, "embedder_failed", failed);
  cJSON_AddItemToObject(j, "memories", list);
  return agora__hand_out(j, json, em);
}

/* Checks the arguments every memory call takes; fn names the call. */
static int memory_args(const char *fn, const char *agent, char **json, ag_errmsg *em) {
  if (!json) return ag_fail(em, AG_ERR_INVALID, "%s: json is NULL", fn);
  *json = NULL;
  return agent ? AG_OK : ag_fail(em, AG_ERR_INVALID, "%s: agent is NULL", fn);
}

int agora_memories(agora_world *w, const char *agent, const char *query, char **json) {
  ag_errmsg em = {""};
  int rc = memory_args("agora_memories", agent, json, &em);
  if (!rc && !w) rc = ag_fail(&em, AG_ERR_INVALID, "agora_memories: w is NULL");
  /* The chat as it is now: w->current is only agora_chat_current's copy, stale or empty until it is asked. */
  const char *chat = rc ? NULL : agora_chat_current(w);
  if (!rc && !chat) rc = ag_fail(&em, AG_ERR_STATE, "agora_memories: the world has no current chat");
  if (!rc) rc = memory_json(w->w, chat, agent, query, NULL, NULL, json, &em);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

/* The query's embedding, awaited on the runtime's own loop. */
typedef struct memory_wait {
  int done, err;
  char why[512];
} memory_wait;

static void memory_done(void *ud, int err, const char *why) {
  memory_wait *mw = ud;
  *mw = (memory_wait){.done = 1, .err = err};
  if (err) snprintf(mw->why, sizeof mw->why, "%s", why);
}

/* With a hosted embedder, embeds the query (and the memories not embedded yet) first; a failing
 * embedder is no error: the listing comes without relevance and says why. */
static int memory_embedded(runtime *rt, const char *chat, const char *agent, const char *query, char **json,
                           ag_errmsg *em) {
  memory_wait mw = {0};
  agent_recall *r = NULL;
  int rc = query ? world_memory_recall(rt_world(rt), agent, query, 1, memory_done, &mw, &r, em) : AG_OK;
  if (rc == AG_ERR_LLM) { /* the request could not start (a missing key): the same as a failed one */
    memory_done(&mw, rc, em->text);
    rc = AG_OK;
  }
  while (!rc && r && !mw.done && event_base_loop(rt_base(rt), EVLOOP_ONCE) == 0) {
  }
  if (!rc && r && !mw.done) memory_done(&mw, AG_ERR_IO, "the loop ended before the embedder answered");
  if (!rc)
    rc = memory_json(rt_world(rt), chat, agent, query, mw.done && !mw.err ? r : NULL, mw.err ? mw.why : NULL, json, em);
  agent_recall_free(r);
  return rc;
}

int agora_db_memories(agora_db *db, const char *chat, const char *agent, const char *query,
                      const char *const *allow_key_to, size_t n_allow_key_to, unsigned flags, char **json) {
  ag_errmsg em = {""};
  runtime *rt = NULL;
  rt_allow_env allow = {0};
  char id[CHAT_ID_MAX], wid[CHAT_ID_MAX];
  int rc = memory_args("agora_db_memories", agent, json, &em);
  if (!rc && (!db || !chat)) rc = ag_fail(&em, AG_ERR_INVALID, "agora_db_memories: %s is NULL", db ? "chat" : "db");
  if (!rc && n_allow_key_to > RT_ALLOW_ENV_MAX)
    rc = ag_fail(&em, AG_ERR_INVALID, "agora_db_memories: more than %d URLs to allow", RT_ALLOW_ENV_MAX);
  for (size_t i = 0; !rc && i < n_allow_key_to; i++) allow.key_urls[allow.n_key_urls++] = allow_key_to[i];
  if (!rc) rc = chat_id_resolve(db->st, chat, id, &em);
  if (!rc) rc = rt_chat_world(db->st, id, wid, &em);
  if (!rc)
    rc = agora__rt_open(&(rt_opts){.cmd = "memory", .world = wid, .from_store = 1, .inert = 1, .embeds = query != NULL,
                                   .quiet = 1, .st = db->st, .db = db->dir, .allow = &allow, .pick = RT_CHAT_ID,
                                   .chat = id},
                        !!(flags & AGORA_NOTES), &rt, &em);
  if (!rc) rc = memory_embedded(rt, id, agent, query, json, &em);
  rt_close(rt);
  return rc ? agora__fail(rc, &em) : AG_OK;
}
