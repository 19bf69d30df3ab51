/* A world_spec written back in world-file form (for storage and snapshots): the variable that holds
 * a key is named, never the key. */
#include "world/world_file.h"

#include "world/llm_spec.h"
#include "world/mcp_spec.h"
#include "world/memory_spec.h"
#include "world/world_time.h"

/* A script reply as the world file writes it: a string, or the tool-call object. */
static cJSON *reply_json(const llm_script_reply *r) {
  if (!r->tool) return cJSON_CreateString(r->text ? r->text : "");
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "tool", r->tool);
  cJSON *args = r->args_json ? cJSON_Parse(r->args_json) : NULL;
  if (args) cJSON_AddItemToObject(o, "args", args);
  if (r->text) cJSON_AddStringToObject(o, "text", r->text);
  return o;
}

cJSON *world_agent_to_json(const agent_settings *s) {
  cJSON *a = cJSON_CreateObject();
  if (!a) return NULL;
  const llm_config *c = &s->llm;
  cJSON_AddStringToObject(a, "name", s->name ? s->name : "");
  cJSON_AddStringToObject(a, "provider", llm_provider_name(c->provider));
  if (c->model) cJSON_AddStringToObject(a, "model", c->model);
  if (c->base_url) cJSON_AddStringToObject(a, "base_url", c->base_url);
  /* The variable's name only: the key itself is never read here and never stored. */
  if (c->api_key_env) cJSON_AddStringToObject(a, "api_key_env", c->api_key_env);
  if (c->has_temperature) cJSON_AddNumberToObject(a, "temperature", c->temperature);
  if (c->has_seed) cJSON_AddNumberToObject(a, "seed", (double)c->seed);
  if (c->max_tokens) cJSON_AddNumberToObject(a, "max_tokens", c->max_tokens);
  cJSON_AddBoolToObject(a, "stream", c->stream);
  cJSON_AddNumberToObject(a, "timeout_ms", (double)c->timeout_ms);
  cJSON_AddNumberToObject(a, "max_retries", c->max_retries);
  if (c->ca_file) cJSON_AddStringToObject(a, "ca_file", c->ca_file);
  if (c->proxy) cJSON_AddStringToObject(a, "proxy", c->proxy);
  if (c->insecure) cJSON_AddBoolToObject(a, "insecure", 1);
  if (s->system_prompt) cJSON_AddStringToObject(a, "system_prompt", s->system_prompt);
  if (c->script.n_replies) {
    cJSON *r = cJSON_AddArrayToObject(a, "replies");
    for (size_t i = 0; r && i < c->script.n_replies; i++) cJSON_AddItemToArray(r, reply_json(&c->script.replies[i]));
  }
  cJSON_AddBoolToObject(a, "auto_reply", s->auto_reply);
  if (s->tools || s->n_mcp) {
    cJSON *t = cJSON_AddArrayToObject(a, "tools");
    for (int i = 0; t && i < TOOL_COUNT; i++) {
      if (!(s->tools & TOOL_BIT(i))) continue;
      if (s->approve & TOOL_BIT(i)) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", tool_name((tool_id)i));
        cJSON_AddBoolToObject(o, "approve", 1);
        cJSON_AddItemToArray(t, o);
      } else {
        cJSON_AddItemToArray(t, cJSON_CreateString(tool_name((tool_id)i)));
      }
    }
    world_mcp_refs_to_json(s, t);
  }
  if (s->monadic) cJSON_AddBoolToObject(a, "monadic", 1);
  if (!s->tool_support) cJSON_AddBoolToObject(a, "tool_support", 0);
  if (s->context_tokens) cJSON_AddNumberToObject(a, "context_tokens", s->context_tokens);
  world_memory_to_json(&s->memory, a);
  return a;
}

cJSON *world_spec_to_json(const world_spec *spec) {
  cJSON *w = cJSON_CreateObject();
  if (!w) return NULL;
  cJSON_AddStringToObject(w, "name", spec->name);
  if (spec->description) cJSON_AddStringToObject(w, "description", spec->description);
  cJSON_AddNumberToObject(w, "turn_limit", spec->turn_limit);
  cJSON_AddNumberToObject(w, "memory_window", spec->memory_window);
  if (spec->main_agent) cJSON_AddStringToObject(w, "main_agent", spec->main_agent);
  else cJSON_AddNullToObject(w, "main_agent");
  cJSON *agents = cJSON_AddArrayToObject(w, "agents");
  for (size_t i = 0; agents && i < spec->n_agents; i++)
    cJSON_AddItemToArray(agents, world_agent_to_json(&spec->agents[i]));
  world_time_to_json(spec, w);
  world_mcp_to_json(spec, w);
  world_llm_to_json(spec, &spec->budget, w);
  return w;
}
