/* Building and changing worlds over HTTP (issue 24, docs/serve.md "Building worlds"): a world document
 * posted is checked by the world file's own readers and stored, never opened (it starts no program); a
 * change to a world's settings or agents edits its settings in world-file form, checks the whole
 * document again with the same readers (errors name the JSON path), then applies it to the loaded world
 * when no reply is in flight, and stores it with the world. */
#include "serve/serve_int.h"

#include "runtime/world_edit.h"
#include "world/world_file.h"
#include "world/world_mcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A change over HTTP (runtime/world_edit.h, shared with the library): the route says what it is. */
static int change_world(serve *s, serve_world *sw, const serve_match *m, int method, const cJSON *doc,
                        cJSON **agent_out, ag_errmsg *em) {
  char cancel[SERVE_ERR_MAX];
  snprintf(cancel, sizeof cancel, "POST /api/worlds/%s/cancel", world_id(sw->w));
  rt_edit_op op = m->route == SR_WORLD     ? RT_EDIT_SETTINGS
                  : m->route == SR_AGENTS  ? RT_EDIT_AGENT_ADD
                  : method == SERVE_DELETE ? RT_EDIT_AGENT_REMOVE
                                           : RT_EDIT_AGENT_CHANGE;
  rt_edit e = {.op = op, .agent = m->name, .doc = doc, .cmd = "serve", .url_override = s->over.base_url,
               .allow = &s->allow, .cancel_how = cancel, .change_how = "PATCH it instead"};
  return rt_world_edit(sw->rt, &e, agent_out, em);
}

int serve_world_settings_set(serve *s, serve_world *sw, const serve_match *m, const serve_body *b, ag_errmsg *em) {
  return change_world(s, sw, m, SERVE_PATCH, b->doc, NULL, em);
}

/* POST/PATCH/DELETE …/agents[/{name}]: the agent as the world file has it now ({"deleted": NAME}). */
static void agent_route(serve *s, serve_world *sw, struct evhttp_request *req, const serve_match *m, int method,
                        const serve_body *b) {
  cJSON *agent = NULL;
  ag_errmsg em = {""};
  int rc = change_world(s, sw, m, method, b->doc, &agent, &em);
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
  if (sw && !world_quiet_now(sw->w))
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
