/* Building and changing worlds over HTTP (issue 24, docs/serve.md "Building worlds"): a world document
 * posted is checked by the world file's own readers and stored, never opened (it starts no program); a
 * change to a world's settings or agents edits its settings in world-file form, checks the whole
 * document again with the same readers (errors name the JSON path), then applies it to the loaded world
 * when no reply is in flight, and stores it with the world. */
#include "serve/serve_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A change over HTTP (libagora's API 6, held to the rules of untrusted input): the route says what it
 * is. doc is the body's (borrowed); *agent_out (may be NULL) the agent as the world now has it. */
static int change_world(serve_world *sw, const serve_match *m, int method, const cJSON *doc, cJSON **agent_out) {
  char *text = doc ? cJSON_PrintUnformatted(doc) : NULL, *agent = NULL;
  int rc;
  if (doc && !text) return AGORA_ERR_NOMEM;
  if (m->route == SR_WORLD) rc = agora_settings_change(sw->w, text);
  else if (m->route == SR_AGENTS) rc = agora_agent_add(sw->w, text, &agent);
  else if (method == SERVE_DELETE) rc = agora_agent_remove(sw->w, m->name);
  else rc = agora_agent_change(sw->w, m->name, text, &agent);
  cJSON_free(text);
  if (agent_out) *agent_out = serve_lib_json(agent);
  else agora_free(agent);
  return rc;
}

int serve_world_settings_set(serve_world *sw, const cJSON *doc) {
  return change_world(sw, &(serve_match){.route = SR_WORLD}, SERVE_PATCH, doc, NULL);
}

/* POST/PATCH/DELETE …/agents[/{name}]: the agent as the world file has it now ({"deleted": NAME}). */
static void agent_route(serve_world *sw, struct evhttp_request *req, const serve_match *m, int method,
                        const serve_body *b) {
  cJSON *agent = NULL;
  int rc = change_world(sw, m, method, b->doc, &agent);
  if (rc) return serve_reply_lib(req, rc, m->world);
  if (method == SERVE_DELETE) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "deleted", m->name);
    return serve_reply_json(req, 200, j);
  }
  if (!agent) return serve_reply_error(req, 500, "out of memory");
  serve_reply_json(req, method == SERVE_POST ? 201 : 200, agent);
}

/* POST /api/worlds: the document checked as a world file and stored as a new world, not loaded. */
static void post_world(serve *s, struct evhttp_request *req, const serve_body *b) {
  char *text = cJSON_PrintUnformatted(b->doc), id[AGORA_ID_MAX];
  if (!text) return serve_reply_error(req, 500, "out of memory");
  int rc = agora_db_world_create(s->db, text, id);
  cJSON_free(text);
  if (rc) return serve_reply_lib(req, rc, NULL);
  serve_world_reply_stored(s, id, 201, req);
}

/* 1 when sw runs MCP servers (it was named on the command line). */
static int runs_mcp(serve_world *sw) {
  char *text = NULL;
  cJSON *j = !agora_mcp_servers(sw->w, &text) ? serve_lib_json(text) : NULL;
  int runs = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "started")) &&
             cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "servers")) > 0;
  cJSON_Delete(j);
  return runs;
}

/* DELETE /api/worlds/{id}?confirm=ID: the world with every chat, unloaded first when it is loaded. */
static void delete_world(serve *s, serve_world *sw, struct evhttp_request *req, const serve_match *m) {
  char confirm[SERVE_QUERY_MAX], err[SERVE_ERR_MAX], *text = NULL;
  int present = 0;
  int rc = sw ? AGORA_OK : agora_db_world(s->db, m->world, &text); /* an unknown world is 404 whatever confirm says */
  cJSON *stored = serve_lib_json(text);
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(stored, "id");
  if (!sw && !rc && (!cJSON_IsString(id) || strcmp(id->valuestring, m->world))) rc = AGORA_ERR_NOT_FOUND;
  cJSON_Delete(stored);
  if (rc == AGORA_ERR_NOT_FOUND || rc == AGORA_ERR_INVALID)
    return serve_reply_error(req, 404, "no world '%s' in the database", m->world);
  if (rc) return serve_reply_lib(req, rc, m->world);
  if (serve_query_str(m->query, "confirm", confirm, &present, err)) return serve_reply_error(req, 400, "%s", err);
  if (!present)
    return serve_reply_error(req, 400, "confirm: give ?confirm=%s to delete world '%s' with all its chats", m->world, m->world);
  if (strcmp(confirm, m->world))
    return serve_reply_error(req, 409, "confirm: '%s' is not the world's id '%s': nothing was deleted", confirm, m->world);
  if (sw && !agora_is_quiet(sw->w))
    return serve_reply_error(req, 409, "world '%s' has replies in flight: cancel them first", m->world);
  if (sw && runs_mcp(sw))
    return serve_reply_error(req, 409, "world '%s' runs its MCP servers (it was named on the command line): stop "
                             "agora serve to delete it", m->world);
  if (sw) serve_world_unload(s, sw);
  size_t chats = 0;
  if ((rc = agora_db_world_delete(s->db, m->world, NULL, &chats))) return serve_reply_lib(req, rc, m->world);
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
  case SR_AGENT: return agent_route(sw, req, m, method, b);
  default: return serve_reply_error(req, 404, "no such route");
  }
}
