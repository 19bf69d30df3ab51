/* The event kinds' wire names and the payloads' string fields (see events.h). */
#include "world/events.h"

#include "common/error.h"

#include <string.h>

static const char *const kind_names[] = {
#define EV_NAME_(k, name) name,
    EV_KINDS(EV_NAME_)
#undef EV_NAME_
};

const char *ev_kind_name(ev_kind k) { return (unsigned)k < EV_KIND_COUNT ? kind_names[k] : "event"; }

int ev_kind_parse(const char *name, ev_kind *out) {
  for (unsigned k = 0; k < EV_KIND_COUNT; k++)
    if (strcmp(kind_names[k], name) == 0) {
      *out = (ev_kind)k;
      return AG_OK;
    }
  return AG_ERR_NOT_FOUND;
}

const char *world_event_agent(const world_event *e) {
  switch (e->kind) {
  case EV_LLM_START: return e->u.llm_start.agent;
  case EV_LLM_CHUNK: return e->u.llm_chunk.agent;
  case EV_LLM_DONE: return e->u.llm_done.agent;
  case EV_LLM_ERROR: return e->u.llm_error.agent;
  case EV_TURN_LIMIT: return e->u.turn_limit.agent;
  case EV_TOOL_CALL:
  case EV_TOOL_RESULT: return e->u.tool.agent;
  case EV_AGENT_ADDED:
  case EV_AGENT_REMOVED: return e->u.agent.agent;
  case EV_APPROVAL: return e->u.approval.agent;
  case EV_MEMORY_CLEARED: return e->u.cleared.agent;
  case EV_MEMORY_RETRIEVED: return e->u.retrieved.agent;
  case EV_REFLECTION: return e->u.reflection.agent;
  case EV_MEMORY_RATED: return e->u.rated.agent;
  case EV_TURN_QUEUED: return e->u.turn_queued.agent;
  case EV_TURN_END: return e->u.turn_end.agent;
  case EV_CONTEXT_SHRUNK: return e->u.shrunk.agent;
  case EV_SUMMARY: return e->u.summary.agent;
  default: return NULL;
  }
}

void world_event_strings(world_event *e, void (*fn)(const char **field, void *arg), void *arg) {
  const char **f[4] = {NULL};
  switch (e->kind) {
  case EV_LLM_START: f[0] = &e->u.llm_start.agent, f[1] = &e->u.llm_start.provider; break;
  case EV_LLM_CHUNK: f[0] = &e->u.llm_chunk.agent; break;
  case EV_LLM_DONE: f[0] = &e->u.llm_done.agent; break;
  case EV_LLM_ERROR: f[0] = &e->u.llm_error.agent, f[1] = &e->u.llm_error.error, f[2] = &e->u.llm_error.error_type; break;
  case EV_TURN_LIMIT: f[0] = &e->u.turn_limit.agent; break;
  case EV_TOOL_CALL:
  case EV_TOOL_RESULT:
    f[0] = &e->u.tool.agent, f[1] = &e->u.tool.tool, f[2] = &e->u.tool.call_id, f[3] = &e->u.tool.json;
    break;
  case EV_UNKNOWN_MENTION: f[0] = &e->u.unknown.sender; break;
  case EV_AGENT_ADDED:
  case EV_AGENT_REMOVED: f[0] = &e->u.agent.agent, f[1] = &e->u.agent.name, f[2] = &e->u.agent.provider; break;
  case EV_NEW_CHAT_CREATED:
  case EV_CHAT_REUSED:
  case EV_CHAT_DELETED: f[0] = &e->u.chat.id, f[1] = &e->u.chat.current; break;
  case EV_TITLE_UPDATED: f[0] = &e->u.title.title; break;
  case EV_STORAGE_ERROR: f[0] = &e->u.storage.error; break;
  case EV_CHAT_RESUMED:
  case EV_CHAT_LOADED: f[0] = &e->u.chat_open.id, f[1] = &e->u.chat_open.title; break;
  case EV_APPROVAL: f[0] = &e->u.approval.agent, f[1] = &e->u.approval.tool, f[2] = &e->u.approval.ended; break;
  case EV_CANCELLED: f[0] = &e->u.cancelled.agents; break;
  case EV_MEMORY_CLEARED: f[0] = &e->u.cleared.agent; break;
  case EV_MEMORY_RETRIEVED: f[0] = &e->u.retrieved.agent; break;
  case EV_REFLECTION: f[0] = &e->u.reflection.agent, f[1] = &e->u.reflection.insights; break;
  case EV_MEMORY_RATED: f[0] = &e->u.rated.agent, f[1] = &e->u.rated.ratings; break;
  case EV_TURN_QUEUED: f[0] = &e->u.turn_queued.agent; break;
  case EV_TURN_END: f[0] = &e->u.turn_end.agent; break;
  case EV_TURNS_RESUMED: f[0] = &e->u.resumed.agents; break;
  case EV_MCP_ERROR: f[0] = &e->u.mcp.server, f[1] = &e->u.mcp.error; break;
  case EV_RATE_LIMITED: f[0] = &e->u.rate.endpoint; break;
  case EV_CONTEXT_SHRUNK: f[0] = &e->u.shrunk.agent, f[1] = &e->u.shrunk.error; break;
  case EV_SUMMARY: f[0] = &e->u.summary.agent, f[1] = &e->u.summary.summary; break;
  case EV_NOT_ADDRESSED: f[0] = &e->u.not_addressed.who.sender, f[1] = &e->u.not_addressed.message; break;
  case EV_SEQS_MOVED:
  case EV_SCHEDULE_SKIPPED:
  case EV_CLOCK_ADVANCED:
  case EV_STATE_SAVED:
  case EV_BUDGET_EXHAUSTED:
  case EV_KIND_COUNT: break;
  }
  for (size_t i = 0; i < 4 && f[i]; i++) fn(f[i], arg);
}

const char *const **world_event_names(world_event *e, size_t *n) {
  ev_unknown_mention *u = e->kind == EV_UNKNOWN_MENTION ? &e->u.unknown
                          : e->kind == EV_NOT_ADDRESSED ? &e->u.not_addressed.who
                                                        : NULL;
  *n = u ? u->n_names : 0;
  return u ? &u->names : NULL;
}
