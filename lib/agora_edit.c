/* libagora: a world's settings changed while it runs (API version 6, include/agora.h): the console's
 * /set, /add, /remove, /turnlimit and /budget, and PATCH /api/worlds/{id}, on the same code
 * (runtime/world_edit.h): checked by the world file's readers, held to the untrusted-input rules, stored. */
#include "lib/agora_int.h"

#include "runtime/agent_json.h"
#include "runtime/world_edit.h"
#include "world/world_budget.h"

#include <stdlib.h>
#include <string.h>

int agora__allow_keep(agora_world *w, const char *base_url, const rt_allow_env *allow) {
  if (base_url && !(w->base_url = strdup(base_url))) return AG_ERR_NOMEM;
  for (size_t i = 0; i < allow->n; i++, w->allow.n++)
    if (!(w->allow.names[i] = strdup(allow->names[i]))) return AG_ERR_NOMEM;
  for (size_t i = 0; i < allow->n_key_urls; i++, w->allow.n_key_urls++)
    if (!(w->allow.key_urls[i] = strdup(allow->key_urls[i]))) return AG_ERR_NOMEM;
  return AG_OK;
}

void agora__allow_free(agora_world *w) {
  /* the copies are this handle's own (agora__allow_keep): the const is rt_allow_env's, for borrowers */
  for (size_t i = 0; i < w->allow.n; i++) free((char *)w->allow.names[i]);
  for (size_t i = 0; i < w->allow.n_key_urls; i++) free((char *)w->allow.key_urls[i]);
  free(w->base_url);
  w->allow = (rt_allow_env){.n = 0};
  w->base_url = NULL;
}

int agora_settings(agora_world *w, char **json) {
  ag_errmsg em = {""};
  if (!json) return agora__fail(ag_fail(&em, AG_ERR_INVALID, "agora_settings: json is NULL"), &em);
  *json = NULL;
  cJSON *j = world_settings_json(w->w);
  return agora__fail(j ? agora__hand_out(j, json, &em) : ag_fail(&em, AG_ERR_NOMEM, "out of memory"), &em);
}

/* Each agent as serve lists it, with the tokens its calls reported (the console's /agents). */
int agora_agents(agora_world *w, char **json) {
  ag_errmsg em = {""};
  if (!json) return agora__fail(ag_fail(&em, AG_ERR_INVALID, "agora_agents: json is NULL"), &em);
  *json = NULL;
  cJSON *arr = cJSON_CreateArray();
  for (size_t i = 0; arr && i < world_agent_count(w->w); i++) {
    const agent *a = world_agent_at(w->w, i);
    cJSON *j = rt_agent_json(a);
    llm_usage u = agent_usage(a);
    if (!j || !cJSON_AddNumberToObject(j, "input_tokens", (double)u.input_tokens) ||
        !cJSON_AddNumberToObject(j, "output_tokens", (double)u.output_tokens) || !cJSON_AddItemToArray(arr, j)) {
      cJSON_Delete(j);
      cJSON_Delete(arr);
      arr = NULL;
    }
  }
  return agora__fail(arr ? agora__hand_out(arr, json, &em) : ag_fail(&em, AG_ERR_NOMEM, "out of memory"), &em);
}

/* One change: text parsed (NULL for a removal), made by the runtime, the agent handed back. */
static int edit(agora_world *w, rt_edit_op op, const char *fn, const char *agent, const char *text, char **agent_json,
                const char *like) {
  ag_errmsg em = {""};
  cJSON *doc = NULL, *out = NULL;
  int rc = AG_OK;
  if (agent_json) *agent_json = NULL;
  if ((op != RT_EDIT_SETTINGS && op != RT_EDIT_AGENT_ADD && !agent) || (op == RT_EDIT_AGENT_ADD && like && !*like)) {
    rc = ag_fail(&em, AG_ERR_INVALID, "%s: %s", fn, like ? "like is empty" : "agent is NULL");
    goto done;
  }
  if (op != RT_EDIT_AGENT_REMOVE && (rc = agora__json_parse(text, RT_EDIT_MAX, fn, "json", fn, &doc, &em))) goto done;
  rt_edit e = {.op = op, .agent = agent, .like = like, .doc = doc, .quiet = !(w->flags & AGORA_NOTES),
               .url_override = w->base_url, .allow = &w->allow, .label = fn, .cancel_how = "agora_cancel",
               .change_how = "agora_agent_change changes it"};
  rc = rt_world_edit(w->rt, &e, agent_json ? &out : NULL, &em);
  if (!rc && out) rc = agora__hand_out(out, agent_json, &em);
  else cJSON_Delete(out);
done:
  cJSON_Delete(doc);
  return agora__fail(rc, &em);
}

int agora_settings_change(agora_world *w, const char *json) {
  return edit(w, RT_EDIT_SETTINGS, "agora_settings_change", NULL, json, NULL, NULL);
}

int agora_agent_add(agora_world *w, const char *json, char **agent_json) {
  return edit(w, RT_EDIT_AGENT_ADD, "agora_agent_add", NULL, json, agent_json, NULL);
}

int agora_agent_change(agora_world *w, const char *agent, const char *json, char **agent_json) {
  return edit(w, RT_EDIT_AGENT_CHANGE, "agora_agent_change", agent, json, agent_json, NULL);
}

int agora_agent_remove(agora_world *w, const char *agent) {
  return edit(w, RT_EDIT_AGENT_REMOVE, "agora_agent_remove", agent, NULL, NULL, NULL);
}

/* API 7: a copy of an agent of the world's own, keeping where its key may go (the console's /add). */
int agora_agent_add_like(agora_world *w, const char *like, const char *json, char **agent_json) {
  if (!like) return agora__fail(AG_ERR_INVALID, &(ag_errmsg){"agora_agent_add_like: like is NULL"});
  return edit(w, RT_EDIT_AGENT_ADD, "agora_agent_add_like", NULL, json, agent_json, like);
}

int agora_budget_set(agora_world *w, int64_t tokens, double usd) {
  ag_errmsg em = {""};
  chat_session *cs = rt_session(w->rt);
  int rc = agora__local_only(w, "agora_budget_set", &em);
  if (!rc) rc = world_budget_set(w->w, tokens, usd, &em);
  if (!rc && cs) rc = chat_session_save_world(cs, &em); /* the raised budget is the stored world's too */
  return agora__fail(rc, &em);
}
