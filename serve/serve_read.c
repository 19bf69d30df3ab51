/* agora serve's read-only views of what is stored (docs/serve.md): a world's settings and a chat as
 * Markdown (the documents `worlds export` and `chats export --format md` print: chat/markdown.c), a
 * chat's history searched on the server, and its token usage per agent (chat/usage.c, as `chats show`
 * prints it). They read the database only: no world is loaded for them. */
#include "serve/serve_int.h"

#include "chat/markdown.h"
#include "chat/snapshot.h"
#include "chat/transcript.h"
#include "chat/usage.h"
#include "runtime/output.h"

#include <event2/buffer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEARCH_DEFAULT 50 /* matches per reply unless ?limit= */
#define SEARCH_MAX 1000

static void reply_err(struct evhttp_request *req, int rc, const ag_errmsg *em) {
  serve_reply_error(req, serve_status_of(rc), "%s", em->text[0] ? em->text : ag_strerror(rc));
}

/* Sends doc (taken) as a Markdown download named name. */
static void reply_markdown(struct evhttp_request *req, char *doc, const char *name) {
  struct evbuffer *b = evbuffer_new();
  if (!doc || !b) {
    free(doc);
    if (b) evbuffer_free(b);
    return serve_reply_error(req, 500, "out of memory");
  }
  char disposition[SERVE_ID_MAX + 64];
  snprintf(disposition, sizeof disposition, "attachment; filename=\"%s.md\"", name);
  struct evkeyvalq *hd = evhttp_request_get_output_headers(req);
  evhttp_add_header(hd, "Content-Type", "text/markdown; charset=utf-8");
  evhttp_add_header(hd, "Content-Disposition", disposition);
  evbuffer_add(b, doc, strlen(doc));
  free(doc);
  evhttp_send_reply(req, 200, "OK", b);
  evbuffer_free(b);
}

/* ?format=md is required: the JSON forms are the world's detail and the chat's snapshot. */
static int want_markdown(const serve_match *m, struct evhttp_request *req) {
  char format[SERVE_QUERY_MAX], err[SERVE_ERR_MAX];
  int has;
  if (serve_query_str(m->query, "format", format, &has, err)) {
    serve_reply_error(req, 400, "%s", err);
    return 0;
  }
  if (!has || strcmp(format, "md")) {
    serve_reply_error(req, 400, "format: expected md (the JSON is %s)",
                      m->route == SR_CHAT_EXPORT ? "GET …/chats/{chat}/snapshot" : "GET /api/worlds/{id}");
    return 0;
  }
  return 1;
}

static void world_export(serve *s, const serve_match *m, struct evhttp_request *req) {
  if (!want_markdown(m, req)) return;
  char *text = NULL;
  ag_errmsg em = {""};
  int rc = chat_world_settings(s->st, m->world, &text, &em);
  if (rc) return reply_err(req, rc, &em);
  cJSON *w = cJSON_Parse(text);
  free(text);
  if (!w) return serve_reply_error(req, 500, "world '%s': its stored settings do not parse", m->world);
  char *doc = markdown_world(w);
  cJSON_Delete(w);
  reply_markdown(req, doc, m->world);
}

int serve_read_chat_of(serve *s, const serve_match *m, chat_info *c, struct evhttp_request *req) {
  ag_errmsg em = {""};
  int rc = chat_info_get(s->st, m->chat, c, &em);
  if (!rc && strcmp(c->world_id, m->world))
    rc = ag_fail(&em, AG_ERR_NOT_FOUND, "no chat '%s' in world '%s'", m->chat, m->world);
  if (rc) reply_err(req, rc, &em);
  return rc;
}

static void chat_export(serve *s, const serve_match *m, struct evhttp_request *req) {
  chat_info c;
  if (!want_markdown(m, req) || serve_read_chat_of(s, m, &c, req)) return;
  cJSON *snap = NULL;
  ag_errmsg em = {""};
  int rc = chat_snapshot_export(s->st, c.id, &snap, &em);
  if (rc) return reply_err(req, rc, &em);
  char *doc = markdown_chat(snap);
  cJSON_Delete(snap);
  reply_markdown(req, doc, c.id);
}

/* ---- search ---- */

/* 1 when needle (n bytes, ASCII lower case) is in hay, ASCII letters compared without case (other
 * bytes, UTF-8 included, as they are). */
static int contains(const char *hay, const char *needle, size_t n) {
  for (; *hay; hay++) {
    size_t i = 0;
    while (i < n && hay[i] && (hay[i] >= 'A' && hay[i] <= 'Z' ? hay[i] + 32 : hay[i]) == needle[i]) i++;
    if (i == n) return 1;
  }
  return 0;
}

typedef struct search {
  const char *world, *chat, *needle;
  size_t n, left, scanned;
  cJSON *arr;
  int more; /* a match past the limit exists */
} search;

static int search_row(const chat_entry *e, void *arg) {
  search *q = arg;
  if (!e->msg) return 0;
  q->scanned++;
  if (!contains(e->msg->text, q->needle, q->n) && !contains(e->msg->sender, q->needle, q->n)) return 0;
  if (!q->left) return q->more = 1, CHAT_STOP;
  cJSON *j = output_message_json(q->world, q->chat, e->msg);
  if (!j) return AG_ERR_NOMEM;
  cJSON_AddItemToArray(q->arr, j);
  q->left--;
  return 0;
}

/* ?q=TEXT (1 to 255 bytes) [&after=SEQ] [&limit=N]: the messages whose text or sender holds TEXT, oldest
 * first; "more" says a next page exists (ask again with after= the last seq). */
static void chat_search(serve *s, const serve_match *m, struct evhttp_request *req) {
  chat_info c;
  if (serve_read_chat_of(s, m, &c, req)) return;
  char q[SERVE_QUERY_MAX], err[SERVE_ERR_MAX];
  uint64_t after = 0, limit = SEARCH_DEFAULT;
  int has_q, has_after, has_limit;
  if (serve_query_str(m->query, "q", q, &has_q, err) || serve_query_u64(m->query, "after", &after, &has_after, err) ||
      serve_query_u64(m->query, "limit", &limit, &has_limit, err))
    return serve_reply_error(req, 400, "%s", err);
  if (!has_q || !q[0]) return serve_reply_error(req, 400, "q: the text to search for is missing");
  if (limit < 1 || limit > SEARCH_MAX) return serve_reply_error(req, 400, "limit: 1 to %d", SEARCH_MAX);
  for (char *p = q; *p; p++)
    if (*p >= 'A' && *p <= 'Z') *p += 32;
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "chat", c.id);
  cJSON_AddStringToObject(j, "q", q);
  search sq = {.world = c.world_id, .chat = c.id, .needle = q, .n = strlen(q), .left = (size_t)limit,
               .arr = cJSON_AddArrayToObject(j, "matches")};
  ag_errmsg em = {""};
  int rc = chat_messages_each(s->st, c.id, after + 1, search_row, &sq, &em);
  if (rc) {
    cJSON_Delete(j);
    return reply_err(req, rc, &em);
  }
  cJSON_AddBoolToObject(j, "more", sq.more);
  serve_reply_json(req, 200, j);
}

/* ---- usage ---- */

static void chat_usage_reply(serve *s, const serve_match *m, struct evhttp_request *req) {
  chat_info c;
  if (serve_read_chat_of(s, m, &c, req)) return;
  chat_usage u;
  ag_errmsg em = {""};
  int rc = chat_usage_get(s->st, c.id, &u, &em);
  if (rc) return reply_err(req, rc, &em);
  cJSON *j = cJSON_CreateObject(), *agents = cJSON_AddArrayToObject(j, "agents");
  cJSON_AddStringToObject(j, "chat", c.id);
  for (size_t i = 0; i < u.n; i++) {
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "agent", u.rows[i].agent);
    cJSON_AddNumberToObject(a, "calls", (double)u.rows[i].calls);
    cJSON_AddNumberToObject(a, "input_tokens", u.rows[i].in);
    cJSON_AddNumberToObject(a, "output_tokens", u.rows[i].out);
    cJSON_AddItemToArray(agents, a);
  }
  chat_usage_free(&u);
  serve_reply_json(req, 200, j);
}

void serve_read_handle(serve *s, struct evhttp_request *req, const serve_match *m) {
  if (m->route == SR_WORLD_EXPORT) world_export(s, m, req);
  else if (m->route == SR_CHAT_EXPORT) chat_export(s, m, req);
  else if (m->route == SR_CHAT_USAGE) chat_usage_reply(s, m, req);
  else chat_search(s, m, req);
}
