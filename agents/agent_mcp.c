/* An agent's MCP tool calls: offered to the model beside the built-ins, asked about through the host's
 * approval (unless read-only or "approve": false), sent through the server's mcp_client without
 * waiting (the round goes on when the result comes back), cancelled with the turn. */
#include "agents/agent_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/tool_exec.h"
#include "agents/tools.h"

static void on_mcp_result(void *ud, const mcp_result *r) {
  agent *a = ud;
  a->mcp_call = NULL;
  free(a->mcp_text);
  a->mcp_text = r->is_error ? tool_exec_error("%s", r->text) : strdup(r->text);
  a->mcp_failed = r->is_error || !a->mcp_text;
  if (!a->mcp_text) a->mcp_text = tool_exec_error("%s", "out of memory");
  agent__round_resume(a);
}

int agent__mcp_run(agent *a, const llm_tool_call *c, char **out, int *failed, int *waiting) {
  *out = NULL;
  *waiting = 0;
  if (a->mcp_text) { /* the answer to this call, which went out before (the set may have changed since) */
    *out = a->mcp_text;
    a->mcp_text = NULL;
    *failed = a->mcp_failed;
    return 1;
  }
  const agent_mcp_tool *t = agent_mcp_set_find(&a->mcp, c->name);
  if (!t) return 0;
  *failed = 1;
  if (t->approve && a->approval != APPROVAL_ALLOWED) {
    char shown[300];
    if (a->approval == APPROVAL_NONE && a->host->approve &&
        a->host->approve(a->host->ctx, a, agent__tool_shown(a, c->name, shown, sizeof shown), c->args_json,
                         NULL) == AG_OK)
      *waiting = 1;
    else
      *out = tool_exec_error("denied: %s needs the user's approval and did not get it", c->name);
    return 1;
  }
  const char *args = c->args_json && c->args_json[0] ? c->args_json : "{}";
  int rc = mcp_client_call(t->client, t->tool, args, 0, on_mcp_result, a, &a->mcp_call);
  if (rc) *out = tool_exec_error("could not call the MCP tool: %s", ag_strerror(rc));
  else *waiting = 2;
  return 1;
}

const char *agent__tool_shown(const agent *a, const char *name, char *buf, size_t cap) {
  tool_id id;
  const agent_mcp_tool *t = agent_mcp_set_find(&a->mcp, name);
  if (!t || tool_parse(name, &id) != AG_OK) return name;
  snprintf(buf, cap, "%s.%s", t->server, t->tool);
  return buf;
}

void agent__mcp_drop(agent *a) {
  if (a->mcp_call) mcp_call_cancel(a->mcp_call);
  a->mcp_call = NULL;
  free(a->mcp_text);
  a->mcp_text = NULL;
}

size_t agent__mcp_offer(const agent *a, llm_tool *tools) {
  for (size_t i = 0; i < a->mcp.n; i++)
    tools[i] = (llm_tool){a->mcp.tools[i].name, a->mcp.tools[i].description, a->mcp.tools[i].schema};
  return a->mcp.n;
}

int agent_set_mcp_tools(agent *a, const agent_mcp_set *set) {
  agent_mcp_set copy;
  int rc = agent_mcp_set_copy(set, &copy);
  if (rc) return rc;
  agent_mcp_set_free(&a->mcp); /* a call in flight goes on: its client stays */
  a->mcp = copy;
  return AG_OK;
}

const agent_mcp_set *agent_mcp_tools(const agent *a) { return &a->mcp; }
