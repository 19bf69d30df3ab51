/* An agent as it is now, in JSON (see agent_json.h); moved from serve/serve_api.c for the library. */
#include "runtime/agent_json.h"

cJSON *rt_agent_json(const agent *a) {
  const agent_settings *st = agent_settings_of(a);
  cJSON *j = cJSON_CreateObject();
  if (!j) return NULL;
  cJSON_AddStringToObject(j, "id", agent_id(a));
  cJSON_AddStringToObject(j, "name", agent_name(a));
  cJSON_AddStringToObject(j, "provider", llm_provider_name(st->llm.provider));
  if (st->llm.model) cJSON_AddStringToObject(j, "model", st->llm.model);
  /* A stored world's agent at a base_url not allowed calls without its key (docs/serve.md). */
  cJSON_AddBoolToObject(j, "key_withheld", st->llm.key_withheld);
  cJSON_AddNumberToObject(j, "turns", agent_turn_state(a).count);
  cJSON_AddBoolToObject(j, "thinking", agent_is_thinking(a));
  cJSON_AddStringToObject(j, "phase", agent_phase_name(agent_phase_of(a)));
  cJSON_AddStringToObject(j, "memory", mem_mode_name(st->memory.mode)); /* stream: the page lists memories */
  /* the MCP tools it may call, by the names the model sees (the agents panel lists them) */
  cJSON *tools = cJSON_AddArrayToObject(j, "mcp_tools");
  const agent_mcp_set *set = agent_mcp_tools(a);
  for (size_t i = 0; tools && i < set->n; i++) cJSON_AddItemToArray(tools, cJSON_CreateString(set->tools[i].name));
  return j;
}
