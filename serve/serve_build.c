/* Building and changing worlds over HTTP (issue 24, docs/serve.md "Building worlds"): a world document
 * posted is checked by the world file's own readers and stored, never opened (it starts no program); a
 * change to a world's settings or agents edits its settings in world-file form, checks the whole
 * document again with the same readers (errors name the JSON path), then applies it to the loaded world
 * when no reply is in flight, and stores it with the world. */
#include "serve/serve_int.h"

#include "agents/mention.h"
#include "world/world_file.h"
#include "world/world_mcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One change of a world's settings document: what the request asked, and which agent it is about. */
typedef struct change {
  const serve_match *m;
  const serve_body *b;
  int method;
  int at; /* the agent's index in the edited document's agents (-1: none) */
} change;

/* The index of agent name (a name or an id) in agents, or -1. */
static int agent_index(const cJSON *agents, const char *name) {
  char want[MENTION_ID_MAX], id[MENTION_ID_MAX];
  if (mention_id_from_name(name, want, sizeof want)) return -1;
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

/* Applies the request to doc (the world's settings in world-file form). */
static int edit_doc(cJSON *doc, change *c, ag_errmsg *em) {
  cJSON *agents = cJSON_GetObjectItemCaseSensitive(doc, "agents");
  if (!agents && !(agents = cJSON_AddArrayToObject(doc, "agents"))) return AG_ERR_NOMEM;
  if (c->m->route == SR_WORLD) return merge(doc, c->b->doc);
  if (c->m->route == SR_AGENTS) {
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c->b->doc, "name"));
    if (name && agent_index(agents, name) >= 0)
      return ag_fail(em, AG_ERR_EXISTS, "world '%s' has an agent '%s' already (PATCH it instead)", c->m->world, name);
    cJSON *a = cJSON_Duplicate(c->b->doc, 1);
    if (!a) return AG_ERR_NOMEM;
    cJSON_AddItemToArray(agents, a);
    c->at = cJSON_GetArraySize(agents) - 1;
    return AG_OK;
  }
  int i = agent_index(agents, c->m->name);
  if (i < 0) return ag_fail(em, AG_ERR_NOT_FOUND, "no agent '%s' in world '%s'", c->m->name, c->m->world);
  if (c->method == SERVE_DELETE) {
    cJSON_DeleteItemFromArray(agents, i);
    return AG_OK;
  }
  c->at = i;
  return merge(cJSON_GetArrayItem(agents, i), c->b->doc);
}

/* The checked document's change made to the live world. */
static int apply(serve *s, serve_world *sw, const change *c, world_spec *spec, ag_errmsg *em) {
  int rc = AG_OK;
  if (c->at >= 0) {
    agent_settings *a = &spec->agents[c->at];
    /* A new agent is as untrusted as an imported snapshot: its key goes only where one may. A change keeps
     * what the agent had (a PATCH cannot name a base_url or a key variable). */
    world_spec one = {.name = spec->name, .agents = a, .n_agents = 1}; /* the others are as they were */
    agent *old = c->m->route == SR_AGENT ? world_agent_find(sw->w, c->m->name) : NULL;
    if (old) rt_key_keep(a, agent_settings_of(old));
    else rt_key_withhold(&one, "serve", world_id(sw->w), s->over.base_url, &s->allow);
    rc = rt_key_env_check_agent(a, (size_t)c->at, world_id(sw->w), &s->allow, em);
    if (!rc) rc = c->m->route == SR_AGENTS ? world_add_agent(sw->w, a, em) : world_update_agent(sw->w, a, em);
  } else if (c->m->route == SR_AGENT) {
    rc = world_remove_agent(sw->w, c->m->name);
  } else {
    rc = world_set_settings(sw->w, spec);
  }
  if (rc) return rc == AG_ERR_NOMEM ? ag_fail(em, rc, "out of memory") : rc;
  return chat_session_save_world(sw->cs, em);
}

/* Edits sw's settings as the request says, checks them as a world file and applies them; the agent's
 * index into *at. AG_ERR_STATE while replies are in flight or for a world joined over NATS. */
static int change_world(serve *s, serve_world *sw, change *c, cJSON **agent_out, ag_errmsg *em) {
  if (!world_is_quiet(sw->w))
    return ag_fail(em, AG_ERR_STATE, "world '%s' has replies in flight: change it when they are in (or POST "
                   "/api/worlds/%s/cancel)", world_id(sw->w), world_id(sw->w));
  if (sw->nats)
    return ag_fail(em, AG_ERR_STATE, "world '%s' is joined over NATS: its settings are its file's", world_id(sw->w));
  cJSON *doc = world_settings_json(sw->w);
  world_spec spec = {.name = NULL};
  int checked = 0, rc = doc ? edit_doc(doc, c, em) : AG_ERR_NOMEM;
  if (!rc && !(rc = world_spec_from_json(doc, world_id(sw->w), &spec, em))) checked = 1;
  /* Taking an agent away can leave the document invalid (it was the main agent): that is a conflict
   * with the world as it stands, not a bad request body. */
  if (rc == AG_ERR_INVALID && c->method == SERVE_DELETE) rc = AG_ERR_STATE;
  if (!rc) rc = apply(s, sw, c, &spec, em);
  if (!rc && agent_out && c->at >= 0) *agent_out = world_agent_to_json(&spec.agents[c->at]);
  if (checked) world_spec_free(&spec);
  cJSON_Delete(doc);
  return rc == AG_ERR_NOMEM && !em->text[0] ? ag_fail(em, rc, "out of memory") : rc;
}

int serve_world_settings_set(serve *s, serve_world *sw, const serve_match *m, const serve_body *b, ag_errmsg *em) {
  change c = {.m = m, .b = b, .method = SERVE_PATCH, .at = -1};
  return change_world(s, sw, &c, NULL, em);
}

/* POST/PATCH/DELETE …/agents[/{name}]: the agent as the world file has it now ({"deleted": NAME}). */
static void agent_route(serve *s, serve_world *sw, struct evhttp_request *req, const serve_match *m, int method,
                        const serve_body *b) {
  change c = {.m = m, .b = b, .method = method, .at = -1};
  cJSON *agent = NULL;
  ag_errmsg em = {""};
  int rc = change_world(s, sw, &c, &agent, &em);
  if (rc) return serve_reply_fail(req, rc, &em);
  if (method == SERVE_DELETE) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "deleted", m->name);
    return serve_reply_json(req, 200, j);
  }
  serve_reply_json(req, method == SERVE_POST ? 201 : 200, agent);
}

/* POST /api/worlds: the document checked as a world file and stored as a new world, not loaded. */
static void post_world(serve *s, struct evhttp_request *req, const serve_body *b) {
  world_spec spec;
  ag_errmsg em = {""};
  int rc = world_spec_from_json(b->doc, "world", &spec, &em);
  if (rc) return serve_reply_fail(req, rc, &em);
  rc = chat_world_create(s->st, &spec, &em);
  char id[sizeof spec.id];
  memcpy(id, spec.id, sizeof id);
  world_spec_free(&spec);
  if (rc) return serve_reply_fail(req, rc, &em);
  serve_world_reply_stored(s, id, 201, req);
}

/* DELETE /api/worlds/{id}?confirm=ID: the world with every chat, unloaded first when it is loaded. */
static void delete_world(serve *s, serve_world *sw, struct evhttp_request *req, const serve_match *m) {
  char confirm[SERVE_QUERY_MAX], err[SERVE_ERR_MAX];
  int present = 0;
  const char *why = NULL;
  ag_errmsg em = {""};
  char *settings = NULL; /* an unknown world is 404 whatever confirm says */
  int rc = sw ? AG_OK : chat_world_settings(s->st, m->world, &settings, &em);
  free(settings);
  if (rc) return serve_reply_fail(req, rc, &em);
  if (serve_query_str(m->query, "confirm", confirm, &present, err)) return serve_reply_error(req, 400, "%s", err);
  if (!present)
    return serve_reply_error(req, 400, "confirm: give ?confirm=%s to delete world '%s' with all its chats", m->world, m->world);
  if (strcmp(confirm, m->world))
    return serve_reply_error(req, 409, "confirm: '%s' is not the world's id '%s': nothing was deleted", confirm, m->world);
  if (sw && !world_is_quiet(sw->w))
    return serve_reply_error(req, 409, "world '%s' has replies in flight: cancel them first", m->world);
  if (sw && rt_mcp_started(sw->rt, &why) && world_mcp_count(sw->w))
    return serve_reply_error(req, 409, "world '%s' runs its MCP servers (it was named on the command line): stop "
                             "agora serve to delete it", m->world);
  if (sw) serve_world_unload(s, sw);
  size_t chats = 0;
  rc = chat_world_delete(s->st, m->world, &chats, &em);
  if (rc) return serve_reply_fail(req, rc, &em);
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "deleted", m->world);
  cJSON_AddNumberToObject(j, "chats", (double)chats);
  serve_reply_json(req, 200, j);
}

void serve_build_handle(serve *s, serve_world *sw, struct evhttp_request *req, const serve_match *m, int method,
                        const serve_body *b) {
  switch (m->route) {
  case SR_WORLDS: return post_world(s, req, b);
  case SR_WORLD: return delete_world(s, sw, req, m);
  case SR_AGENTS:
  case SR_AGENT: return agent_route(s, sw, req, m, method, b);
  default: return serve_reply_error(req, 404, "no such route");
  }
}
