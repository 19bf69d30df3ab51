/* A world's MCP servers' state and a restart of one (see mcp_status.h): what serve's /mcp routes answer,
 * shared with libagora. */
#include "runtime/mcp_status.h"

#include "world/world_mcp.h"

#include <string.h>

/* One server as the world file has it, with no live state (not started). */
static cJSON *spec_json(const world_mcp_server *m) {
  cJSON *j = cJSON_CreateObject();
  if (!j) return NULL;
  cJSON_AddStringToObject(j, "name", m->name);
  cJSON_AddStringToObject(j, "transport", m->url ? "http" : "stdio");
  cJSON_AddStringToObject(j, "state", "not started");
  cJSON_AddArrayToObject(j, "tools");
  cJSON_AddNullToObject(j, "error");
  return j;
}

/* The live state of server i of w over its spec row j. */
static void live_json(const world *w, size_t i, cJSON *j) {
  const char *name, *why;
  int ready;
  mcp_client *c;
  if (!j || world_mcp_server_at(w, i, &name, &ready, &why, &c)) return;
  size_t n = 0;
  const mcp_tool *tools = c ? mcp_client_tools(c, &n) : NULL;
  const char *err = c && mcp_client_why(c)[0] ? mcp_client_why(c) : why && why[0] ? why : NULL;
  const char *state = c && mcp_client_ready(c) ? "ready" : err ? "failed" : "starting";
  cJSON_ReplaceItemInObjectCaseSensitive(j, "state", cJSON_CreateString(state));
  cJSON *arr = cJSON_GetObjectItemCaseSensitive(j, "tools");
  for (size_t k = 0; k < n; k++) cJSON_AddItemToArray(arr, cJSON_CreateString(tools[k].name));
  if (err) cJSON_ReplaceItemInObjectCaseSensitive(j, "error", cJSON_CreateString(err));
}

cJSON *rt_mcp_status_json(const runtime *rt, const world_spec *spec) {
  const char *why = rt_mcp_why_stored;
  int started = rt ? rt_mcp_started(rt, &why) : 0;
  if (!spec->n_mcp) why = "the world has no mcp_servers";
  cJSON *j = cJSON_CreateObject(), *arr = NULL;
  if (!j) return NULL;
  cJSON_AddBoolToObject(j, "started", started);
  if (started) cJSON_AddNullToObject(j, "reason");
  else cJSON_AddStringToObject(j, "reason", why);
  arr = cJSON_AddArrayToObject(j, "servers");
  for (size_t i = 0; i < spec->n_mcp; i++) {
    cJSON *row = spec_json(&spec->mcp[i]);
    if (started) live_json(rt_world(rt), i, row);
    if (!row || !arr || !cJSON_AddItemToArray(arr, row)) {
      cJSON_Delete(row);
      cJSON_Delete(j);
      return NULL;
    }
  }
  return j;
}

int rt_mcp_restart(runtime *rt, const char *label, const char *name, cJSON **row, ag_errmsg *em) {
  const char *why = NULL;
  world *w = rt_world(rt);
  const world_spec *spec = world_time_spec(w);
  size_t i = 0;
  while (i < spec->n_mcp && strcmp(spec->mcp[i].name, name)) i++;
  if (i == spec->n_mcp) return ag_fail(em, AG_ERR_NOT_FOUND, "no MCP server '%s' in world '%s'", name, label);
  if (!rt_mcp_started(rt, &why))
    return ag_fail(em, AG_ERR_STATE, "world '%s' did not start its MCP servers: %s", label, why);
  if (!world_quiet_now(w))
    return ag_fail(em, AG_ERR_STATE, "world '%s' has replies in flight: restart '%s' when they are in", label, name);
  if (world_mcp_restart(w, name))
    return ag_fail(em, AG_ERR_STATE, "MCP server '%s' could not be set up at the start: restart agora serve", name);
  if (!row) return AG_OK;
  if (!(*row = spec_json(&spec->mcp[i]))) return ag_fail(em, AG_ERR_NOMEM, "out of memory");
  live_json(w, i, *row);
  return AG_OK;
}
