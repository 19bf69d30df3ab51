/* An agent's settings as read from a world file (agent.h): initialising, copying and freeing them. */
#include "agents/agent.h"
#include "agents/mcp_tools.h"

#include <stdlib.h>
#include <string.h>

void agent_settings_init(agent_settings *s) {
  memset(s, 0, sizeof *s);
  s->auto_reply = 1;
  s->tool_support = 1;
  llm_config_init(&s->llm);
  mem_config_init(&s->memory);
}

int agent_settings_copy(agent_settings *dst, const agent_settings *src) {
  agent_settings_init(dst);
  dst->auto_reply = src->auto_reply;
  dst->tools = src->tools;
  dst->approve = src->approve;
  dst->monadic = src->monadic;
  dst->tool_support = src->tool_support;
  dst->context_tokens = src->context_tokens;
  int rc = llm_config_copy(&dst->llm, &src->llm);
  if (!rc && (rc = mem_config_copy(&dst->memory, &src->memory))) llm_config_free(&dst->llm);
  if (!rc && (rc = agent_mcp_refs_copy(src->mcp, src->n_mcp, &dst->mcp))) {
    llm_config_free(&dst->llm);
    mem_config_free(&dst->memory);
  }
  if (rc) return rc;
  dst->n_mcp = src->n_mcp;
  dst->name = src->name ? strdup(src->name) : NULL;
  dst->system_prompt = src->system_prompt ? strdup(src->system_prompt) : NULL;
  if ((src->name && !dst->name) || (src->system_prompt && !dst->system_prompt)) {
    agent_settings_free(dst);
    return AG_ERR_NOMEM;
  }
  return AG_OK;
}

void agent_settings_free(agent_settings *s) {
  free(s->name);
  free(s->system_prompt);
  llm_config_free(&s->llm);
  mem_config_free(&s->memory);
  agent_mcp_refs_free(s->mcp, s->n_mcp);
  s->mcp = NULL;
  s->n_mcp = 0;
  s->name = s->system_prompt = NULL;
}
