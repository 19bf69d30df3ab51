/* The OpenAI chat completions wire format, also spoken by most OpenAI-compatible servers (Ollama's
 * /v1, llama.cpp, vLLM, OpenRouter, ...): POST {base}/chat/completions with a Bearer key; streamed
 * replies are SSE "data:" chunks carrying choices[0].delta.content and end with "data: [DONE]". */
#include "llm/wire.h"

#include <cjson/cJSON.h>
#include <string.h>

static int openai_build(const llm_config *cfg, const llm_request *req, ag_buf *url, char **body) {
  int rc = llm_wire_url(url, cfg, llm_openai_wire.default_base_url, "/chat/completions");
  if (rc) return rc;
  cJSON *root = cJSON_CreateObject();
  cJSON *msgs = cJSON_AddArrayToObject(root, "messages");
  int ok = cJSON_AddStringToObject(root, "model", cfg->model ? cfg->model : llm_openai_wire.default_model) &&
           msgs;
  for (size_t i = 0; ok && i < req->n_messages; i++) {
    cJSON *m = cJSON_CreateObject();
    ok = cJSON_AddItemToArray(msgs, m) && cJSON_AddStringToObject(m, "role", req->messages[i].role) &&
         cJSON_AddStringToObject(m, "content", req->messages[i].content);
  }
  if (ok && cfg->has_temperature) ok = cJSON_AddNumberToObject(root, "temperature", cfg->temperature) != NULL;
  if (ok && cfg->max_tokens > 0) ok = cJSON_AddNumberToObject(root, "max_tokens", cfg->max_tokens) != NULL;
  if (ok) ok = cJSON_AddBoolToObject(root, "stream", cfg->stream ? 1 : 0) != NULL;
  if (ok && cfg->stream) {
    cJSON *so = cJSON_AddObjectToObject(root, "stream_options");
    ok = so && cJSON_AddTrueToObject(so, "include_usage");
  }
  if (!ok) {
    cJSON_Delete(root);
    return AG_ERR_NOMEM;
  }
  return llm_wire_body(root, body);
}

static void read_usage(const cJSON *root, llm_wire_out *out) {
  const cJSON *u = cJSON_GetObjectItemCaseSensitive(root, "usage");
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(u, "prompt_tokens");
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(u, "completion_tokens");
  if (cJSON_IsNumber(in)) out->input_tokens = (long)in->valuedouble;
  if (cJSON_IsNumber(o)) out->output_tokens = (long)o->valuedouble;
}

/* Reads choices[0].<field>.content and finish_reason; tool calls carry no text and wait for later. */
static int read_choice(const cJSON *root, const char *field, llm_wire_out *out) {
  const cJSON *choice = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "choices"), 0);
  if (!choice) return AG_OK; /* the usage chunk has no choices */
  const char *text = llm_wire_str(cJSON_GetObjectItemCaseSensitive(choice, field), "content");
  if (llm_wire_str(choice, "finish_reason")) out->done = 1;
  if (text && text[0]) return out->text(out->ctx, text, strlen(text));
  return AG_OK;
}

static int openai_stream_event(const char *event, const char *data, size_t len, llm_wire_out *out) {
  (void)event;
  if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
    out->done = 1;
    return AG_OK;
  }
  cJSON *root;
  int rc = llm_wire_json(data, len, &root, out->err);
  if (rc) return rc;
  if (llm_wire_error_object(root, out->err)) rc = AG_ERR_LLM;
  else {
    read_usage(root, out);
    /* A finish_reason completes the reply even from servers that never send [DONE]; the usage
     * chunk may still follow. */
    rc = read_choice(root, "delta", out);
  }
  cJSON_Delete(root);
  return rc;
}

static int openai_parse_body(const char *body, size_t len, llm_wire_out *out) {
  cJSON *root;
  int rc = llm_wire_json(body, len, &root, out->err);
  if (rc) return rc;
  if (llm_wire_error_object(root, out->err)) rc = AG_ERR_LLM;
  else {
    read_usage(root, out);
    rc = read_choice(root, "message", out);
    out->done = 1;
  }
  cJSON_Delete(root);
  return rc;
}

const llm_wire llm_openai_wire = {
    .kind = LLM_OPENAI,
    .default_base_url = "https://api.openai.com/v1",
    .default_model = "gpt-4o-mini",
    .needs_key = 1,
    .key_header = "Authorization: Bearer ",
    .extra_header = NULL,
    .framing = LLM_STREAM_SSE,
    .eof_is_done = 0,
    .build = openai_build,
    .stream_event = openai_stream_event,
    .parse_body = openai_parse_body,
};
