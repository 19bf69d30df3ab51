/* libagora's view of a world's tools (API version 5): what each agent may call, built-in or from an MCP
 * server, and how the servers fared (what `agora tools` prints). */
#include "lib/agora_int.h"

#include "world/world_mcp.h"

#include <stdio.h>

/* One tool: {"name","source","approve","description","input_schema"}; schema is JSON text. */
static int tool_add(cJSON *tools, const char *name, const char *source, int approve, const char *desc,
                    const char *schema) {
  cJSON *t = cJSON_CreateObject(), *in = cJSON_Parse(schema ? schema : "{}");
  if (!t || !cJSON_AddItemToArray(tools, t)) {
    cJSON_Delete(t), cJSON_Delete(in);
    return AG_ERR_NOMEM;
  }
  cJSON_AddStringToObject(t, "name", name);
  cJSON_AddStringToObject(t, "source", source);
  cJSON_AddBoolToObject(t, "approve", approve);
  cJSON_AddStringToObject(t, "description", desc ? desc : "");
  cJSON_AddItemToObject(t, "input_schema", in ? in : cJSON_CreateObject());
  return AG_OK;
}

/* An agent's row: its built-in tools in the order of the tool table, then its MCP servers' tools. */
static int agent_add(cJSON *agents, agent *a) {
  const agent_settings *s = agent_settings_of(a);
  cJSON *o = cJSON_CreateObject();
  if (!o || !cJSON_AddItemToArray(agents, o)) return cJSON_Delete(o), AG_ERR_NOMEM;
  cJSON_AddStringToObject(o, "name", s->name);
  cJSON *tools = cJSON_AddArrayToObject(o, "tools");
  int rc = tools ? AG_OK : AG_ERR_NOMEM;
  for (int t = 0; !rc && t < TOOL_COUNT; t++) {
    if (!(s->tools & TOOL_BIT(t))) continue;
    const llm_tool *def = tool_definition((tool_id)t);
    rc = tool_add(tools, tool_name((tool_id)t), "built-in", (s->approve & TOOL_BIT(t)) != 0, def->description,
                  def->parameters_json);
  }
  const agent_mcp_set *set = agent_mcp_tools(a);
  for (size_t i = 0; !rc && i < set->n; i++) {
    const agent_mcp_tool *m = &set->tools[i];
    char source[200];
    snprintf(source, sizeof source, "%s.%s", m->server, m->tool);
    rc = tool_add(tools, m->name, source, m->approve, m->description, m->schema);
  }
  return rc;
}

static int server_add(cJSON *servers, const world *w, size_t i) {
  const char *name, *why;
  int ready;
  mcp_client *c;
  world_mcp_server_at(w, i, &name, &ready, &why, &c);
  cJSON *o = cJSON_CreateObject();
  if (!o || !cJSON_AddItemToArray(servers, o)) return cJSON_Delete(o), AG_ERR_NOMEM;
  cJSON_AddStringToObject(o, "name", name);
  cJSON_AddBoolToObject(o, "ready", ready);
  if (!ready) cJSON_AddStringToObject(o, "error", why ? why : "not ready");
  return AG_OK;
}

int agora_world_tools(agora_world *w, char **json) {
  ag_errmsg em = {""};
  if (!json) return agora__fail(ag_fail(&em, AG_ERR_INVALID, "agora_world_tools: json is NULL"), &em);
  *json = NULL;
  cJSON *doc = cJSON_CreateObject();
  cJSON *agents = doc ? cJSON_AddArrayToObject(doc, "agents") : NULL;
  cJSON *servers = doc ? cJSON_AddArrayToObject(doc, "servers") : NULL;
  int rc = servers ? AG_OK : AG_ERR_NOMEM;
  for (size_t i = 0; !rc && i < world_agent_count(w->w); i++) rc = agent_add(agents, world_agent_at(w->w, i));
  for (size_t i = 0; !rc && i < world_mcp_count(w->w); i++) rc = server_add(servers, w->w, i);
  if (rc) {
    cJSON_Delete(doc);
    return agora__fail(ag_fail(&em, rc, "out of memory"), &em);
  }
  rc = agora__hand_out(doc, json, &em);
  return rc ? agora__fail(rc, &em) : AG_OK;
}
