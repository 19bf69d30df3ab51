/* Ollama's native chat API: POST {base}/api/chat; a streamed reply is NDJSON, one
 * {"message":{"content":...},"done":false} object per line until "done":true. No key by default (a
 * key named by api_key_env is sent as a Bearer token, for an Ollama behind a proxy). */
#include "llm/wire.h"

#include <cjson/cJSON.h>
#include <string.h>

static int ollama_build(const llm_config *cfg, const llm_request *req, ag_buf *url, char **body) {
  int rc = llm_wire_url(url, cfg, llm_ollama_wire.default_base_url, "/api/chat");
  if (rc) return rc;
  cJSON *root = cJSON_CreateObject();
  cJSON *msgs = cJSON_AddArrayToObject(root, "messages");
  int ok = cJSON_AddStringToObject(root, "model", cfg->model ? cfg->model : llm_ollama_wire.default_model) &&
           msgs;
  for (size_t i = 0; ok && i < req->n_messages; i++) {
    cJSON *m = cJSON_CreateObject();
    ok = cJSON_AddItemToArray(msgs, m) && cJSON_AddStringToObject(m, "role", req->messages[i].role) &&
         cJSON_AddStringToObject(m, "content", req->messages[i].content);
  }
  /* Ollama streams unless told not to, so the flag is always sent. */
  if (ok) ok = cJSON_AddBoolToObject(root, "stream", cfg->stream ? 1 : 0) != NULL;
  if (ok && (cfg->has_temperature || cfg->max_tokens > 0)) {
    cJSON *opt = cJSON_AddObjectToObject(root, "options");
    ok = opt != NULL;
    if (ok && cfg->has_temperature) ok = cJSON_AddNumberToObject(opt, "temperature", cfg->temperature) != NULL;
    if (ok && cfg->max_tokens > 0) ok = cJSON_AddNumberToObject(opt, "num_predict", cfg->max_tokens) != NULL;
  }
  if (!ok) {
    cJSON_Delete(root);
    return AG_ERR_NOMEM;
  }
  return llm_wire_body(root, body);
}

/* One line of a stream, or the whole non-streamed reply: the same object. */
static int ollama_parse(const char *data, size_t len, llm_wire_out *out) {
  cJSON *root;
  int rc = llm_wire_json(data, len, &root, out->err);
  if (rc) return rc;
  if (llm_wire_error_object(root, out->err)) {
    rc = AG_ERR_LLM;
    goto done;
  }
  const char *text = llm_wire_str(cJSON_GetObjectItemCaseSensitive(root, "message"), "content");
  if (text && text[0] && (rc = out->text(out->ctx, text, strlen(text)))) goto done;
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "done"))) {
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(root, "prompt_eval_count");
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "eval_count");
    if (cJSON_IsNumber(in)) out->input_tokens = (long)in->valuedouble;
    if (cJSON_IsNumber(o)) out->output_tokens = (long)o->valuedouble;
    out->done = 1;
  }
done:
  cJSON_Delete(root);
  return rc;
}

static int ollama_stream_event(const char *event, const char *data, size_t len, llm_wire_out *out) {
  (void)event;
  return ollama_parse(data, len, out);
}

const llm_wire llm_ollama_wire = {
    .kind = LLM_OLLAMA,
    .default_base_url = "http://127.0.0.1:11434",
    .default_model = "llama3.2",
    .needs_key = 0,
    .key_header = "Authorization: Bearer ",
    .extra_header = NULL,
    .framing = LLM_STREAM_NDJSON,
    .eof_is_done = 0,
    .build = ollama_build,
    .stream_event = ollama_stream_event,
    .parse_body = ollama_parse,
};
