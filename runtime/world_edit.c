/* A running world's settings changed by a door (see world_edit.h): edit the settings document, check it
 * as a world file, make it to the world, store it. Moved here from serve/serve_build.c so that the
 * library (lib/agora_edit.c) changes a world by the same rules as PATCH does. */
#include "runtime/world_edit.h"

#include "agents/mention.h"
#include "world/world_file_get.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const rt_edit_settings_fields[] = {"turn_limit", "main_agent", "memory_window", "variables", NULL};
const char *const rt_edit_agent_fields[] = {"provider", "model", "system_prompt", "temperature", "tools", NULL};

/* The index of agent name (a name or an id) in agents, or -1. */
static int agent_index(const cJSON *agents, const char *name) {
  char want[MENTION_ID_MAX], id[MENTION_ID_MAX];
  if (!name || mention_id_from_name(name, want, sizeof want)) return -1;
  int i = 0;
  for (const cJSON *a = agents ? agents->child : NULL; a; a = a->next, i++) {
    const char *n = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "name"));
    if (n && !mention_id_from_name(n, id, sizeof id) && !strcmp(id, want)) return i;
  }
  return -1;
}

/* Puts every field of from into obj in place of its own (a duplicate of each); a null takes the field
 * away, so that the world file's default applies. */
static int merge(cJSON *obj, const cJSON *from) {
  for (const cJSON *f = from ? from->child : NULL; f; f = f->next) {
    cJSON_DeleteItemFromObjectCaseSensitive(obj, f->string);
    if (cJSON_IsNull(f)) continue;
    cJSON *v = cJSON_Duplicate(f, 1);
    if (!v) return AG_ERR_NOMEM;
    cJSON_AddItemToObject(obj, f->string, v);
  }
  return AG_OK;
}

/* The change itself, before the document is read: an object naming only the fields it may. */
static int check_change(const rt_edit *e, const char *label, ag_errmsg *em) {
  const char *const *fields = e->op == RT_EDIT_SETTINGS ? rt_edit_settings_fields
                              : e->op == RT_EDIT_AGENT_CHANGE ? rt_edit_agent_fields : NULL;
  if (e->op == RT_EDIT_AGENT_REMOVE) return AG_OK;
  if (!cJSON_IsObject(e->doc) || !e->doc->child)
    return ag_fail(em, AG_ERR_INVALID, "%s: the change must be a JSON object with at least one field", label);
  /* a new agent: the world file's readers check it whole */
  return fields ? world_file_check_keys(e->doc, fields, NULL, label, "", em) : AG_OK;
}

/* The new agent's document: e->doc, or with e->like that agent's settings without its scripted replies
 * (its own) and with e->doc's fields on top. */
static int like_doc(const cJSON *agents, const rt_edit *e, const char *id, cJSON **out, ag_errmsg *em) {
  int i = e->like ? agent_index(agents, e->like) : -1;
  if (e->like && i < 0) return ag_fail(em, AG_ERR_NOT_FOUND, "no agent '%s' in world '%s'", e->like, id);
  cJSON *a = cJSON_Duplicate(e->like ? cJSON_GetArrayItem(agents, i) : e->doc, 1);
  if (!a) return AG_ERR_NOMEM;
  if (e->like) cJSON_DeleteItemFromObjectCaseSensitive(a, "replies");
  if (e->like && merge(a, e->doc)) {
    cJSON_Delete(a);
    return AG_ERR_NOMEM;
  }
  *out = a;
  return AG_OK;
}

/* Whether a copy of e->like keeps its key rule: its key goes where the original's goes, and nowhere else
 * (a field taken away, null, sends it nowhere new). */
static int keeps_like_rule(const rt_edit *e) {
  static const char *const moves_key[] = {"provider", "base_url", "api_key_env", "memory"};
  if (!e->like) return 0;
  for (size_t i = 0; i < sizeof moves_key / sizeof *moves_key; i++) {
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(e->doc, moves_key[i]);
    if (f && !cJSON_IsNull(f)) return 0;
  }
  return 1;
}

/* Makes the change to doc (the world's settings in world-file form); the agent's index into *at. */
static int edit_doc(cJSON *doc, const rt_edit *e, const char *id, int *at, ag_errmsg *em) {
  cJSON *agents = cJSON_GetObjectItemCaseSensitive(doc, "agents");
  if (!agents && !(agents = cJSON_AddArrayToObject(doc, "agents"))) return AG_ERR_NOMEM;
  if (e->op == RT_EDIT_SETTINGS) return merge(doc, e->doc);
  if (e->op == RT_EDIT_AGENT_ADD) {
    cJSON *a = NULL;
    int rc = like_doc(agents, e, id, &a, em);
    if (rc) return rc;
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "name"));
    if (name && agent_index(agents, name) >= 0) {
      rc = ag_fail(em, AG_ERR_EXISTS, "world '%s' has an agent '%s' already%s%s%s", id, name,
                   e->change_how ? " (" : "", e->change_how ? e->change_how : "", e->change_how ? ")" : "");
      cJSON_Delete(a); /* after the message: name is a's */
      return rc;
    }
    cJSON_AddItemToArray(agents, a);
    *at = cJSON_GetArraySize(agents) - 1;
    return AG_OK;
  }
  int i = agent_index(agents, e->agent);
  if (i < 0) return ag_fail(em, AG_ERR_NOT_FOUND, "no agent '%s' in world '%s'", e->agent ? e->agent : "", id);
  if (e->op == RT_EDIT_AGENT_REMOVE) {
    cJSON_DeleteItemFromArray(agents, i);
    return AG_OK;
  }
  *at = i;
  return merge(cJSON_GetArrayItem(agents, i), e->doc);
}

/* The checked document's change made to the live world. */
static int apply(runtime *rt, const rt_edit *e, int at, world_spec *spec, ag_errmsg *em) {
  world *w = rt_world(rt);
  const rt_allow_env *allow = e->allow ? e->allow : &(rt_allow_env){.n = 0};
  int rc = AG_OK;
  if (at >= 0) {
    agent_settings *a = &spec->agents[at];
    /* A new agent is as untrusted as an imported snapshot: its key goes only where one may. A change keeps
     * what the agent had (a change cannot name a base_url or a key variable). */
    world_spec one = {.name = spec->name, .agents = a, .n_agents = 1}; /* the others are as they were */
    agent *old = e->op == RT_EDIT_AGENT_CHANGE ? world_agent_find(w, e->agent)
                 : keeps_like_rule(e)            ? world_agent_find(w, e->like)
                                                 : NULL;
    if (old) rt_key_keep(a, agent_settings_of(old));
    else if (e->quiet) rt_key_withhold_quiet(&one, e->url_override, allow);
    else rt_key_withhold(&one, e->cmd, world_id(w), e->url_override, allow);
    rc = rt_key_env_check_agent(a, (size_t)at, e->label ? e->label : world_id(w), allow, em);
    if (!rc) rc = e->op == RT_EDIT_AGENT_ADD ? world_add_agent(w, a, em) : world_update_agent(w, a, em);
  } else if (e->op == RT_EDIT_AGENT_REMOVE) {
    rc = world_remove_agent(w, e->agent);
  } else {
    rc = world_set_settings(w, spec);
  }
  if (rc) return rc == AG_ERR_NOMEM ? ag_fail(em, rc, "out of memory") : rc;
  return rt_session(rt) ? chat_session_save_world(rt_session(rt), em) : AG_OK;
}

int rt_world_edit(runtime *rt, const rt_edit *e, cJSON **agent_out, ag_errmsg *em) {
  world *w = rt_world(rt);
  const char *id = world_id(w), *label = e->label ? e->label : id;
  world_spec spec = {.name = NULL};
  cJSON *doc = NULL;
  int at = -1, checked = 0, rc = check_change(e, label, em);
  if (rc) goto done;
  /* A reply in flight was asked with the settings it would change; what is only queued is delivered
   * with the new ones (the loop runs between a program's calls, so a world just opened, or just changed,
   * has events queued). */
  if (world_thinking(w)) {
    rc = ag_fail(em, AG_ERR_STATE, "world '%s' has replies in flight: change it when they are in%s%s%s", id,
                 e->cancel_how ? " (or " : "", e->cancel_how ? e->cancel_how : "", e->cancel_how ? ")" : "");
    goto done;
  }
  if (rt_join(rt) || rt_cluster(rt)) {
    rc = ag_fail(em, AG_ERR_STATE, "world '%s' is joined over NATS: its settings are its file's", id);
    goto done;
  }
  doc = world_settings_json(w);
  rc = doc ? edit_doc(doc, e, id, &at, em) : AG_ERR_NOMEM;
  if (!rc && !(rc = world_spec_from_json(doc, label, &spec, em))) checked = 1;
  /* Taking an agent away can leave the document invalid (it was the main agent): that is a conflict
   * with the world as it stands, not a bad change. */
  if (rc == AG_ERR_INVALID && e->op == RT_EDIT_AGENT_REMOVE) rc = AG_ERR_STATE;
  if (!rc) rc = apply(rt, e, at, &spec, em);
  if (!rc && agent_out && at >= 0) *agent_out = world_agent_to_json(&spec.agents[at]);
done:
  if (checked) world_spec_free(&spec);
  cJSON_Delete(doc);
  return rc == AG_ERR_NOMEM && !em->text[0] ? ag_fail(em, rc, "out of memory") : rc;
}
