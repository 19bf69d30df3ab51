/* The loopback LLM server's reading of a request (see llm_server_int.h): which provider's route it
 * came on, and the text, roles and credential its body and headers hold. */
#include "support/llm_server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void text_of(const cJSON *content, ag_buf *out) {
  if (cJSON_IsString(content)) {
    ag_buf_appends(out, content->valuestring);
    return;
  }
  const cJSON *part;
  cJSON_ArrayForEach(part, content) { /* Anthropic blocks, Gemini parts */
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(part, "text");
    if (cJSON_IsString(t)) ag_buf_appends(out, t->valuestring);
  }
}

/* Whether a message is a tool result: OpenAI/Ollama role "tool", an Anthropic tool_result block, a
 * Gemini functionResponse part. */
static int is_tool_result(const char *role, const cJSON *content) {
  if (!strcmp(role, "tool")) return 1;
  const cJSON *part, *parts = cJSON_IsArray(content) ? content : NULL;
  cJSON_ArrayForEach(part, parts) {
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(part, "type");
    if (cJSON_GetObjectItemCaseSensitive(part, "functionResponse") ||
        (cJSON_IsString(type) && !strcmp(type->valuestring, "tool_result")))
      return 1;
  }
  return 0;
}

static void read_messages(req_info *ri, const cJSON *msgs, const char *content_key, const char *user_role) {
  const cJSON *m;
  cJSON_ArrayForEach(m, msgs) {
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(m, content_key);
    const char *r = cJSON_IsString(role) ? role->valuestring : "";
    if (!strcmp(r, "system")) {
      text_of(content, &ri->system);
    } else if (!strcmp(r, user_role)) {
      /* A user message that only carries tool results keeps the last user text (and its directive). */
      ag_buf t;
      ag_buf_init(&t, SRV_BIG);
      text_of(content, &t);
      if (t.len || !is_tool_result(r, content)) {
        ag_buf_reset(&ri->last_user);
        ag_buf_appends(&ri->last_user, ag_buf_str(&t));
      }
      ag_buf_free(&t);
    }
    ri->last_is_result = is_tool_result(r, content);
    text_of(content, &ri->all_text);
  }
}

char *lsrv_header_value(const char *headers, const char *name) {
  size_t n = strlen(name);
  for (const char *p = headers; p && *p;) {
    const char *eol = strstr(p, "\r\n");
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    if (len > n && strncasecmp(p, name, n) == 0 && p[n] == ':') {
      const char *v = p + n + 1;
      while (*v == ' ') v++;
      return strndup(v, (size_t)(p + len - v));
    }
    p = eol ? eol + 2 : NULL;
  }
  return NULL;
}

wire_kind lsrv_route(const char *path, int *gemini_stream) {
  if (strstr(path, ":streamGenerateContent")) {
    *gemini_stream = 1;
    return W_GEMINI;
  }
  if (strstr(path, ":generateContent")) return W_GEMINI;
  size_t n = strlen(path);
  const char *q = strchr(path, '?');
  if (q) n = (size_t)(q - path);
  if (n >= 17 && !strncmp(path + n - 17, "/chat/completions", 17)) return W_OPENAI;
  if (n >= 12 && !strncmp(path + n - 12, "/v1/messages", 12)) return W_ANTHROPIC;
  if (n >= 9 && !strncmp(path + n - 9, "/api/chat", 9)) return W_OLLAMA;
  return W_NONE;
}

int lsrv_parse_request(req_info *ri, const char *path, const char *headers, const cJSON *root) {
  int gstream = 0;
  ri->kind = lsrv_route(path, &gstream);
  ri->path = path;
  const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
  const cJSON *stream = cJSON_GetObjectItemCaseSensitive(root, "stream");
  ri->model = strdup(cJSON_IsString(model) ? model->valuestring : "mock-model");
  char *auth = NULL;
  switch (ri->kind) {
  case W_OPENAI:
    ri->stream = cJSON_IsTrue(stream);
    ri->include_usage = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(root, "stream_options"), "include_usage"));
    read_messages(ri, cJSON_GetObjectItemCaseSensitive(root, "messages"), "content", "user");
    auth = lsrv_header_value(headers, "authorization");
    break;
  case W_OLLAMA:
    ri->stream = !cJSON_IsFalse(stream);
    read_messages(ri, cJSON_GetObjectItemCaseSensitive(root, "messages"), "content", "user");
    auth = lsrv_header_value(headers, "authorization");
    break;
  case W_ANTHROPIC:
    ri->stream = cJSON_IsTrue(stream);
    text_of(cJSON_GetObjectItemCaseSensitive(root, "system"), &ri->system);
    read_messages(ri, cJSON_GetObjectItemCaseSensitive(root, "messages"), "content", "user");
    auth = lsrv_header_value(headers, "x-api-key");
    break;
  case W_GEMINI: {
    ri->stream = gstream;
    const cJSON *si = cJSON_GetObjectItemCaseSensitive(root, "systemInstruction");
    text_of(cJSON_GetObjectItemCaseSensitive(si, "parts"), &ri->system);
    read_messages(ri, cJSON_GetObjectItemCaseSensitive(root, "contents"), "parts", "user");
    auth = lsrv_header_value(headers, "x-goog-api-key");
    const char *m = strstr(path, "/models/");
    if (m) {
      m += 8;
      const char *c = strchr(m, ':');
      free(ri->model);
      ri->model = strndup(m, c ? (size_t)(c - m) : strlen(m));
    }
    break;
  }
  default: return -1;
  }
  if (auth && !strncmp(auth, "Bearer ", 7)) memmove(auth, auth + 7, strlen(auth + 7) + 1);
  ri->key = auth ? auth : strdup("");
  return 0;
}

void lsrv_req_info_free(req_info *ri) {
  free(ri->model);
  free(ri->key);
  ag_buf_free(&ri->system);
  ag_buf_free(&ri->last_user);
  ag_buf_free(&ri->all_text);
}
