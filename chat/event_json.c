/* World events as JSON fields (see event_json.h). The order of the fields is the wire's. Each kind's
 * fields are written once, through ev_out, for both the tree and the direct writer. */
#include "chat/event_json.h"

#include "common/clock.h"
#include "common/error.h"
#include "common/jsonnum.h"

#include <stdlib.h>

/* Where the fields go: into a cJSON object (chat_event_fields: the output adds to it), or with no
 * object straight into a buffer, as cJSON would print that object (chat_event_put_fields: the stored
 * thread, where the tree cost more than the rest of a cached reply). */
typedef struct ev_out {
  cJSON *obj;
  ag_json_members *m;
} ev_out;

/* v NULL adds nothing, in both: cJSON_AddStringToObject makes no item of NULL. */
static void out_str(ev_out *o, const char *k, const char *v) {
  if (o->obj) cJSON_AddStringToObject(o->obj, k, v);
  else ag_json_member_string(o->m, k, v);
}

static void out_int(ev_out *o, const char *k, int64_t v) {
  if (o->obj) ag_json_add_int(o->obj, k, v);
  else ag_json_member_int(o->m, k, v);
}

static void out_bool(ev_out *o, const char *k, int v) {
  if (o->obj) cJSON_AddBoolToObject(o->obj, k, v);
  else ag_json_member_bool(o->m, k, v);
}

static void out_null(ev_out *o, const char *k) {
  if (o->obj) cJSON_AddNullToObject(o->obj, k);
  else ag_json_member_null(o->m, k);
}

/* A value made as a tree (a fractional number, JSON text parsed, an array; NULL when out of memory),
 * taken: added to the object, or printed by cJSON itself into the buffer. The rare kinds only. */
static void out_item(ev_out *o, const char *k, cJSON *item) {
  if (o->obj) {
    cJSON_AddItemToObject(o->obj, k, item);
    return;
  }
  char *text = item ? cJSON_PrintUnformatted(item) : NULL;
  cJSON_Delete(item);
  if (text) ag_json_member_raw(o->m, k, text);
  else if (!o->m->rc) o->m->rc = AG_ERR_NOMEM;
  cJSON_free(text);
}

static void out_num(ev_out *o, const char *k, double v) { out_item(o, k, cJSON_CreateNumber(v)); }

static void add_tool(ev_out *f, const ev_tool *t, int call) {
  out_str(f, "tool", t->tool ? t->tool : "");
  out_str(f, "call_id", t->call_id ? t->call_id : "");
  /* Arguments and results are JSON; invalid JSON from a model is kept as a string. */
  cJSON *v = cJSON_Parse(t->json ? t->json : "null");
  if (!v) v = cJSON_CreateString(t->json ? t->json : "");
  out_item(f, call ? "args" : "result", v);
  if (call) return;
  out_bool(f, "error", t->error);
  out_int(f, "at_ms", (int64_t)t->at_ms);
}

static void add_llm_error(ev_out *f, const ev_llm_error *x) {
  out_str(f, "error", x->error ? x->error : "error");
  if (!x->has_info) return;
  out_int(f, "http_status", (int64_t)x->http_status);
  out_int(f, "attempts", x->attempts);
  out_int(f, "retries", x->attempts > 0 ? x->attempts - 1 : 0);
  if (x->error_type && x->error_type[0]) out_str(f, "error_type", x->error_type);
}

static void add_chat(ev_out *f, const world_event *e) {
  out_str(f, "id", e->u.chat.id);
  if (e->kind != EV_CHAT_DELETED) return;
  if (e->u.chat.current) out_str(f, "current", e->u.chat.current);
  else out_null(f, "current");
}

static void add_unknown(ev_out *f, const ev_unknown_mention *u) {
  out_str(f, "sender", u->sender);
  cJSON *names = cJSON_CreateArray();
  for (size_t i = 0; names && i < u->n_names; i++) cJSON_AddItemToArray(names, cJSON_CreateString(u->names[i]));
  out_item(f, "names", names);
  out_int(f, "seq", (int64_t)u->seq);
}

static void add_time(ev_out *f, const char *key, int64_t ms) {
  char t[AG_TIME_LEN];
  ag_time_format(ms, t, sizeof t);
  out_str(f, key, t);
}

/* The prompt's size and summary (issue 26): a shrunk window, a new summary. */
static void add_prompt_size(ev_out *f, const world_event *e) {
  if (e->kind == EV_CONTEXT_SHRUNK) {
    out_int(f, "window", e->u.shrunk.window);
    out_str(f, "error", e->u.shrunk.error ? e->u.shrunk.error : "");
    return;
  }
  out_int(f, "upto", (int64_t)e->u.summary.upto);
  out_str(f, "summary", e->u.summary.summary ? e->u.summary.summary : "");
}

/* The fields of the kinds with more than a few: each a helper, so that the switch below reads as a table. */
static void add_llm_done(ev_out *f, const ev_llm_done *d) {
  out_int(f, "chars", (int64_t)d->chars);
  out_int(f, "input_tokens", (int64_t)d->input_tokens);
  out_int(f, "output_tokens", (int64_t)d->output_tokens);
  if (d->estimated) out_bool(f, "estimated", 1);
  if (d->cached) out_bool(f, "cached", 1);
  if (d->usd > 0) out_num(f, "usd", d->usd);
}

static void add_approval(ev_out *f, const ev_approval *a) {
  out_str(f, "tool", a->tool);
  out_bool(f, "approved", a->approved);
  if (a->ended) out_str(f, "ended", a->ended);
}

static void add_turn(ev_out *f, const world_event *e) {
  if (e->kind == EV_TURN_QUEUED) {
    out_int(f, "seq", (int64_t)e->u.turn_queued.seq);
    if (e->u.turn_queued.rerun) out_bool(f, "rerun", 1);
    return;
  }
  out_int(f, "seq", (int64_t)e->u.turn_end.seq);
  if (e->u.turn_end.cancelled) out_bool(f, "cancelled", 1);
  if (e->u.turn_end.queued) out_bool(f, "queued", 1);
}

static void add_budget(ev_out *f, const ev_budget *b) {
  out_int(f, "tokens", b->tokens);
  out_num(f, "usd", b->usd);
  out_int(f, "limit_tokens", b->limit_tokens);
  out_num(f, "limit_usd", b->limit_usd);
}

/* A memory stream's events (docs/memory.md): the count retrieved, a reflection's insights, the ratings. */
static void add_memory(ev_out *f, const world_event *e) {
  if (e->kind == EV_MEMORY_RETRIEVED) {
    out_int(f, "count", (int64_t)e->u.retrieved.count);
  } else if (e->kind == EV_REFLECTION) {
    cJSON *v = cJSON_Parse(e->u.reflection.insights ? e->u.reflection.insights : "[]");
    out_item(f, "insights", v ? v : cJSON_CreateArray());
    out_int(f, "at_ms", e->u.reflection.at_ms);
  } else {
    cJSON *v = cJSON_Parse(e->u.rated.ratings ? e->u.rated.ratings : "[]");
    out_item(f, "ratings", v ? v : cJSON_CreateArray());
  }
}

static void put_fields(ev_out *f, const world_event *e) {
  const char *agent = world_event_agent(e);
  if (agent) out_str(f, "agent", agent);
  switch (e->kind) {
  case EV_LLM_START: out_str(f, "provider", e->u.llm_start.provider); break;
  case EV_LLM_CHUNK: out_str(f, "text", e->u.llm_chunk.text); break;
  case EV_LLM_DONE: add_llm_done(f, &e->u.llm_done); break;
  case EV_LLM_ERROR: add_llm_error(f, &e->u.llm_error); break;
  case EV_TURN_LIMIT: out_int(f, "limit", e->u.turn_limit.limit); break;
  case EV_TOOL_CALL:
  case EV_TOOL_RESULT: add_tool(f, &e->u.tool, e->kind == EV_TOOL_CALL); break;
  case EV_UNKNOWN_MENTION: add_unknown(f, &e->u.unknown); break;
  case EV_NOT_ADDRESSED:
    add_unknown(f, &e->u.not_addressed.who);
    out_str(f, "message", e->u.not_addressed.message);
    break;
  case EV_AGENT_ADDED:
  case EV_AGENT_REMOVED:
    out_str(f, "name", e->u.agent.name);
    if (e->kind == EV_AGENT_ADDED) out_str(f, "provider", e->u.agent.provider);
    break;
  case EV_NEW_CHAT_CREATED:
  case EV_CHAT_REUSED:
  case EV_CHAT_DELETED: add_chat(f, e); break;
  case EV_TITLE_UPDATED: out_str(f, "title", e->u.title.title); break;
  case EV_STATE_SAVED:
    out_int(f, "seq", (int64_t)e->u.saved.seq);
    out_int(f, "messages", (int64_t)e->u.saved.messages);
    break;
  case EV_STORAGE_ERROR: out_str(f, "error", e->u.storage.error); break;
  case EV_CHAT_RESUMED:
  case EV_CHAT_LOADED:
    out_str(f, "id", e->u.chat_open.id);
    out_str(f, "title", e->u.chat_open.title);
    out_int(f, "messages", (int64_t)e->u.chat_open.messages);
    break;
  case EV_APPROVAL: add_approval(f, &e->u.approval); break;
  case EV_CANCELLED:
    if (e->u.cancelled.agents) out_str(f, "agents", e->u.cancelled.agents);
    break;
  case EV_SEQS_MOVED:
    out_int(f, "by", (int64_t)e->u.seqs_moved.by);
    out_int(f, "messages", (int64_t)e->u.seqs_moved.messages);
    break;
  case EV_MEMORY_CLEARED: break; /* the agent is added for every kind that has one */
  case EV_MEMORY_RETRIEVED:
  case EV_REFLECTION:
  case EV_MEMORY_RATED: add_memory(f, e); break;
  case EV_SCHEDULE_SKIPPED:
    out_int(f, "item", (int64_t)e->u.skipped.item);
    add_time(f, "due", e->u.skipped.due_ms);
    break;
  case EV_CLOCK_ADVANCED: add_time(f, "sim_time", e->u.advanced.sim_ms); break;
  case EV_MCP_ERROR:
    out_str(f, "server", e->u.mcp.server);
    out_str(f, "error", e->u.mcp.error);
    break;
  case EV_TURN_QUEUED:
  case EV_TURN_END: add_turn(f, e); break;
  case EV_BUDGET_EXHAUSTED: add_budget(f, &e->u.budget); break;
  case EV_RATE_LIMITED:
    out_str(f, "endpoint", e->u.rate.endpoint);
    add_time(f, "until", e->u.rate.until_ms);
    break;
  case EV_CONTEXT_SHRUNK:
  case EV_SUMMARY: add_prompt_size(f, e); break;
  case EV_TURNS_RESUMED:
    out_int(f, "replies", (int64_t)e->u.resumed.replies);
    out_str(f, "agents", e->u.resumed.agents);
    break;
  case EV_KIND_COUNT: break;
  }
}

cJSON *chat_event_fields(const world_event *e) {
  ev_out o = {.obj = cJSON_CreateObject()};
  if (o.obj) put_fields(&o, e);
  return o.obj;
}

int chat_event_put_fields(ag_json_members *m, const world_event *e) {
  ev_out o = {.obj = NULL, .m = m};
  put_fields(&o, e);
  return m->rc;
}
