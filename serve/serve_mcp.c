/* A world's MCP servers over HTTP (issue 24): GET /api/worlds/{id}/mcp says which servers it has, whether
 * they were started (only for a world named as a file on the command line), each one's state, tools and
 * last error; POST …/mcp/{server}/restart starts one again. A world from the database never starts a
 * program (docs/architecture.md "The runtime"), so for it the route says why, and a restart is a 409. */
#include "serve/serve_int.h"

#include "world/world_mcp.h"

#include <stdlib.h>
#include <string.h>

/* One server as the world file has it, with no live state (not started). */
static cJSON *spec_json(const world_mcp_server *m) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "name", m->name);
  cJSON_AddStringToObject(j, "transport", m->url ? "http" : "stdio");
  cJSON_AddStringToObject(j, "state", "not started");
  cJSON_AddArrayToObject(j, "tools");
  cJSON_AddNullToObject(j, "error");
  return j;
}

/* The live state of server i of sw's world over its spec row j. */
static void live_json(const serve_world *sw, size_t i, cJSON *j) {
  const char *name, *why;
  int ready;
  mcp_client *c;
  if (world_mcp_server_at(sw->w, i, &name, &ready, &why, &c)) return;
  size_t n = 0;
  const mcp_tool *tools = c ? mcp_client_tools(c, &n) : NULL;
  const char *err = c && mcp_client_why(c)[0] ? mcp_client_why(c) : why && why[0] ? why : NULL;
  cJSON_ReplaceItemInObjectCaseSensitive(j, "state", cJSON_CreateString(c && mcp_client_ready(c) ? "ready" : err ? "failed" : "starting"));
  cJSON *arr = cJSON_GetObjectItemCaseSensitive(j, "tools");
  for (size_t k = 0; k < n; k++) cJSON_AddItemToArray(arr, cJSON_CreateString(tools[k].name));
  if (err) cJSON_ReplaceItemInObjectCaseSensitive(j, "error", cJSON_CreateString(err));
}

/* GET: {"started", "reason", "servers": [{"name", "transport", "state", "tools", "error"}]}. */
static void get_mcp(serve *s, serve_world *sw, struct evhttp_request *req, const char *id) {
  world_spec stored;
  ag_errmsg em = {""};
  const world_spec *spec = sw ? world_time_spec(sw->w) : NULL;
  int rc = sw ? AG_OK : chat_world_spec(s->st, id, &stored, &em);
  if (rc) return serve_reply_fail(req, rc, &em);
  if (!sw) spec = &stored;
  const char *why = rt_mcp_why_stored;
  int started = sw ? rt_mcp_started(sw->rt, &why) : 0;
  if (!spec->n_mcp) why = "the world has no mcp_servers";
  cJSON *j = cJSON_CreateObject(), *arr;
  cJSON_AddBoolToObject(j, "started", started);
  if (started) cJSON_AddNullToObject(j, "reason");
  else cJSON_AddStringToObject(j, "reason", why);
  arr = cJSON_AddArrayToObject(j, "servers");
  for (size_t i = 0; i < spec->n_mcp; i++) {
    cJSON *row = spec_json(&spec->mcp[i]);
    if (started) live_json(sw, i, row);
    cJSON_AddItemToArray(arr, row);
  }
  if (!sw) world_spec_free(&stored);
  serve_reply_json(req, 200, j);
}

/* POST …/restart: 202 with the server's row (its state "starting"); the outcome comes on the stream. */
static void restart(serve *s, serve_world *sw, struct evhttp_request *req, const serve_match *m) {
  const char *why = NULL;
  const world_spec *spec = world_time_spec(sw->w);
  size_t i = 0;
  while (i < spec->n_mcp && strcmp(spec->mcp[i].name, m->name)) i++;
  if (i == spec->n_mcp) return serve_reply_error(req, 404, "no MCP server '%s' in world '%s'", m->name, m->world);
  if (!rt_mcp_started(sw->rt, &why))
    return serve_reply_error(req, 409, "world '%s' did not start its MCP servers: %s", m->world, why);
  if (!world_quiet_now(sw->w))
    return serve_reply_error(req, 409, "world '%s' has replies in flight: restart '%s' when they are in", m->world, m->name);
  if (world_mcp_restart(sw->w, m->name))
    return serve_reply_error(req, 409, "MCP server '%s' could not be set up at the start: restart agora serve", m->name);
  (void)s;
  cJSON *row = spec_json(&spec->mcp[i]);
  live_json(sw, i, row);
  serve_reply_json(req, 202, row);
}

void serve_mcp_reply(serve *s, serve_world *sw, struct evhttp_request *req, const serve_match *m) {
  if (m->route == SR_MCP) return get_mcp(s, sw, req, m->world);
  restart(s, sw, req, m);
}
