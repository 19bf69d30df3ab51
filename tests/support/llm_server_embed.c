/* The loopback server's embeddings routes (see llm_server_embed.h). */
#include "support/llm_server_embed.h"

#include <stdlib.h>
#include <string.h>

typedef enum { E_NONE, E_OPENAI, E_OLLAMA, E_GEMINI } embed_kind;

static embed_kind embed_route(const char *path) {
  size_t n = strcspn(path, "?");
  if (n >= 11 && !strncmp(path + n - 11, "/embeddings", 11)) return E_OPENAI;
  if (n >= 10 && !strncmp(path + n - 10, "/api/embed", 10)) return E_OLLAMA;
  if (strstr(path, ":batchEmbedContents")) return E_GEMINI;
  return E_NONE;
}

void llm_server_embed_vector(const char *text, float out[LLM_SERVER_EMBED_DIM]) {
  out[0] = (float)strlen(text);
  out[1] = 1;
  out[2] = 0;
  for (const char *p = text; *p; p++) out[2] += *p == 'e';
}

/* The texts of the request, in order, as borrowed strings into root; NULL entries for what is not one. */
static const char *text_at(embed_kind k, const cJSON *root, int i) {
  if (k == E_GEMINI) {
    const cJSON *r = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "requests"), i);
    const cJSON *parts = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "content"), "parts");
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(parts, 0), "text"));
  }
  return cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "input"), i));
}

static int count_of(embed_kind k, const cJSON *root) {
  return cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, k == E_GEMINI ? "requests" : "input"));
}

static cJSON *error_body(embed_kind k) {
  cJSON *e = cJSON_CreateObject();
  if (k == E_OLLAMA) {
    cJSON_AddStringToObject(e, "error", "embedding failed");
    return e;
  }
  cJSON *o = cJSON_AddObjectToObject(e, "error");
  cJSON_AddStringToObject(o, "message", "embedding failed");
  if (k == E_GEMINI) cJSON_AddStringToObject(o, "status", "INTERNAL");
  else cJSON_AddStringToObject(o, "type", "server_error");
  return e;
}

static cJSON *vector_json(const char *text) {
  float v[LLM_SERVER_EMBED_DIM];
  llm_server_embed_vector(text, v);
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < LLM_SERVER_EMBED_DIM; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
  return a;
}

static cJSON *vectors_body(embed_kind k, const cJSON *root, int n) {
  cJSON *r = cJSON_CreateObject();
  cJSON *arr = cJSON_AddArrayToObject(r, k == E_OPENAI ? "data" : "embeddings");
  for (int j = 0; j < n; j++) {
    int i = k == E_OPENAI ? n - 1 - j : j;
    cJSON *v = vector_json(text_at(k, root, i));
    if (k == E_OLLAMA) {
      cJSON_AddItemToArray(arr, v);
      continue;
    }
    cJSON *o = cJSON_CreateObject();
    if (k == E_OPENAI) cJSON_AddNumberToObject(o, "index", i);
    cJSON_AddItemToObject(o, k == E_OPENAI ? "embedding" : "values", v);
    cJSON_AddItemToArray(arr, o);
  }
  if (k == E_OPENAI) cJSON_AddStringToObject(r, "object", "list");
  return r;
}

int llm_server_embed_reply(const char *path, const cJSON *root, long *status, char **reply) {
  embed_kind k = embed_route(path);
  if (k == E_NONE) return 0;
  int n = root ? count_of(k, root) : 0, bad = !n, fail = 0;
  for (int i = 0; i < n; i++) {
    const char *t = text_at(k, root, i);
    bad |= !t;
    fail |= t && strstr(t, "fail-embed") != NULL;
  }
  cJSON *out = bad || fail ? error_body(k) : vectors_body(k, root, n);
  *status = bad ? 400 : fail ? 500 : 200;
  *reply = cJSON_PrintUnformatted(out);
  cJSON_Delete(out);
  return 1;
}
