/* libagora's answers in agora serve's terms: its JSON text parsed, its failures as HTTP error replies said
 * in the API's words (the library names its own functions; a person on the API knows routes), and a
 * request's chat looked up in the database the worlds share. */
#include "serve/serve_int.h"

#include <stdio.h>
#include <string.h>

cJSON *serve_lib_json(char *text) {
  cJSON *j = text ? cJSON_Parse(text) : NULL;
  agora_free(text);
  return j;
}

/* The library's advice (left) said as the API does it (right; %s: the world's id). */
static const struct {
  const char *lib, *http;
} advice[] = {
  {"agora_cancel", "POST /api/worlds/%s/cancel"},
  {"agora_agent_change changes it", "PATCH it instead"},
};

/* msg with its leading "agora_name: " left out and the advice above replaced, into out (cap bytes). */
static void http_words(const char *msg, const char *world, char *out, size_t cap) {
  size_t n = strspn(msg, "abcdefghijklmnopqrstuvwxyz_");
  if (!strncmp(msg, "agora_", 6) && !strncmp(msg + n, ": ", 2)) msg += n + 2;
  size_t len = 0;
  out[0] = '\0';
  while (*msg && len + 1 < cap) {
    size_t i = 0, k = sizeof advice / sizeof *advice;
    while (i < k && strncmp(msg, advice[i].lib, strlen(advice[i].lib))) i++;
    if (i == k) {
      out[len++] = *msg++;
      out[len] = '\0';
      continue;
    }
    int w = snprintf(out + len, cap - len, advice[i].http, world ? world : "{id}");
    len = w < 0 ? len : len + (size_t)w < cap ? len + (size_t)w : cap - 1;
    msg += strlen(advice[i].lib);
  }
}

void serve_reply_lib(struct evhttp_request *req, int rc, const char *world) {
  char msg[SERVE_ERR_MAX];
  const char *m = agora_errmsg();
  http_words(m[0] ? m : agora_strerror(rc), world, msg, sizeof msg);
  serve_reply_error(req, serve_status_of(rc), "%s", msg);
}

int serve_chat_of(serve *s, const char *world, const char *chat, char id[AGORA_ID_MAX], cJSON **row,
                  struct evhttp_request *req) {
  char *text = NULL;
  int rc = agora_db_chat_info(s->db, chat, &text);
  if (rc) return serve_reply_lib(req, rc, world), rc;
  cJSON *j = serve_lib_json(text);
  const cJSON *cid = cJSON_GetObjectItemCaseSensitive(j, "id");
  const cJSON *cworld = cJSON_GetObjectItemCaseSensitive(j, "world");
  if (!cJSON_IsString(cid) || !cJSON_IsString(cworld)) rc = AGORA_ERR_NOMEM;
  else if (strcmp(cworld->valuestring, world)) rc = AGORA_ERR_NOT_FOUND;
  if (rc) {
    cJSON_Delete(j);
    if (rc == AGORA_ERR_NOMEM) return serve_reply_error(req, 500, "out of memory"), rc;
    return serve_reply_error(req, 404, "no chat '%s' in world '%s'", chat, world), rc;
  }
  snprintf(id, AGORA_ID_MAX, "%s", cid->valuestring);
  if (row) *row = j;
  else cJSON_Delete(j);
  return AGORA_OK;
}
