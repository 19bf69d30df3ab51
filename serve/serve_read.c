/* agora serve's read-only views of what is stored (docs/serve.md): a world's settings and a chat as
 * Markdown (the documents `worlds export` and `chats export --format md` print: agora_world_markdown,
 * agora_snapshot_markdown), a chat's history searched on the server, and its token usage per agent
 * (agora_db_usage, as `chats show` prints it). They read the database only: no world is loaded for them. */
#include "serve/serve_int.h"

#include <event2/buffer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEARCH_DEFAULT 50 /* matches per reply unless ?limit= */
#define SEARCH_MAX 1000

/* Sends doc (taken: agora_free) as a Markdown download named name. */
static void reply_markdown(struct evhttp_request *req, char *doc, const char *name) {
  struct evbuffer *b = evbuffer_new();
  if (!doc || !b) {
    agora_free(doc);
    if (b) evbuffer_free(b);
    return serve_reply_error(req, 500, "out of memory");
  }
  char disposition[SERVE_ID_MAX + 64];
  snprintf(disposition, sizeof disposition, "attachment; filename=\"%s.md\"", name);
  struct evkeyvalq *hd = evhttp_request_get_output_headers(req);
  evhttp_add_header(hd, "Content-Type", "text/markdown; charset=utf-8");
  evhttp_add_header(hd, "Content-Disposition", disposition);
  evbuffer_add(b, doc, strlen(doc));
  agora_free(doc);
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
  char *text = NULL, *doc = NULL;
  int rc = agora_db_world(s->db, m->world, &text);
  cJSON *w = rc ? NULL : serve_lib_json(text);
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(w, "id");
  if (rc == AGORA_ERR_INVALID || (!rc && (!cJSON_IsString(id) || strcmp(id->valuestring, m->world)))) {
    cJSON_Delete(w);
    return serve_reply_error(req, 404, "no world '%s' in the database", m->world);
  }
  if (rc) return serve_reply_lib(req, rc, m->world);
  char *settings = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(w, "settings"));
  cJSON_Delete(w);
  rc = settings ? agora_world_markdown(settings, &doc) : AGORA_ERR_NOMEM;
  cJSON_free(settings);
  if (rc) return serve_reply_lib(req, rc, m->world);
  reply_markdown(req, doc, m->world);
}

static void chat_export(serve *s, const serve_match *m, struct evhttp_request *req) {
  char chat[AGORA_ID_MAX], *snap = NULL, *doc = NULL;
  if (!want_markdown(m, req) || serve_chat_of(s, m->world, m->chat, chat, NULL, req)) return;
  int rc = agora_db_chat_export(s->db, chat, &snap);
  if (!rc) rc = agora_snapshot_markdown(snap, &doc);
  agora_free(snap);
  if (rc) return serve_reply_lib(req, rc, m->world);
  reply_markdown(req, doc, chat);
}

/* ---- search ---- */

/* ?q=TEXT (1 to 255 bytes) [&after=SEQ] [&limit=N]: the messages whose text or sender holds TEXT, oldest
 * first; "more" says a next page exists (ask again with after= the last seq). One pass over the chat on
 * the database's side (agora_db_search). */
static void chat_search(serve *s, const serve_match *m, struct evhttp_request *req) {
  char chat[AGORA_ID_MAX], q[SERVE_QUERY_MAX], err[SERVE_ERR_MAX], *text = NULL;
  uint64_t after = 0, limit = SEARCH_DEFAULT;
  int has_q, has_after, has_limit;
  if (serve_chat_of(s, m->world, m->chat, chat, NULL, req)) return;
  if (serve_query_str(m->query, "q", q, &has_q, err) || serve_query_u64(m->query, "after", &after, &has_after, err) ||
      serve_query_u64(m->query, "limit", &limit, &has_limit, err))
    return serve_reply_error(req, 400, "%s", err);
  if (!has_q || !q[0]) return serve_reply_error(req, 400, "q: the text to search for is missing");
  if (limit < 1 || limit > SEARCH_MAX) return serve_reply_error(req, 400, "limit: 1 to %d", SEARCH_MAX);
  for (char *p = q; *p; p++)
    if (*p >= 'A' && *p <= 'Z') *p += 32;
  int rc = agora_db_search(s->db, chat, q, after, (size_t)limit, &text);
  if (rc) return serve_reply_lib(req, rc, m->world);
  cJSON *found = serve_lib_json(text);
  if (!found) return serve_reply_error(req, 500, "out of memory");
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "chat", chat);
  cJSON_AddStringToObject(j, "q", q);
  cJSON_AddItemToObject(j, "matches", cJSON_DetachItemFromObjectCaseSensitive(found, "matches"));
  cJSON_AddItemToObject(j, "more", cJSON_DetachItemFromObjectCaseSensitive(found, "more"));
  cJSON_Delete(found);
  serve_reply_json(req, 200, j);
}

/* ---- usage ---- */

static void chat_usage_reply(serve *s, const serve_match *m, struct evhttp_request *req) {
  char chat[AGORA_ID_MAX], *text = NULL;
  if (serve_chat_of(s, m->world, m->chat, chat, NULL, req)) return;
  int rc = agora_db_usage(s->db, chat, &text);
  if (rc) return serve_reply_lib(req, rc, m->world);
  cJSON *j = cJSON_CreateObject(), *rows = serve_lib_json(text);
  cJSON_AddStringToObject(j, "chat", chat);
  cJSON_AddItemToObject(j, "agents", rows ? rows : cJSON_CreateArray());
  serve_reply_json(req, 200, j);
}

void serve_read_handle(serve *s, struct evhttp_request *req, const serve_match *m) {
  if (m->route == SR_WORLD_EXPORT) world_export(s, m, req);
  else if (m->route == SR_CHAT_EXPORT) chat_export(s, m, req);
  else if (m->route == SR_CHAT_USAGE) chat_usage_reply(s, m, req);
  else chat_search(s, m, req);
}
