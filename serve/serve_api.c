/* agora serve's JSON API (docs/serve.md): worlds and the dispatch of every route of the API, each answered
 * from the loop at once. Worlds are libagora's (agora_world_open on the server's loop), stored worlds and
 * chats read through the database the loop's worlds share (agora_loop_db): the same code paths as the
 * commands. Chats, messages and snapshots are serve_chats.c's. */
#include "serve/serve_int.h"

#include "common/jsonnum.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- worlds ---- */

static void get_worlds(serve *s, struct evhttp_request *req) {
  char *text = NULL;
  int rc = agora_db_worlds(s->db, &text);
  if (rc) return serve_reply_lib(req, rc, NULL);
  cJSON *rows = serve_lib_json(text), *row;
  if (!rows) return serve_reply_error(req, 500, "out of memory");
  cJSON_ArrayForEach(row, rows) {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(row, "id");
    cJSON_AddBoolToObject(row, "loaded", cJSON_IsString(id) && serve_world_find(s, id->valuestring));
  }
  cJSON *j = cJSON_CreateObject();
  cJSON_AddItemToObject(j, "worlds", rows);
  /* The first world named on the command line: the one the page opens (null: none was named). */
  const char *primary = NULL;
  for (size_t i = 0; i < s->n_worlds && !primary; i++)
    if (s->worlds[i]->named) primary = agora_world_id(s->worlds[i]->w);
  if (primary) cJSON_AddStringToObject(j, "primary", primary);
  else cJSON_AddNullToObject(j, "primary");
  serve_reply_json(req, 200, j);
}

/* The mcp object of GET /api/worlds/{id} from the servers' list (agora_mcp_servers' or
 * agora_db_mcp_servers'): how many, whether they were started, and why not (a world from the database
 * never starts programs: docs/architecture.md "The runtime"). */
static cJSON *mcp_json(cJSON *servers) {
  cJSON *m = cJSON_CreateObject();
  const cJSON *started = cJSON_GetObjectItemCaseSensitive(servers, "started");
  const cJSON *reason = cJSON_GetObjectItemCaseSensitive(servers, "reason");
  cJSON_AddNumberToObject(m, "servers", cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(servers, "servers")));
  cJSON_AddBoolToObject(m, "started", cJSON_IsTrue(started));
  if (cJSON_IsString(reason)) cJSON_AddStringToObject(m, "reason", reason->valuestring);
  else cJSON_AddNullToObject(m, "reason");
  cJSON_Delete(servers);
  return m;
}

/* A number of the world's settings ("budget": {"tokens"}), 0 when it is not set. */
static double setting(const cJSON *settings, const char *section, const char *name) {
  const cJSON *o = section ? cJSON_GetObjectItemCaseSensitive(settings, section) : settings;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
  return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* The world's budget: its limits (0: none), the current chat's spend, and whether calls are stopped. */
static cJSON *budget_json(const serve_world *sw, const cJSON *settings) {
  int64_t tokens = 0;
  double usd = 0;
  int reached = agora_budget_spent(sw->w, &tokens, &usd);
  cJSON *b = cJSON_CreateObject();
  ag_json_add_int(b, "limit_tokens", (int64_t)setting(settings, "budget", "tokens"));
  cJSON_AddNumberToObject(b, "limit_usd", setting(settings, "budget", "usd"));
  ag_json_add_int(b, "tokens", tokens);
  cJSON_AddNumberToObject(b, "usd", usd);
  cJSON_AddBoolToObject(b, "reached", reached);
  return b;
}

/* The current chat's id and title into j (null, null without one). */
static void add_current(serve *s, cJSON *j, const char *cur) {
  char *text = NULL;
  cJSON *row = cur && !agora_db_chat_info(s->db, cur, &text) ? serve_lib_json(text) : NULL;
  const cJSON *title = cJSON_GetObjectItemCaseSensitive(row, "title");
  if (cur) cJSON_AddStringToObject(j, "current_chat", cur);
  else cJSON_AddNullToObject(j, "current_chat");
  if (cur) cJSON_AddStringToObject(j, "title", cJSON_IsString(title) ? title->valuestring : "");
  else cJSON_AddNullToObject(j, "title");
  cJSON_Delete(row);
}

static void get_world(serve *s, serve_world *sw, struct evhttp_request *req) {
  char *text = NULL, chat[AGORA_ID_MAX];
  cJSON *j = cJSON_CreateObject(), *settings = NULL;
  const char *now = agora_chat_current(sw->w), *cur = now ? chat : NULL;
  snprintf(chat, sizeof chat, "%s", now ? now : ""); /* the library's is borrowed until the next call */
  cJSON_AddStringToObject(j, "id", agora_world_id(sw->w));
  cJSON_AddStringToObject(j, "name", agora_world_name(sw->w));
  add_current(s, j, cur);
  cJSON_AddNumberToObject(j, "last_seq", (double)serve_world_last_seq(sw));
  if (!agora_settings(sw->w, &text)) settings = serve_lib_json(text);
  cJSON_AddNumberToObject(j, "turn_limit", setting(settings, NULL, "turn_limit"));
  cJSON_AddNumberToObject(j, "thinking", (double)agora_thinking(sw->w));
  cJSON *agents = !agora_agents(sw->w, &text) ? serve_lib_json(text) : NULL;
  cJSON_AddItemToObject(j, "agents", agents ? agents : cJSON_CreateArray());
  cJSON *asks = cJSON_AddArrayToObject(j, "approvals");
  for (size_t i = 0; i < s->n_asks; i++)
    if (s->asks[i].sw == sw) cJSON_AddItemToArray(asks, serve_ask_json(&s->asks[i], cur));
  cJSON_AddItemToObject(j, "budget", budget_json(sw, settings));
  if (settings) cJSON_AddItemToObject(j, "settings", settings);
  cJSON_AddItemToObject(j, "mcp", mcp_json(!agora_mcp_servers(sw->w, &text) ? serve_lib_json(text) : NULL));
  if (cur && !strcmp(sw->resumed_chat, cur)) { /* this run re-ran replies the chat had in flight */
    cJSON *r = cJSON_AddObjectToObject(j, "resumed");
    cJSON_AddNumberToObject(r, "replies", (double)sw->resumed_replies);
    cJSON_AddStringToObject(r, "agents", sw->resumed_agents);
  }
  cJSON_AddBoolToObject(j, "loaded", 1);
  serve_reply_json(req, 200, j);
}

/* ---- a world not loaded: read from the database, never opened ---- */

/* The stored world id, {"id","name","chats","current_chat","settings"} as agora_db_world gives it, into
 * *out (the caller's); 0, or an error reply was sent (404 for an unknown world: ids only, as the routes
 * name worlds). */
static int stored_world(serve *s, const char *id, cJSON **out, struct evhttp_request *req) {
  char *text = NULL;
  int rc = agora_db_world(s->db, id, &text);
  cJSON *j = rc ? NULL : serve_lib_json(text);
  const cJSON *wid = cJSON_GetObjectItemCaseSensitive(j, "id");
  if (!rc && (!cJSON_IsString(wid) || strcmp(wid->valuestring, id))) rc = AGORA_ERR_NOT_FOUND;
  if (rc == AGORA_ERR_NOT_FOUND || rc == AGORA_ERR_INVALID) {
    cJSON_Delete(j);
    return serve_reply_error(req, 404, "no world '%s' in the database", id), AGORA_ERR_NOT_FOUND;
  }
  if (rc) return serve_reply_lib(req, rc, id), rc;
  *out = j;
  return AGORA_OK;
}

/* A stored agent as GET lists it: id, name, provider, model. */
static cJSON *stored_agent(const cJSON *a) {
  cJSON *j = cJSON_CreateObject();
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(a, "name");
  const cJSON *provider = cJSON_GetObjectItemCaseSensitive(a, "provider");
  const cJSON *model = cJSON_GetObjectItemCaseSensitive(a, "model");
  char id[AGORA_ID_MAX];
  const char *n = cJSON_IsString(name) ? name->valuestring : "";
  if (!agora_name_id(n, id)) cJSON_AddStringToObject(j, "id", id);
  cJSON_AddStringToObject(j, "name", n);
  cJSON_AddStringToObject(j, "provider", cJSON_IsString(provider) ? provider->valuestring : "script");
  if (cJSON_IsString(model)) cJSON_AddStringToObject(j, "model", model->valuestring);
  return j;
}

/* GET /api/worlds/{id} of a world not loaded: what the database holds ("loaded": false; no live fields). */
void serve_world_reply_stored(serve *s, const char *id, int status, struct evhttp_request *req) {
  cJSON *w = NULL;
  char *text = NULL;
  if (stored_world(s, id, &w, req)) return;
  cJSON *j = cJSON_CreateObject(), *settings = cJSON_DetachItemFromObjectCaseSensitive(w, "settings");
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(w, "name");
  const cJSON *cur = cJSON_GetObjectItemCaseSensitive(w, "current_chat");
  cJSON_AddStringToObject(j, "id", id);
  cJSON_AddStringToObject(j, "name", cJSON_IsString(name) ? name->valuestring : id);
  add_current(s, j, cJSON_IsString(cur) ? cur->valuestring : NULL);
  cJSON *agents = cJSON_AddArrayToObject(j, "agents"), *a;
  cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(settings, "agents")) {
    cJSON_AddItemToArray(agents, stored_agent(a));
  }
  cJSON_AddArrayToObject(j, "approvals");
  if (settings) cJSON_AddItemToObject(j, "settings", settings);
  cJSON_AddItemToObject(j, "mcp", mcp_json(!agora_db_mcp_servers(s->db, id, &text) ? serve_lib_json(text) : NULL));
  cJSON_AddBoolToObject(j, "loaded", 0);
  cJSON_Delete(w);
  serve_reply_json(req, status, j);
}

/* PATCH /api/worlds/{id} {"budget": {...}}: new limits (a limit left out is kept), stored with the world;
 * answers with the world as GET does. */
static void patch_world(serve *s, serve_world *sw, const serve_body *b, struct evhttp_request *req) {
  char *text = NULL;
  int rc = b->doc ? serve_world_settings_set(sw, b->doc) : AGORA_OK;
  if (rc) return serve_reply_lib(req, rc, agora_world_id(sw->w));
  if (!b->has_budget_tokens && !b->has_budget_usd) return get_world(s, sw, req);
  if ((rc = agora_settings(sw->w, &text))) return serve_reply_lib(req, rc, agora_world_id(sw->w));
  cJSON *settings = serve_lib_json(text);
  int64_t tokens = b->has_budget_tokens ? b->budget_tokens : (int64_t)setting(settings, "budget", "tokens");
  double usd = b->has_budget_usd ? b->budget_usd : setting(settings, "budget", "usd");
  cJSON_Delete(settings);
  if ((rc = agora_budget_set(sw->w, tokens, usd))) return serve_reply_lib(req, rc, agora_world_id(sw->w));
  get_world(s, sw, req);
}

static void post_approval(serve *s, uint64_t id, const serve_body *b, struct evhttp_request *req) {
  int rc = serve_approval_answer(s, id, b->allow, b->answer);
  if (rc == AGORA_ERR_NOT_FOUND) return serve_reply_error(req, 404, "no pending approval %llu", (unsigned long long)id);
  if (rc) return serve_reply_error(req, 409, "approval %llu was already answered (or its turn ended)", (unsigned long long)id);
  cJSON *j = cJSON_CreateObject();
  cJSON_AddNumberToObject(j, "id", (double)id);
  cJSON_AddBoolToObject(j, "allow", b->allow);
  serve_reply_json(req, 200, j);
}

/* GET …/events: the world's stream (503 past --max-streams). */
static void get_events(serve *s, serve_world *sw, int method, struct evhttp_request *req) {
  if (method == SERVE_HEAD) { /* no stream for a HEAD: the headers only */
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "text/event-stream; charset=utf-8");
    return evhttp_send_reply(req, 200, "OK", NULL);
  }
  size_t streams = 0;
  for (size_t i = 0; i < s->n_worlds; i++) streams += sse_hub_clients(s->worlds[i]->hub);
  if (streams >= s->max_streams) {
    evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", "5");
    return serve_reply_error(req, 503, "too many event streams (the server keeps %zu): try again later", s->max_streams);
  }
  const char *last = evhttp_find_header(evhttp_request_get_input_headers(req), "Last-Event-ID");
  if (sse_hub_attach(sw->hub, req, last)) serve_reply_error(req, 500, "out of memory");
}

/* ---- dispatch ---- */

/* A GET (or HEAD) of a world not loaded: from the database, as it is. Loading would start its schedule
 * and may make a chat, and an <img> on any page can send a GET (issue 28 item 2b). */
static void stored_route(serve *s, struct evhttp_request *req, const serve_match *m) {
  cJSON *w = NULL;
  if (m->route == SR_WORLD) return serve_world_reply_stored(s, m->world, 200, req);
  if (stored_world(s, m->world, &w, req)) return;
  cJSON_Delete(w);
  switch (m->route) {
  case SR_CHATS:
  case SR_CHAT_MESSAGES:
  case SR_CHAT_SNAPSHOT: return serve_chats_handle(s, NULL, req, m, SERVE_GET, NULL);
  case SR_MCP: return serve_mcp_reply(s, NULL, req, m);
  case SR_EVENTS:
    return serve_reply_error(req, 409, "world '%s' is not loaded, and a GET never loads one: POST "
                             "/api/worlds/%s/load first", m->world, m->world);
  default: return serve_reply_error(req, 404, "no such route");
  }
}

/* Routes about one world: a change loads it first (404 when the database has no such world); a read
 * of a world not loaded never does. */
static void world_route(serve *s, struct evhttp_request *req, const serve_match *m, int method, const serve_body *b) {
  serve_world *sw = serve_world_find(s, m->world);
  int rc;
  if (!sw && (method == SERVE_GET || method == SERVE_HEAD)) return stored_route(s, req, m);
  if (!sw && (rc = serve_world_get(s, m->world, &sw))) return serve_reply_lib(req, rc, m->world);
  switch (m->route) {
  case SR_WORLD:
    if (method == SERVE_PATCH) return patch_world(s, sw, b, req);
    return get_world(s, sw, req);
  case SR_WORLD_LOAD: return get_world(s, sw, req);
  case SR_AGENTS:
  case SR_AGENT: return serve_build_handle(s, sw, req, m, method, b);
  case SR_CHAT_MESSAGE:
  case SR_CHAT_RETRY: return serve_edit_handle(s, sw, req, m, method, b);
  case SR_MCP:
  case SR_MCP_RESTART: return serve_mcp_reply(s, sw, req, m);
  case SR_EVENTS: return get_events(s, sw, method, req);
  default: return serve_chats_handle(s, sw, req, m, method, b);
  }
}

void serve_api_handle(serve *s, struct evhttp_request *req, const serve_match *m, int method, const char *body,
                      size_t len) {
  if (m->route == SR_SNAPSHOTS) return serve_snapshot_post(s, body, len, req);
  if (m->route == SR_WORLD_EXPORT || m->route == SR_CHAT_EXPORT || m->route == SR_CHAT_SEARCH || m->route == SR_CHAT_USAGE)
    return serve_read_handle(s, req, m);
  if (m->route == SR_CHAT_GRAPH) return serve_graph_handle(s, req, m);
  if (m->route == SR_AGENT_MEMORY) return serve_memory_reply(s, req, m);
  serve_body b;
  char err[SERVE_ERR_MAX];
  int status = serve_body_parse(m->route, method, body, len, &b, err);
  if (status) return serve_reply_error(req, status < 0 ? 500 : status, "%s", err);
  if (m->route == SR_WORLDS && method == SERVE_POST) serve_build_handle(s, NULL, req, m, method, &b);
  else if (m->route == SR_WORLD && method == SERVE_DELETE) serve_build_handle(s, serve_world_find(s, m->world), req, m, method, &b);
  else if (m->route == SR_WORLDS) get_worlds(s, req);
  else if (m->route == SR_APPROVAL) post_approval(s, m->approval, &b, req);
  else world_route(s, req, m, method, &b);
  serve_body_free(&b);
}
