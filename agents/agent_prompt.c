/* An agent's request for one call: the prompt it sends and its size (issue 26). The system prompt
 * (with the summary in mode summary, the retrieved memories in mode stream), the memory window, the
 * turn's tool rounds and the tools offered are kept under context_tokens by the estimate of
 * context_budget.h, dropping the oldest window entries first; never the system prompt nor the message
 * being answered. A provider that still finds the prompt too long gets it once more with half the
 * window (agent__shrink). */
#include "agents/agent_int.h"

#include "agents/context_budget.h"
#include "agents/prompt.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUMMARY_HEADING "\n\nSummary of the conversation before the messages below:\n"

/* The tokens context_tokens leaves mode stream's retrieved memories: what is left beside the system
 * prompt sys, the tools, the turn's tool rounds and the message being answered (the window's newest
 * entry, which always goes), so that retrieval never pushes the request past the budget on its own.
 * SIZE_MAX when there is no budget. */
static size_t stream_room(const agent *a, const char *sys, const agent__request *r) {
  if (a->s.context_tokens <= 0) return SIZE_MAX;
  llm_message m = {.role = "system", .content = sys};
  size_t fixed = context_budget_request(&m, 1, r->tools, r->n_tools) +
                 context_budget_request(a->tlog.msgs, a->tlog.n, NULL, 0) +
                 (a->answering ? context_budget_entry(a->answering) : 0);
  return (size_t)a->s.context_tokens > fixed ? (size_t)a->s.context_tokens - fixed : 0;
}

/* The system prompt as sent: the agent's (its variables rendered), what its tools need, the retrieved
 * memories (mode stream) or the summary (mode summary). */
static char *request_system(agent *a, const agent__request *r) {
  prompt_tools pt = {a->s.monadic, a->s.tool_support,
                     !a->s.tool_support && (a->s.tools & TOOL_BIT(TOOL_SAVE_CONTEXT)), &a->ctx};
  char *rendered = a->s.system_prompt && a->host->render_prompt
                       ? a->host->render_prompt(a->host->ctx, a, a->s.system_prompt) : NULL;
  char *sys = prompt_system(rendered ? rendered : a->s.system_prompt, &pt);
  free(rendered);
  if (a->s.memory.mode == MEM_MODE_STREAM) return agent__stream_system(a, sys, stream_room(a, sys, r));
  if (a->s.memory.mode != MEM_MODE_SUMMARY || !a->summary || !a->summary[0]) return sys;
  size_t n = (sys ? strlen(sys) : 0) + sizeof SUMMARY_HEADING + strlen(a->summary);
  char *out = malloc(n);
  if (out) snprintf(out, n, "%s%s%s", sys ? sys : "", sys ? SUMMARY_HEADING : &SUMMARY_HEADING[2], a->summary);
  free(sys);
  return out;
}

/* The tools offered: the built-in ones the agent may call, then its MCP tools. */
static int request_tools(agent *a, agent__request *r) {
  r->tools = malloc((TOOL_COUNT + a->mcp.n) * sizeof *r->tools);
  if (!r->tools) return AG_ERR_NOMEM;
  for (int t = 0; a->s.tool_support && t < TOOL_COUNT; t++)
    if (a->s.tools & TOOL_BIT(t)) r->tools[r->n_tools++] = *tool_definition((tool_id)t);
  if (a->s.tool_support) r->n_tools += agent__mcp_offer(a, r->tools + r->n_tools);
  return AG_OK;
}

/* The memory window to send: the world's, under the turn's cap, and under context_tokens beside
 * everything else the request holds: the system prompt with the retrieved memories (mode stream) or
 * the summary (mode summary), the tools, the turn's tool rounds. */
static int request_window(agent *a, const agent__request *r) {
  int window = a->memory_window;
  if (a->window_cap > 0 && (window <= 0 || window > a->window_cap)) window = a->window_cap;
  if (a->s.context_tokens <= 0) return window;
  llm_message sys = {.role = "system", .content = r->sys};
  size_t fixed = context_budget_request(&sys, r->sys ? 1 : 0, r->tools, r->n_tools) +
                 context_budget_request(a->tlog.msgs, a->tlog.n, NULL, 0);
  return context_budget_window((size_t)a->s.context_tokens, fixed, a->mem, a->n_mem, window);
}

int agent__request_build(agent *a, agent__request *r) {
  *r = (agent__request){0};
  int rc = AG_OK;
  /* The tools first: the room left for retrieved memories counts them. */
  if ((rc = request_tools(a, r))) return rc;
  if (!(r->sys = request_system(a, r)) && (a->s.system_prompt || a->summary)) return AG_ERR_NOMEM;
  a->sent_window = request_window(a, r);
  rc = prompt_build(r->sys, a->id, a->mem, a->n_mem, a->sent_window, &r->msgs, &r->n_msgs, &r->arena);
  if (rc || !a->tlog.n) return rc;
  llm_message *p = realloc(r->msgs, (r->n_msgs + a->tlog.n) * sizeof *p);
  if (!p) return AG_ERR_NOMEM;
  r->msgs = p;
  memcpy(r->msgs + r->n_msgs, a->tlog.msgs, a->tlog.n * sizeof *p);
  r->n_msgs += a->tlog.n;
  return AG_OK;
}

void agent__request_free(agent__request *r) {
  free(r->msgs);
  free(r->tools);
  free(r->arena);
  free(r->sys);
  *r = (agent__request){0};
}

int agent__shrink(agent *a, const llm_error_info *info) {
  if (!info || info->kind != LLM_ERROR_CONTEXT_LENGTH || a->shrunk) return 0;
  a->shrunk = 1;
  int sent = a->sent_window > 0 ? a->sent_window : (int)a->n_mem;
  a->window_cap = sent > 1 ? sent / 2 : 1;
  if (a->host->report) {
    agent_report ev = {.kind = AGENT_REPORT_CONTEXT_SHRUNK, .text = info->message, .len = strlen(info->message),
                       .info = info, .seq = a->answering ? a->answering->seq : 0, .window = a->window_cap};
    a->host->report(a->host->ctx, a, &ev);
  }
  return 1;
}
