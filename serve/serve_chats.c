/* agora serve's chats (docs/serve.md): a world's chats listed, made, selected, branched, renamed and
 * deleted, their messages paged, snapshots exported and imported, messages posted and replies cancelled.
 * A loaded world's chats through its agora_world (the library records them for a world on NATS and
 * refuses what its other processes would not follow), stored ones through the database the worlds share. */
#include "serve/serve_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_DEFAULT 100  /* messages per page unless ?limit= */
#define PAGE_MAX 1000

static void get_chats(serve *s, const char *world, struct evhttp_request *req) {
  char *text = NULL;
  int rc = agora_db_chats(s->db, world, &text);
  if (rc) return serve_reply_lib(req, rc, world);
  cJSON *j = cJSON_CreateObject(), *rows = serve_lib_json(text);
  cJSON_AddItemToObject(j, "chats", rows ? rows : cJSON_CreateArray());
  serve_reply_json(req, 200, j);
}

/* Answers with the chat's row (status), or an error if it cannot be read. */
static void reply_chat(serve *s, const char *chat, int status, struct evhttp_request *req) {
  char *text = NULL;
  int rc = agora_db_chat_info(s->db, chat, &text);
  if (rc) return serve_reply_lib(req, rc, NULL);
  cJSON *j = serve_lib_json(text);
  if (!j) return serve_reply_error(req, 500, "out of memory");
  serve_reply_json(req, status, j);
}

/* 1 when chat is sw's current chat. */
static int is_current(serve_world *sw, const char *chat) {
  const char *cur = agora_chat_current(sw->w);
  return cur && !strcmp(cur, chat);
}

/* Makes chat current (replies in flight are cancelled first: they belong to the chat left); every page
 * showing the world hears of it. */
static int select_chat(serve_world *sw, const char *chat) {
  if (is_current(sw, chat)) return AGORA_OK;
  if (!agora_is_quiet(sw->w)) serve_world_cancel(sw);
  int rc = agora_chat_load(sw->w, chat);
  if (!rc) serve_world_chat_loaded(sw);
  return rc;
}

/* DELETE …/chats/{chat}: the world's current chat falls back to the most recent other one. */
static void delete_chat(serve_world *sw, const char *chat, struct evhttp_request *req) {
  if (is_current(sw, chat) && !agora_is_quiet(sw->w)) serve_world_cancel(sw);
  int rc = agora_chat_delete(sw->w, chat);
  if (rc) return serve_reply_lib(req, rc, agora_world_id(sw->w));
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "deleted", chat);
  const char *cur = agora_chat_current(sw->w);
  if (cur) cJSON_AddStringToObject(j, "current", cur);
  else cJSON_AddNullToObject(j, "current");
  serve_reply_json(req, 200, j);
}

static void chat_action(serve *s, serve_world *sw, const serve_match *m, int method, const serve_body *b,
                        struct evhttp_request *req) {
  char chat[AGORA_ID_MAX], id[AGORA_ID_MAX];
  const char *wid = agora_world_id(sw->w);
  int rc;
  if (serve_chat_of(s, m->world, m->chat, chat, NULL, req)) return;
  if (m->route == SR_CHAT_SELECT) {
    if ((rc = select_chat(sw, chat))) return serve_reply_lib(req, rc, wid);
    return reply_chat(s, chat, 200, req);
  }
  if (m->route == SR_CHAT_BRANCH) { /* issue 13: as `chats branch`; the new chat is not selected */
    if (is_current(sw, chat) && !agora_is_quiet(sw->w))
      return serve_reply_error(req, 409, "chat '%s' has replies in flight: branch it when they are in", m->chat);
    if ((rc = agora_chat_branch(sw->w, chat, b->at, id))) return serve_reply_lib(req, rc, wid);
    return reply_chat(s, id, 201, req);
  }
  if (method == SERVE_PATCH) {
    if (!is_current(sw, chat))
      return serve_reply_error(req, 409, "chat '%s' is not the current chat: select it first", m->chat);
    if ((rc = agora_chat_title(sw->w, b->title))) return serve_reply_lib(req, rc, wid);
    return reply_chat(s, chat, 200, req);
  }
  delete_chat(sw, chat, req);
}

/* ---- messages and snapshots ---- */

/* The page's messages (and steps) from libagora's JSON into j, those numbered before and after left out
 * (before 0: none). */
static void add_page(cJSON *j, cJSON *messages, cJSON *steps, uint64_t before) {
  for (cJSON *m = messages ? messages->child : NULL, *next; before && m; m = next) {
    next = m->next;
    const cJSON *seq = cJSON_GetObjectItemCaseSensitive(m, "seq");
    if (cJSON_IsNumber(seq) && (uint64_t)seq->valuedouble >= before)
      cJSON_Delete(cJSON_DetachItemViaPointer(messages, m));
  }
  for (cJSON *t = steps ? steps->child : NULL, *next; before && t; t = next) {
    next = t->next;
    const cJSON *after = cJSON_GetObjectItemCaseSensitive(t, "after_seq");
    if (cJSON_IsNumber(after) && (uint64_t)after->valuedouble >= before)
      cJSON_Delete(cJSON_DetachItemViaPointer(steps, t));
  }
  cJSON_AddItemToObject(j, "messages", messages ? messages : cJSON_CreateArray());
  if (steps) cJSON_AddItemToObject(j, "steps", steps);
}

/* The messages from number from on, at most limit, with the thread's steps when steps: into j. */
static int read_page(serve *s, const char *chat, uint64_t from, uint64_t limit, int steps, uint64_t before, cJSON *j) {
  char *text = NULL;
  if (!steps) {
    int rc = agora_db_messages(s->db, chat, from, (size_t)limit, &text);
    if (!rc) add_page(j, serve_lib_json(text), NULL, before);
    return rc;
  }
  int rc = agora_db_transcript_page(s->db, chat, from, (size_t)limit, &text);
  if (rc) return rc;
  cJSON *page = serve_lib_json(text);
  cJSON *messages = cJSON_DetachItemFromObjectCaseSensitive(page, "messages");
  cJSON *st = cJSON_DetachItemFromObjectCaseSensitive(page, "steps");
  cJSON_Delete(page);
  add_page(j, messages, st ? st : cJSON_CreateArray(), before);
  return AGORA_OK;
}

/* ?after=SEQ (messages after it, oldest first) or ?before=SEQ (the last limit before it), ?limit=N;
 * ?steps=1 adds the chat's stored thread steps among them (the page shows tool steps after a reload). */
static void get_messages(serve *s, const serve_match *m, struct evhttp_request *req) {
  char chat[AGORA_ID_MAX];
  cJSON *row = NULL;
  if (serve_chat_of(s, m->world, m->chat, chat, &row, req)) return;
  uint64_t after = 0, before = 0, limit = PAGE_DEFAULT, steps = 0;
  int has_after, has_before, has_limit, has_steps;
  char err[SERVE_ERR_MAX];
  int bad = serve_query_u64(m->query, "after", &after, &has_after, err) ||
            serve_query_u64(m->query, "before", &before, &has_before, err) ||
            serve_query_u64(m->query, "limit", &limit, &has_limit, err) ||
            serve_query_u64(m->query, "steps", &steps, &has_steps, err);
  const cJSON *count = cJSON_GetObjectItemCaseSensitive(row, "message_count");
  double messages = cJSON_IsNumber(count) ? count->valuedouble : 0;
  cJSON_Delete(row);
  if (bad) return serve_reply_error(req, 400, "%s", err);
  if (has_limit && (limit < 1 || limit > PAGE_MAX)) return serve_reply_error(req, 400, "limit: 1 to %d", PAGE_MAX);
  if (has_after && has_before) return serve_reply_error(req, 400, "give after or before, not both");
  if (steps > 1) return serve_reply_error(req, 400, "steps: 0 or 1");
  uint64_t from = after + 1;
  if (has_before) from = before > limit ? before - limit : 1;
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "chat", chat);
  cJSON_AddNumberToObject(j, "message_count", messages);
  int rc = read_page(s, chat, from, limit, (int)steps, has_before ? (before ? before : 1) : 0, j);
  if (rc) {
    cJSON_Delete(j);
    return serve_reply_lib(req, rc, m->world);
  }
  serve_reply_json(req, 200, j);
}

static void get_snapshot(serve *s, const serve_match *m, struct evhttp_request *req) {
  char chat[AGORA_ID_MAX], *text = NULL;
  if (serve_chat_of(s, m->world, m->chat, chat, NULL, req)) return;
  int rc = agora_db_chat_export(s->db, chat, &text);
  if (rc) return serve_reply_lib(req, rc, m->world);
  cJSON *snap = serve_lib_json(text);
  if (!snap) return serve_reply_error(req, 500, "out of memory");
  evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Disposition",
                    "attachment; filename=\"snapshot.json\"");
  serve_reply_json(req, 200, snap);
}

void serve_snapshot_post(serve *s, const char *body, size_t len, struct evhttp_request *req) {
  cJSON *snap = NULL;
  char err[SERVE_ERR_MAX], id[AGORA_ID_MAX];
  int status = serve_json_parse(body, len, &snap, err); /* one strict JSON document, else 400 */
  cJSON_Delete(snap);
  if (status) return serve_reply_error(req, status, "%s", err);
  char *text = malloc(len + 1);
  if (!text) return serve_reply_error(req, 500, "out of memory");
  memcpy(text, body, len);
  text[len] = '\0';
  int rc = agora_db_chat_import(s->db, text, "snapshot", id);
  free(text);
  if (rc) return serve_reply_lib(req, rc, NULL); /* invalid or newer: 422; storage: 500 */
  reply_chat(s, id, 201, req);
}

static void post_message(serve *s, serve_world *sw, const serve_body *b, struct evhttp_request *req) {
  const char *wid = agora_world_id(sw->w);
  char chat[AGORA_ID_MAX];
  uint64_t seq = 0;
  int rc;
  if (b->chat) {
    if (serve_chat_of(s, wid, b->chat, chat, NULL, req)) return;
    if ((rc = select_chat(sw, chat))) return serve_reply_lib(req, rc, wid);
  }
  if (!agora_chat_current(sw->w) && (rc = agora_chat_new(sw->w))) return serve_reply_lib(req, rc, wid);
  if ((rc = agora_publish_seq(sw->w, "human", b->text, &seq))) return serve_reply_lib(req, rc, wid);
  cJSON *j = cJSON_CreateObject();
  if (seq) cJSON_AddNumberToObject(j, "seq", (double)seq);
  else cJSON_AddNullToObject(j, "seq"); /* on NATS: known once the stream brings it back */
  cJSON_AddStringToObject(j, "chat", agora_chat_current(sw->w));
  serve_reply_json(req, 202, j);
}

/* POST …/cancel: the agents that were thinking, named in the reply; the cancelled event on the stream. */
static void post_cancel(serve_world *sw, struct evhttp_request *req) {
  char *text = NULL;
  cJSON *agents = !agora_agents(sw->w, &text) ? serve_lib_json(text) : NULL, *a;
  cJSON *j = cJSON_CreateObject(), *names = cJSON_AddArrayToObject(j, "cancelled");
  cJSON_ArrayForEach(a, agents) {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(a, "id");
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "thinking")) && cJSON_IsString(id))
      cJSON_AddItemToArray(names, cJSON_CreateString(id->valuestring));
  }
  cJSON_Delete(agents);
  serve_world_cancel(sw);
  serve_reply_json(req, 202, j);
}

/* POST …/chats: a new chat (an empty "New Chat" is reused); replies in flight belong to the chat left:
 * cancelled out loud, as a select does. */
static void post_chat(serve *s, serve_world *sw, struct evhttp_request *req) {
  if (!agora_is_quiet(sw->w)) serve_world_cancel(sw);
  int rc = agora_chat_new(sw->w);
  if (rc) return serve_reply_lib(req, rc, agora_world_id(sw->w));
  reply_chat(s, agora_chat_current(sw->w), 201, req);
}

void serve_chats_handle(serve *s, serve_world *sw, struct evhttp_request *req, const serve_match *m, int method,
                        const serve_body *b) {
  switch (m->route) {
  case SR_CHATS:
    if (sw && method == SERVE_POST) return post_chat(s, sw, req);
    return get_chats(s, m->world, req);
  case SR_CHAT_MESSAGES: return get_messages(s, m, req);
  case SR_CHAT_SNAPSHOT: return get_snapshot(s, m, req);
  default: break;
  }
  if (!sw) return serve_reply_error(req, 404, "no such route");
  switch (m->route) {
  case SR_CHAT:
  case SR_CHAT_SELECT:
  case SR_CHAT_BRANCH: return chat_action(s, sw, m, method, b, req);
  case SR_MESSAGES: return post_message(s, sw, b, req);
  case SR_CANCEL: return post_cancel(sw, req);
  default: return serve_reply_error(req, 404, "no such route");
  }
}
