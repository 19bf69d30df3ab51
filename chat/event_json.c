/* World events as JSON fields (see event_json.h). The order of the fields is the wire's. */
#include "chat/event_json.h"

#include "common/clock.h"
#include "common/jsonnum.h"

static void add_tool(cJSON *f, const ev_tool *t, int call) {
  cJSON_AddStringToObject(f, "tool", t->tool ? t->tool : "");
  cJSON_AddStringToObject(f, "call_id", t->call_id ? t->call_id : "");
  /* Arguments and results are JSON; invalid JSON from a model is kept as a string. */
  cJSON *v = cJSON_Parse(t->json ? t->json : "null");
  if (!v) v = cJSON_CreateString(t->json ? t->json : "");
  cJSON_AddItemToObject(f, call ? "args" : "result", v);
  if (call) return;
  cJSON_AddBoolToObject(f, "error", t->error);
  ag_json_add_int(f, "at_ms", (int64_t)t->at_ms);
}

static void add_llm_error(cJSON *f, const ev_llm_error *x) {
  cJSON_AddStringToObject(f, "error", x->error ? x->error : "error");
  if (!x->has_info) return;
  ag_json_add_int(f, "http_status", (int64_t)x->http_status);
  ag_json_add_int(f, "attempts", x->attempts);
  ag_json_add_int(f, "retries", x->attempts > 0 ? x->attempts - 1 : 0);
  if (x->error_type && x->error_type[0]) cJSON_AddStringToObject(f, "error_type", x->error_type);
}

static void add_chat(cJSON *f, const world_event *e) {
  cJSON_AddStringToObject(f, "id", e->u.chat.id);
  if (e->kind != EV_CHAT_DELETED) return;
  if (e->u.chat.current) cJSON_AddStringToObject(f, "current", e->u.chat.current);
  else cJSON_AddNullToObject(f, "current");
}

static void add_unknown(cJSON *f, const ev_unknown_mention *u) {
  cJSON_AddStringToObject(f, "sender", u->sender);
  cJSON *names = cJSON_AddArrayToObject(f, "names");
  for (size_t i = 0; names && i < u->n_names; i++) cJSON_AddItemToArray(names, cJSON_CreateString(u->names[i]));
  ag_json_add_int(f, "seq", (int64_t)u->seq);
}

static void add_time(cJSON *f, const char *key, int64_t ms) {
  char t[AG_TIME_LEN];
  ag_time_format(ms, t, sizeof t);
  cJSON_AddStringToObject(f, key, t);
}

/* The prompt's size and summary (issue 26): a shrunk window, a new summary. */
static void add_prompt_size(cJSON *f, const world_event *e) {
  if (e->kind == EV_CONTEXT_SHRUNK) {
    ag_json_add_int(f, "window", e->u.shrunk.window);
    cJSON_AddStringToObject(f, "error", e->u.shrunk.error ? e->u.shrunk.error : "");
    return;
  }
  ag_json_add_int(f, "upto", (int64_t)e->u.summary.upto);
  cJSON_AddStringToObject(f, "summary", e->u.summary.summary ? e->u.summary.summary : "");
}

/* The fields of the kinds with more than a few: each a helper, so that the switch below reads as a table. */
static void add_llm_done(cJSON *f, const ev_llm_done *d) {
  ag_json_add_int(f, "chars", (int64_t)d->chars);
  ag_json_add_int(f, "input_tokens", (int64_t)d->input_tokens);
  ag_json_add_int(f, "output_tokens", (int64_t)d->output_tokens);
  if (d->estimated) cJSON_AddBoolToObject(f, "estimated", 1);
  if (d->cached) cJSON_AddBoolToObject(f, "cached", 1);
  if (d->usd > 0) cJSON_AddNumberToObject(f, "usd", d->usd);
}

static void add_approval(cJSON *f, const ev_approval *a) {
  cJSON_AddStringToObject(f, "tool", a->tool);
  cJSON_AddBoolToObject(f, "approved", a->approved);
  if (a->ended) cJSON_AddStringToObject(f, "ended", a->ended);
}

static void add_turn(cJSON *f, const world_event *e) {
  if (e->kind == EV_TURN_QUEUED) {
    ag_json_add_int(f, "seq", (int64_t)e->u.turn_queued.seq);
    if (e->u.turn_queued.rerun) cJSON_AddBoolToObject(f, "rerun", 1);
    return;
  }
  ag_json_add_int(f, "seq", (int64_t)e->u.turn_end.seq);
  if (e->u.turn_end.cancelled) cJSON_AddBoolToObject(f, "cancelled", 1);
  if (e->u.turn_end.queued) cJSON_AddBoolToObject(f, "queued", 1);
}

static void add_budget(cJSON *f, const ev_budget *b) {
  ag_json_add_int(f, "tokens", b->tokens);
  cJSON_AddNumberToObject(f, "usd", b->usd);
  ag_json_add_int(f, "limit_tokens", b->limit_tokens);
  cJSON_AddNumberToObject(f, "limit_usd", b->limit_usd);
}

/* A memory stream's events (docs/memory.md): the count retrieved, a reflection's insights, the ratings. */
static void add_memory(cJSON *f, const world_event *e) {
  if (e->kind == EV_MEMORY_RETRIEVED) {
    ag_json_add_int(f, "count", (int64_t)e->u.retrieved.count);
  } else if (e->kind == EV_REFLECTION) {
    cJSON *v = cJSON_Parse(e->u.reflection.insights ? e->u.reflection.insights : "[]");
    cJSON_AddItemToObject(f, "insights", v ? v : cJSON_CreateArray());
    ag_json_add_int(f, "at_ms", e->u.reflection.at_ms);
  } else {
    cJSON *v = cJSON_Parse(e->u.rated.ratings ? e->u.rated.ratings : "[]");
    cJSON_AddItemToObject(f, "ratings", v ? v : cJSON_CreateArray());
  }
}

cJSON *chat_event_fields(const world_event *e) {
  cJSON *f = cJSON_CreateObject();
  if (!f) return NULL;
  const char *agent = world_event_agent(e);
  if (agent) cJSON_AddStringToObject(f, "agent", agent);
  switch (e->kind) {
  case EV_LLM_START: cJSON_AddStringToObject(f, "provider", e->u.llm_start.provider); break;
  case EV_LLM_CHUNK: cJSON_AddStringToObject(f, "text", e->u.llm_chunk.text); break;
  case EV_LLM_DONE: add_llm_done(f, &e->u.llm_done); break;
  case EV_LLM_ERROR: add_llm_error(f, &e->u.llm_error); break;
  case EV_TURN_LIMIT: ag_json_add_int(f, "limit", e->u.turn_limit.limit); break;
  case EV_TOOL_CALL:
  case EV_TOOL_RESULT: add_tool(f, &e->u.tool, e->kind == EV_TOOL_CALL); break;
  case EV_UNKNOWN_MENTION: add_unknown(f, &e->u.unknown); break;
  case EV_NOT_ADDRESSED:
    add_unknown(f, &e->u.not_addressed.who);
    cJSON_AddStringToObject(f, "message", e->u.not_addressed.message);
    break;
  case EV_AGENT_ADDED:
  case EV_AGENT_REMOVED:
    cJSON_AddStringToObject(f, "name", e->u.agent.name);
    if (e->kind == EV_AGENT_ADDED) cJSON_AddStringToObject(f, "provider", e->u.agent.provider);
    break;
  case EV_NEW_CHAT_CREATED:
  case EV_CHAT_REUSED:
  case EV_CHAT_DELETED: add_chat(f, e); break;
  case EV_TITLE_UPDATED: cJSON_AddStringToObject(f, "title", e->u.title.title); break;
  case EV_STATE_SAVED:
    ag_json_add_int(f, "seq", (int64_t)e->u.saved.seq);
    ag_json_add_int(f, "messages", (int64_t)e->u.saved.messages);
    break;
  case EV_STORAGE_ERROR: cJSON_AddStringToObject(f, "error", e->u.storage.error); break;
  case EV_CHAT_RESUMED:
  case EV_CHAT_LOADED:
    cJSON_AddStringToObject(f, "id", e->u.chat_open.id);
    cJSON_AddStringToObject(f, "title", e->u.chat_open.title);
    ag_json_add_int(f, "messages", (int64_t)e->u.chat_open.messages);
    break;
  case EV_APPROVAL: add_approval(f, &e->u.approval); break;
  case EV_CANCELLED:
    if (e->u.cancelled.agents) cJSON_AddStringToObject(f, "agents", e->u.cancelled.agents);
    break;
  case EV_SEQS_MOVED:
    ag_json_add_int(f, "by", (int64_t)e->u.seqs_moved.by);
    ag_json_add_int(f, "messages", (int64_t)e->u.seqs_moved.messages);
    break;
  case EV_MEMORY_CLEARED: break; /* the agent is added for every kind that has one */
  case EV_MEMORY_RETRIEVED:
  case EV_REFLECTION:
  case EV_MEMORY_RATED: add_memory(f, e); break;
  case EV_SCHEDULE_SKIPPED:
    ag_json_add_int(f, "item", (int64_t)e->u.skipped.item);
    add_time(f, "due", e->u.skipped.due_ms);
    break;
  case EV_CLOCK_ADVANCED: add_time(f, "sim_time", e->u.advanced.sim_ms); break;
  case EV_MCP_ERROR:
    cJSON_AddStringToObject(f, "server", e->u.mcp.server);
    cJSON_AddStringToObject(f, "error", e->u.mcp.error);
    break;
  case EV_TURN_QUEUED:
  case EV_TURN_END: add_turn(f, e); break;
  case EV_BUDGET_EXHAUSTED: add_budget(f, &e->u.budget); break;
  case EV_RATE_LIMITED:
    cJSON_AddStringToObject(f, "endpoint", e->u.rate.endpoint);
    add_time(f, "until", e->u.rate.until_ms);
    break;
  case EV_CONTEXT_SHRUNK:
  case EV_SUMMARY: add_prompt_size(f, e); break;
  case EV_TURNS_RESUMED:
    ag_json_add_int(f, "replies", (int64_t)e->u.resumed.replies);
    cJSON_AddStringToObject(f, "agents", e->u.resumed.agents);
    break;
  case EV_KIND_COUNT: break;
  }
  return f;
}
