/* agora serve's JSON API (docs/serve.md): worlds, chats, messages, snapshots, cancel, approvals and the
 * event stream, each answered from the loop at once. Chat operations go through the world's session,
 * reads through the archive, snapshots through chat/snapshot.h: the same code paths as the commands. */
#include "serve/serve_int.h"

#include "chat/branch.h"
#include "chat/snapshot.h"
#include "agents/mention.h"
#include "chat/transcript.h"
#include "runtime/agent_json.h"
#include "runtime/output.h"
#include "common/jsonnum.h"
#include "world/world_budget.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_DEFAULT 100  /* messages per page unless ?limit= */
#define PAGE_MAX 1000

/* ---- worlds ---- */

typedef struct world_rows { serve *s; cJSON *arr; } world_rows;

static int world_row(const chat_world_info *w, void *arg) {
  world_rows *r = arg;
  cJSON *j = cJSON_CreateObject();
  if (!j) return AG_ERR_NOMEM;
  cJSON_AddStringToObject(j, "id", w->id);
  cJSON_AddStringToObject(j, "name", w->name);
  cJSON_AddNumberToObject(j, "agents", w->agents);
  cJSON_AddNumberToObject(j, "chats", (double)w->chats);
  if (w->current_chat[0]) cJSON_AddStringToObject(j, "current_chat", w->current_chat);
  else cJSON_AddNullToObject(j, "current_chat");
  int loaded = 0;
  for (size_t i = 0; i < r->s->n_worlds; i++) loaded |= !strcmp(world_id(r->s->worlds[i]->w), w->id);
  cJSON_AddBoolToObject(j, "loaded", loaded);
  cJSON_AddItemToArray(r->arr, j);
  return 0;
}

static void get_worlds(serve *s, struct evhttp_request *req) {
  cJSON *j = cJSON_CreateObject();
  world_rows r = {s, cJSON_AddArrayToObject(j, "worlds")};
  ag_errmsg em = {""};
  int rc = chat_worlds_each(s->st, world_row, &r, &em);
  if (rc) {
    cJSON_Delete(j);
    return serve_reply_fail(req, rc, &em);
  }
  /* The first world named on the command line: the one the page opens (null: none was named). */
  const char *primary = NULL;
  for (size_t i = 0; i < s->n_worlds && !primary; i++)
    if (s->worlds[i]->named) primary = world_id(s->worlds[i]->w);
  if (primary) cJSON_AddStringToObject(j, "primary", primary);
  else cJSON_AddNullToObject(j, "primary");
  serve_reply_json(req, 200, j);
}

/* Whether the world's MCP servers run here, and why not: a world from the database never starts
 * programs (docs/architecture.md "The runtime"). */
static cJSON *mcp_json(const serve_world *sw) {
  cJSON *m = cJSON_CreateObject();
  const char *why = NULL;
  cJSON_AddNumberToObject(m, "servers", (double)world_time_spec(sw->w)->n_mcp);
  cJSON_AddBoolToObject(m, "started", rt_mcp_started(sw->rt, &why));
  if (why) cJSON_AddStringToObject(m, "reason", why);
  else cJSON_AddNullToObject(m, "reason");
  return m;
}

/* The world's budget: its limits (0: none), the current chat's spend, and whether calls are stopped. */
static cJSON *budget_json(const world *w) {
  world_budget_view v = world_budget(w);
  cJSON *b = cJSON_CreateObject();
  ag_json_add_int(b, "limit_tokens", v.limit_tokens);
  cJSON_AddNumberToObject(b, "limit_usd", v.limit_usd);
  ag_json_add_int(b, "tokens", v.tokens);
  cJSON_AddNumberToObject(b, "usd", v.usd);
  cJSON_AddBoolToObject(b, "reached", v.reached);
  return b;
}

static void get_world(serve *s, serve_world *sw, struct evhttp_request *req) {
  cJSON *j = cJSON_CreateObject();
  const char *cur = chat_session_current(sw->cs);
  cJSON_AddStringToObject(j, "id", world_id(sw->w));
  cJSON_AddStringToObject(j, "name", world_name(sw->w));
  if (cur) cJSON_AddStringToObject(j, "current_chat", cur), cJSON_AddStringToObject(j, "title", chat_session_title(sw->cs));
  else cJSON_AddNullToObject(j, "current_chat"), cJSON_AddNullToObject(j, "title");
  cJSON_AddNumberToObject(j, "last_seq", (double)world_last_seq(sw->w));
  cJSON_AddNumberToObject(j, "turn_limit", world_turn_limit(sw->w));
  cJSON_AddNumberToObject(j, "thinking", (double)world_thinking(sw->w));
  cJSON *agents = cJSON_AddArrayToObject(j, "agents");
  for (size_t i = 0; i < world_agent_count(sw->w); i++) cJSON_AddItemToArray(agents, rt_agent_json(world_agent_at(sw->w, i)));
  cJSON *asks = cJSON_AddArrayToObject(j, "approvals");
  for (size_t i = 0; i < s->n_asks; i++)
    if (s->asks[i].sw == sw) cJSON_AddItemToArray(asks, serve_ask_json(&s->asks[i], cur));
  cJSON *settings = world_settings_json(sw->w);
  if (settings) cJSON_AddItemToObject(j, "settings", settings);
  cJSON_AddItemToObject(j, "mcp", mcp_json(sw));
  cJSON_AddItemToObject(j, "budget", budget_json(sw->w));
  if (cur && !strcmp(sw->resumed_chat, cur)) { /* this run re-ran replies the chat had in flight */
    cJSON *r = cJSON_AddObjectToObject(j, "resumed");
    cJSON_AddNumberToObject(r, "replies", (double)sw->resumed_replies);
    cJSON_AddStringToObject(r, "agents", sw->resumed_agents);
  }
  cJSON_AddBoolToObject(j, "loaded", 1);
  serve_reply_json(req, 200, j);
}

/* ---- a world not loaded: read from the database, never opened ---- */

static int find_row(const chat_world_info *w, void *arg) {
  chat_world_info *out = arg;
  if (strcmp(w->id, out->id)) return 0;
  *out = *w;
  return CHAT_STOP;
}

/* The stored row of world id into *out; 0, or an error reply was sent (404 for an unknown world). */
static int stored_row(serve *s, const char *id, chat_world_info *out, struct evhttp_request *req) {
  ag_errmsg em = {""};
  *out = (chat_world_info){.name = ""};
  snprintf(out->id, sizeof out->id, "%s", id);
  int rc = chat_worlds_each(s->st, find_row, out, &em);
  if (!rc && !out->name[0]) rc = ag_fail(&em, AG_ERR_NOT_FOUND, "no world '%s' in the database", id);
  if (rc) serve_reply_fail(req, rc, &em);
  return rc;
}

/* GET /api/worlds/{id} of a world not loaded: what the database holds ("loaded": false; no live fields). */
static void get_stored_world(serve *s, const chat_world_info *info, int status, struct evhttp_request *req) {
  world_spec spec;
  char *settings = NULL;
  ag_errmsg em = {""};
  int rc = chat_world_spec(s->st, info->id, &spec, &em);
  if (!rc && (rc = chat_world_settings(s->st, info->id, &settings, &em))) world_spec_free(&spec);
  if (rc) return serve_reply_fail(req, rc, &em);
  cJSON *j = cJSON_CreateObject();
  chat_info c;
  cJSON_AddStringToObject(j, "id", info->id);
  cJSON_AddStringToObject(j, "name", info->name);
  if (info->current_chat[0] && !chat_info_get(s->st, info->current_chat, &c, &em))
    cJSON_AddStringToObject(j, "current_chat", c.id), cJSON_AddStringToObject(j, "title", c.title);
  else cJSON_AddNullToObject(j, "current_chat"), cJSON_AddNullToObject(j, "title");
  cJSON *agents = cJSON_AddArrayToObject(j, "agents");
  for (size_t i = 0; i < spec.n_agents; i++) {
    cJSON *a = cJSON_CreateObject();
    char id[CHAT_ID_MAX];
    if (!mention_id_from_name(spec.agents[i].name, id, sizeof id)) cJSON_AddStringToObject(a, "id", id);
    cJSON_AddStringToObject(a, "name", spec.agents[i].name);
    cJSON_AddStringToObject(a, "provider", llm_provider_name(spec.agents[i].llm.provider));
    if (spec.agents[i].llm.model) cJSON_AddStringToObject(a, "model", spec.agents[i].llm.model);
    cJSON_AddItemToArray(agents, a);
  }
  cJSON_AddArrayToObject(j, "approvals");
  cJSON *set = cJSON_Parse(settings);
  if (set) cJSON_AddItemToObject(j, "settings", set);
  cJSON *m = cJSON_AddObjectToObject(j, "mcp");
  cJSON_AddNumberToObject(m, "servers", (double)spec.n_mcp);
  cJSON_AddBoolToObject(m, "started", 0);
  if (spec.n_mcp) cJSON_AddStringToObject(m, "reason", rt_mcp_why_stored);
  else cJSON_AddStringToObject(m, "reason", "the world has no mcp_servers");
  cJSON_AddBoolToObject(j, "loaded", 0);
  free(settings);
  world_spec_free(&spec);
  serve_reply_json(req, status, j);
}

void serve_world_reply_stored(serve *s, const char *id, int status, struct evhttp_request *req) {
  chat_world_info info;
  if (!stored_row(s, id, &info, req)) get_stored_world(s, &info, status, req);
}

/* PATCH /api/worlds/{id} {"budget": {...}}: new limits (a limit left out is kept), stored with the world;
 * answers with the world as GET does. */
static void patch_world(serve *s, serve_world *sw, const serve_body *b, struct evhttp_request *req) {
  world_budget_view v = world_budget(sw->w);
  ag_errmsg em = {""};
  int rc = b->doc ? serve_world_settings_set(s, sw, &(serve_match){.route = SR_WORLD}, b, &em) : AG_OK;
  if (rc) return serve_reply_fail(req, rc, &em);
  if (!b->has_budget_tokens && !b->has_budget_usd) return get_world(s, sw, req);
  rc = world_budget_set(sw->w, b->has_budget_tokens ? b->budget_tokens : v.limit_tokens,
                            b->has_budget_usd ? b->budget_usd : v.limit_usd, &em);
  if (!rc) rc = chat_session_save_world(sw->cs, &em);
  if (rc) return serve_reply_fail(req, rc, &em);
  get_world(s, sw, req);
}

/* ---- chats ---- */

static int chat_row(const chat_info *c, void *arg) {
  cJSON *j = output_chat_json(c);
  if (!j) return AG_ERR_NOMEM;
  cJSON_AddItemToArray(arg, j);
  return 0;
}

static void get_chats(serve *s, const char *world, struct evhttp_request *req) {
  cJSON *j = cJSON_CreateObject();
  ag_errmsg em = {""};
  int rc = chat_list(s->st, world, chat_row, cJSON_AddArrayToObject(j, "chats"), &em);
  if (rc) {
    cJSON_Delete(j);
    return serve_reply_fail(req, rc, &em);
  }
  serve_reply_json(req, 200, j);
}

/* Chat chat of world world into *c; 0, or an error reply was sent (404 when it is another world's). */
static int chat_of(serve *s, const char *world, const char *chat, chat_info *c, struct evhttp_request *req) {
  ag_errmsg em = {""};
  int rc = chat_info_get(s->st, chat, c, &em);
  if (!rc && strcmp(c->world_id, world)) rc = ag_fail(&em, AG_ERR_NOT_FOUND, "no chat '%s' in world '%s'", chat, world);
  if (rc) serve_reply_fail(req, rc, &em);
  return rc;
}

/* Answers with the chat's row (status), or a 500 if it cannot be read. */
static void reply_chat(serve *s, const char *chat, int status, struct evhttp_request *req) {
  chat_info c;
  ag_errmsg em = {""};
  int rc = chat_info_get(s->st, chat, &c, &em);
  if (rc) return serve_reply_fail(req, rc, &em);
  serve_reply_json(req, status, output_chat_json(&c));
}

/* Makes chat current (replies in flight are cancelled first: they belong to the chat left). */
static int select_chat(serve_world *sw, const char *chat, ag_errmsg *em) {
  const char *cur = chat_session_current(sw->cs), *refused = rt_nats_refuses(sw->nats, "load", chat);
  if (cur && !strcmp(cur, chat)) return AG_OK;
  if (refused) return ag_fail(em, AG_ERR_STATE, "%s", refused);
  if (!world_quiet_now(sw->w)) serve_world_cancel(sw);
  int rc = chat_session_load(sw->cs, chat, em);
  if (rc) return rc;
  chat_info c;
  if (!chat_info_get(sw->srv->st, chat, &c, em))
    serve_world_announce(sw, &(world_event){EV_CHAT_LOADED, .u.chat_open = {c.id, c.title, c.message_count}});
  return AG_OK;
}

static void chat_action(serve *s, serve_world *sw, const serve_match *m, int method, const serve_body *b,
                        struct evhttp_request *req) {
  chat_info c;
  ag_errmsg em = {""};
  int rc;
  if (chat_of(s, m->world, m->chat, &c, req)) return;
  if (m->route == SR_CHAT_SELECT) {
    if ((rc = select_chat(sw, m->chat, &em))) return serve_reply_fail(req, rc, &em);
    return reply_chat(s, m->chat, 200, req);
  }
  if (m->route == SR_CHAT_BRANCH) { /* issue 13: as `chats branch`; the new chat is not selected */
    const char *cur = chat_session_current(sw->cs);
    char id[CHAT_ID_MAX];
    if (cur && !strcmp(cur, m->chat) && !world_quiet_now(sw->w))
      return serve_reply_error(req, 409, "chat '%s' has replies in flight: branch it when they are in", m->chat);
    if ((rc = chat_branch(s->st, m->chat, b->at, id, &em))) return serve_reply_fail(req, rc, &em);
    return reply_chat(s, id, 201, req);
  }
  if (method == SERVE_PATCH) {
    const char *cur = chat_session_current(sw->cs);
    if (!cur || strcmp(cur, m->chat))
      return serve_reply_error(req, 409, "chat '%s' is not the current chat: select it first", m->chat);
    if ((rc = chat_session_set_title(sw->cs, b->title, &em))) return serve_reply_fail(req, rc, &em);
    rt_nats_join_record(sw->nats, m->chat, chat_session_title(sw->cs));
    return reply_chat(s, m->chat, 200, req);
  }
  const char *cur = chat_session_current(sw->cs), *refused = rt_nats_refuses(sw->nats, "delete", m->chat);
  if (refused) return serve_reply_error(req, 409, "%s", refused);
  if (cur && !strcmp(cur, m->chat) && !world_quiet_now(sw->w)) serve_world_cancel(sw);
  if ((rc = chat_session_delete(sw->cs, m->chat, &em)) || (rc = rt_nats_join_sync(sw->nats, &em)))
    return serve_reply_fail(req, rc, &em);
  rt_nats_join_record(sw->nats, m->chat, NULL);
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "deleted", m->chat);
  cur = chat_session_current(sw->cs);
  if (cur) cJSON_AddStringToObject(j, "current", cur);
  else cJSON_AddNullToObject(j, "current");
  serve_reply_json(req, 200, j);
}

/* ---- messages and snapshots ---- */

typedef struct page {
  cJSON *arr, *steps; /* steps: NULL unless ?steps=1 */
  const char *world, *chat;
  uint64_t before, last;
  size_t left;
} page;

static int page_row(const chat_entry *e, void *arg) {
  page *p = arg;
  if (!e->msg) { /* a thread step (tool call or result, failed call), anchored after the last message */
    cJSON *j = output_step_json(p->world, p->chat, e->kind, e->fields);
    if (!j) return AG_ERR_NOMEM;
    cJSON_AddNumberToObject(j, "after_seq", (double)p->last);
    cJSON_AddItemToArray(p->steps, j);
    return 0;
  }
  if (!p->left || (p->before && e->msg->seq >= p->before)) return CHAT_STOP;
  cJSON *j = output_message_json(p->world, p->chat, e->msg);
  if (!j) return AG_ERR_NOMEM;
  cJSON_AddItemToArray(p->arr, j);
  p->last = e->msg->seq;
  p->left--;
  return 0;
}

/* ?after=SEQ (messages after it, oldest first) or ?before=SEQ (the last limit before it), ?limit=N;
 * ?steps=1 adds the chat's stored thread steps among them (the page shows tool steps after a reload). */
static void get_messages(serve *s, const serve_match *m, struct evhttp_request *req) {
  chat_info c;
  if (chat_of(s, m->world, m->chat, &c, req)) return;
  uint64_t after = 0, before = 0, limit = PAGE_DEFAULT, steps = 0;
  int has_after, has_before, has_limit, has_steps;
  char err[SERVE_ERR_MAX];
  if (serve_query_u64(m->query, "after", &after, &has_after, err) ||
      serve_query_u64(m->query, "before", &before, &has_before, err) ||
      serve_query_u64(m->query, "limit", &limit, &has_limit, err) ||
      serve_query_u64(m->query, "steps", &steps, &has_steps, err))
    return serve_reply_error(req, 400, "%s", err);
  if (has_limit && (limit < 1 || limit > PAGE_MAX)) return serve_reply_error(req, 400, "limit: 1 to %d", PAGE_MAX);
  if (has_after && has_before) return serve_reply_error(req, 400, "give after or before, not both");
  if (steps > 1) return serve_reply_error(req, 400, "steps: 0 or 1");
  uint64_t from = after + 1;
  if (has_before) from = before > limit ? before - limit : 1;
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "chat", c.id);
  cJSON_AddNumberToObject(j, "message_count", (double)c.message_count);
  page p = {.arr = cJSON_AddArrayToObject(j, "messages"), .steps = steps ? cJSON_AddArrayToObject(j, "steps") : NULL,
            .world = c.world_id, .chat = c.id, .before = has_before ? (before ? before : 1) : 0, .last = from - 1,
            .left = (size_t)limit};
  ag_errmsg em = {""};
  int rc = steps ? chat_transcript_from(s->st, c.id, from, page_row, &p, &em)
                 : chat_messages_each(s->st, c.id, from, page_row, &p, &em);
  if (rc) {
    cJSON_Delete(j);
    return serve_reply_fail(req, rc, &em);
  }
  serve_reply_json(req, 200, j);
}

static void get_snapshot(serve *s, const serve_match *m, struct evhttp_request *req) {
  chat_info c;
  if (chat_of(s, m->world, m->chat, &c, req)) return;
  cJSON *snap = NULL;
  ag_errmsg em = {""};
  int rc = chat_snapshot_export(s->st, c.id, &snap, &em);
  if (rc) return serve_reply_fail(req, rc, &em);
  evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Disposition",
                    "attachment; filename=\"snapshot.json\"");
  serve_reply_json(req, 200, snap);
}

static void post_snapshot(serve *s, const char *body, size_t len, struct evhttp_request *req) {
  cJSON *snap = NULL;
  char err[SERVE_ERR_MAX];
  int status = serve_json_parse(body, len, &snap, err);
  if (status) return serve_reply_error(req, status, "%s", err);
  ag_errmsg em = {""};
  char id[CHAT_ID_MAX];
  int rc = chat_snapshot_validate(snap, "snapshot", &em);
  if (!rc) rc = chat_snapshot_import(s->st, snap, "snapshot", id, &em);
  cJSON_Delete(snap);
  if (rc) return serve_reply_fail(req, rc, &em); /* invalid or newer: 422; storage: 500 */
  reply_chat(s, id, 201, req);
}

static void post_message(serve_world *sw, const serve_body *b, struct evhttp_request *req) {
  ag_errmsg em = {""};
  int rc;
  if (b->chat) {
    chat_info c;
    if (chat_of(sw->srv, world_id(sw->w), b->chat, &c, req)) return;
    if ((rc = select_chat(sw, b->chat, &em))) return serve_reply_fail(req, rc, &em);
  }
  if (!chat_session_current(sw->cs) && (rc = chat_session_new(sw->cs, &em))) return serve_reply_fail(req, rc, &em);
  if ((rc = rt_nats_join_sync(sw->nats, &em))) return serve_reply_fail(req, rc, &em);
  ag_msg *m = NULL;
  if ((rc = world_publish(sw->w, "human", b->text, &m))) return serve_reply_error(req, serve_status_of(rc), "%s", ag_strerror(rc));
  cJSON *j = cJSON_CreateObject();
  if (m) cJSON_AddNumberToObject(j, "seq", (double)m->seq);
  else cJSON_AddNullToObject(j, "seq"); /* on NATS: known once the stream brings it back */
  cJSON_AddStringToObject(j, "chat", chat_session_current(sw->cs));
  serve_reply_json(req, 202, j);
}

static void post_cancel(serve_world *sw, struct evhttp_request *req) {
  cJSON *j = cJSON_CreateObject();
  cJSON *names = cJSON_AddArrayToObject(j, "cancelled");
  for (size_t i = 0; i < world_agent_count(sw->w); i++)
    if (agent_is_thinking(world_agent_at(sw->w, i))) cJSON_AddItemToArray(names, cJSON_CreateString(agent_id(world_agent_at(sw->w, i))));
  serve_world_cancel(sw);
  serve_reply_json(req, 202, j);
}

static void post_approval(serve *s, uint64_t id, const serve_body *b, struct evhttp_request *req) {
  int rc = serve_approval_answer(s, id, b->allow, b->answer);
  if (rc == AG_ERR_NOT_FOUND) return serve_reply_error(req, 404, "no pending approval %llu", (unsigned long long)id);
  if (rc) return serve_reply_error(req, 409, "approval %llu was already answered (or its turn ended)", (unsigned long long)id);
  cJSON *j = cJSON_CreateObject();
  cJSON_AddNumberToObject(j, "id", (double)id);
  cJSON_AddBoolToObject(j, "allow", b->allow);
  serve_reply_json(req, 200, j);
}

/* ---- dispatch ---- */

/* A GET (or HEAD) of a world not loaded: from the database, as it is. Loading would start its schedule
 * and may make a chat, and an <img> on any page can send a GET (issue 28 item 2b). */
static void stored_route(serve *s, struct evhttp_request *req, const serve_match *m) {
  chat_world_info info;
  if (stored_row(s, m->world, &info, req)) return;
  switch (m->route) {
  case SR_WORLD: return get_stored_world(s, &info, 200, req);
  case SR_CHATS: return get_chats(s, m->world, req);
  case SR_CHAT_MESSAGES: return get_messages(s, m, req);
  case SR_CHAT_SNAPSHOT: return get_snapshot(s, m, req);
  case SR_MCP: return serve_mcp_reply(s, NULL, req, m);
  case SR_EVENTS:
    return serve_reply_error(req, 409, "world '%s' is not loaded, and a GET never loads one: POST "
                             "/api/worlds/%s/load first", m->world, m->world);
  default: return serve_reply_error(req, 404, "no such route");
  }
}

/* Routes about one world: a change loads it first (404 when the database has no such world); a read
 * of a world not loaded never does. */
static void world_route(serve *s, struct evhttp_request *req, const serve_match *m, int method, const serve_body *b) {
  serve_world *sw = serve_world_find(s, m->world);
  ag_errmsg em = {""};
  int rc;
  if (!sw && (method == SERVE_GET || method == SERVE_HEAD)) return stored_route(s, req, m);
  if (!sw && (rc = serve_world_get(s, m->world, &sw, &em))) return serve_reply_fail(req, rc, &em);
  switch (m->route) {
  case SR_WORLD:
    if (method == SERVE_PATCH) return patch_world(s, sw, b, req);
    return get_world(s, sw, req);
  case SR_WORLD_LOAD: return get_world(s, sw, req);
  case SR_CHATS:
    if (method == SERVE_POST) { /* replies in flight belong to the chat left: cancelled out loud, as a select does */
      if (!world_quiet_now(sw->w)) serve_world_cancel(sw);
      if ((rc = chat_session_new(sw->cs, &em)) || (rc = rt_nats_join_sync(sw->nats, &em)))
        return serve_reply_fail(req, rc, &em);
      return reply_chat(s, chat_session_current(sw->cs), 201, req);
    }
    return get_chats(s, m->world, req);
  case SR_CHAT:
  case SR_CHAT_SELECT:
  case SR_CHAT_BRANCH: return chat_action(s, sw, m, method, b, req);
  case SR_CHAT_MESSAGES: return get_messages(s, m, req);
  case SR_CHAT_SNAPSHOT: return get_snapshot(s, m, req);
  case SR_MESSAGES: return post_message(sw, b, req);
  case SR_AGENTS:
  case SR_AGENT: return serve_build_handle(s, sw, req, m, method, b);
  case SR_CHAT_MESSAGE:
  case SR_CHAT_RETRY: return serve_edit_handle(s, sw, req, m, method, b);
  case SR_MCP:
  case SR_MCP_RESTART: return serve_mcp_reply(s, sw, req, m);
  case SR_CANCEL: return post_cancel(sw, req);
  case SR_EVENTS: {
    if (method == SERVE_HEAD) { /* no stream for a HEAD: the headers only */
      evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "text/event-stream; charset=utf-8");
      return evhttp_send_reply(req, 200, "OK", NULL);
    }
    size_t streams = 0;
    for (size_t i = 0; i < s->n_worlds; i++) streams += sse_hub_clients(s->worlds[i]->hub);
    if (streams >= s->max_streams) {
      evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", "5");
      return serve_reply_error(req, 503, "too many event streams (the server keeps %zu): try again later", s->max_streams);
    }
    const char *last = evhttp_find_header(evhttp_request_get_input_headers(req), "Last-Event-ID");
    if (sse_hub_attach(sw->hub, req, last)) return serve_reply_error(req, 500, "out of memory");
    return;
  }
  default: return serve_reply_error(req, 404, "no such route");
  }
}

void serve_api_handle(serve *s, struct evhttp_request *req, const serve_match *m, int method, const char *body,
                      size_t len) {
  if (m->route == SR_SNAPSHOTS) return post_snapshot(s, body, len, req);
  if (m->route == SR_WORLD_EXPORT || m->route == SR_CHAT_EXPORT || m->route == SR_CHAT_SEARCH || m->route == SR_CHAT_USAGE)
    return serve_read_handle(s, req, m);
  if (m->route == SR_CHAT_GRAPH) return serve_graph_handle(s, req, m);
  if (m->route == SR_AGENT_MEMORY) return serve_memory_reply(s, req, m);
  serve_body b;
  char err[SERVE_ERR_MAX];
  int status = serve_body_parse(m->route, method, body, len, &b, err);
  if (status) return serve_reply_error(req, status < 0 ? 500 : status, "%s", err);
  if (m->route == SR_WORLDS && method == SERVE_POST) serve_build_handle(s, NULL, req, m, method, &b);
  else if (m->route == SR_WORLD && method == SERVE_DELETE) serve_build_handle(s, serve_world_find(s, m->world), req, m, method, &b);
  else if (m->route == SR_WORLDS) get_worlds(s, req);
  else if (m->route == SR_APPROVAL) post_approval(s, m->approval, &b, req);
  else world_route(s, req, m, method, &b);
  serve_body_free(&b);
}
