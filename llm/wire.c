/* Helpers the four wire formats share: URLs, JSON parsing, and reading the error objects every
 * provider shapes a little differently. */
#include "llm/wire.h"

#include "common/jsonnum.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const llm_wire *llm_wire_for(llm_provider_kind kind) {
  switch (kind) {
  case LLM_OPENAI: return &llm_openai_wire;
  case LLM_ANTHROPIC: return &llm_anthropic_wire;
  case LLM_GEMINI: return &llm_gemini_wire;
  case LLM_OLLAMA: return &llm_ollama_wire;
  default: return NULL;
  }
}

int llm_wire_url(ag_buf *url, const llm_config *cfg, const char *dflt, const char *fmt, ...) {
  const char *base = cfg->base_url && cfg->base_url[0] ? cfg->base_url : dflt;
  size_t n = strlen(base);
  while (n && base[n - 1] == '/') n--;
  int rc = ag_buf_append(url, base, n);
  if (rc) return rc;
  va_list ap;
  va_start(ap, fmt);
  char tail[1024];
  int k = vsnprintf(tail, sizeof tail, fmt, ap);
  va_end(ap);
  if (k < 0 || (size_t)k >= sizeof tail) return AG_ERR_INVALID;
  return ag_buf_append(url, tail, (size_t)k);
}

const char *llm_wire_key_env(const llm_config *cfg, const llm_wire *w, int *required) {
  int no_key = cfg->key_withheld || (cfg->api_key_env && !cfg->api_key_env[0]);
  int named = !no_key && cfg->api_key_env && cfg->api_key_env[0];
  int own_url = cfg->base_url && cfg->base_url[0];
  *required = named || (!no_key && !own_url && w->needs_key);
  return no_key ? NULL : named ? cfg->api_key_env : llm_default_key_env(cfg->provider);
}

long llm_wire_index(const cJSON *ix, long dflt) {
  int64_t n;
  return ag_json_int(ix, 0, INT32_MAX, &n) ? dflt : (long)n;
}

int llm_wire_json(const char *data, size_t len, cJSON **out, llm_error_info *err) {
  /* One value and nothing after it but white space: a reply followed by junk (a second object, an
   * HTML tail, NDJSON lines sent to a whole-reply request) is not taken for its first part. */
  const char *end = NULL;
  *out = cJSON_ParseWithLengthOpts(data, len, &end, 0);
  while (*out && end < data + len && (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')) end++;
  if (*out && end < data + len && *end) {
    cJSON_Delete(*out);
    *out = NULL;
  }
  if (*out) return AG_OK;
  snprintf(err->type, sizeof err->type, "malformed");
  snprintf(err->message, sizeof err->message, "malformed JSON in the reply");
  return AG_ERR_INVALID;
}

const char *llm_wire_str(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Copies s into dst, replacing control characters so a message stays on one line. */
static void copy_clean(char *dst, size_t cap, const char *s, size_t len) {
  size_t j = 0;
  for (size_t i = 0; i < len && j + 1 < cap; i++) {
    unsigned char c = (unsigned char)s[i];
    dst[j++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
  }
  dst[j] = '\0';
}

int llm_wire_error_object(const cJSON *root, llm_error_info *err) {
  if (cJSON_IsArray(root)) root = cJSON_GetArrayItem(root, 0); /* Gemini wraps errors in an array */
  if (!cJSON_IsObject(root)) return 0;
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
  if (cJSON_IsString(e)) { /* Ollama */
    err->kind = llm_error_classify(NULL, NULL, e->valuestring);
    snprintf(err->type, sizeof err->type, "%s", err->kind == LLM_ERROR_CONTEXT_LENGTH ? "context_length_exceeded" : "");
    copy_clean(err->message, sizeof err->message, e->valuestring, strlen(e->valuestring));
    return 1;
  }
  if (!cJSON_IsObject(e)) return 0;
  /* OpenAI: type and code; Anthropic: type; Gemini: status (and a numeric code). */
  const char *type = llm_wire_str(e, "type");
  const char *code = llm_wire_str(e, "code");
  const char *status = llm_wire_str(e, "status");
  const char *msg = llm_wire_str(e, "message");
  const char *t = type && type[0] ? type : status && status[0] ? status : code ? code : "";
  if (code && strcmp(code, "insufficient_quota") == 0) t = code;
  /* One name for an overflowing prompt whatever the provider calls it: the agent shrinks and retries. */
  err->kind = llm_error_classify(type && type[0] ? type : status, code, msg);
  if (err->kind == LLM_ERROR_CONTEXT_LENGTH) t = "context_length_exceeded";
  copy_clean(err->type, sizeof err->type, t, strlen(t));
  if (msg) copy_clean(err->message, sizeof err->message, msg, strlen(msg));
  else snprintf(err->message, sizeof err->message, "%s", err->type[0] ? err->type : "error");
  return 1;
}

void llm_wire_error_body(const char *body, size_t len, llm_error_info *err) {
  cJSON *root = cJSON_ParseWithLength(body, len);
  int found = root && llm_wire_error_object(root, err);
  cJSON_Delete(root);
  if (found) return;
  err->kind = LLM_ERROR_OTHER;
  err->type[0] = '\0';
  /* Not a provider error: keep the start of the body (a proxy's page says what went wrong). */
  copy_clean(err->message, sizeof err->message, body, len < 200 ? len : 200);
}

void llm_wire_usage(const cJSON *obj, const char *in_key, const char *out_key, llm_wire_out *out) {
  int64_t n; /* whole, finite, in range: anything else is no count */
  if (!ag_json_int(cJSON_GetObjectItemCaseSensitive(obj, in_key), 0, INT32_MAX, &n)) out->input_tokens = (long)n;
  if (!ag_json_int(cJSON_GetObjectItemCaseSensitive(obj, out_key), 0, INT32_MAX, &n)) out->output_tokens = (long)n;
}

int llm_wire_body(cJSON *root, char **body) {
  *body = root ? cJSON_PrintUnformatted(root) : NULL;
  cJSON_Delete(root);
  return *body ? AG_OK : AG_ERR_NOMEM;
}
