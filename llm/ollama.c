/* Ollama's native chat API: POST {base}/api/chat; a streamed reply is NDJSON, one
 * {"message":{"content":...},"done":false} object per line until "done":true. No key by default (a
 * key named by api_key_env is sent as a Bearer token, for an Ollama behind a proxy). Tools are offered
 * as OpenAI-style functions; calls come back in message.tool_calls with object arguments. */
#include "llm/wire.h"

#include <cjson/cJSON.h>
#include <string.h>

/* One message. An assistant's calls carry their arguments as an object; a tool result names its
 * tool (Ollama matches results by name). */
static int add_message(cJSON *msgs, const llm_message *msg) {
  cJSON *m = cJSON_CreateObject();
  int ok = cJSON_AddItemToArray(msgs, m) && cJSON_AddStringToObject(m, "role", msg->role) &&
           cJSON_AddStringToObject(m, "content", msg->content ? msg->content : "");
  if (ok && strcmp(msg->role, "tool") == 0)
    ok = cJSON_AddStringToObject(m, "tool_name", msg->tool_name ? msg->tool_name : "") != NULL;
  if (!ok) return AG_ERR_NOMEM;
  if (!msg->n_tool_calls) return AG_OK;
  cJSON *calls = cJSON_AddArrayToObject(m, "tool_calls");
  if (!calls) return AG_ERR_NOMEM;
  for (size_t i = 0; i < msg->n_tool_calls; i++) {
    const llm_tool_call *tc = &msg->tool_calls[i];
    cJSON *c = cJSON_CreateObject(), *f = NULL;
    cJSON *args = llm_wire_args_object(tc->args_json);
    ok = cJSON_AddItemToArray(calls, c) && (f = cJSON_AddObjectToObject(c, "function")) &&
         cJSON_AddStringToObject(f, "name", tc->name ? tc->name : "");
    if (!ok || !cJSON_AddItemToObject(f, "arguments", args)) {
      cJSON_Delete(args);
      return AG_ERR_NOMEM;
    }
  }
  return AG_OK;
}

static int ollama_build(const llm_config *cfg, const llm_request *req, ag_buf *url, char **body) {
  int rc = llm_wire_url(url, cfg, llm_ollama_wire.default_base_url, "/api/chat");
  if (rc) return rc;
  cJSON *root = cJSON_CreateObject();
  cJSON *msgs = cJSON_AddArrayToObject(root, "messages");
  if (!cJSON_AddStringToObject(root, "model", cfg->model ? cfg->model : llm_ollama_wire.default_model) || !msgs)
    rc = AG_ERR_NOMEM;
  for (size_t i = 0; rc == AG_OK && i < req->n_messages; i++) rc = add_message(msgs, &req->messages[i]);
  if (rc == AG_OK) rc = llm_wire_function_tools(root, req);
  int ok = rc == AG_OK;
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
    return rc ? rc : AG_ERR_NOMEM;
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
  const cJSON *msg = cJSON_GetObjectItemCaseSensitive(root, "message");
  const char *text = llm_wire_str(msg, "content");
  if (text && text[0] && (rc = out->text(out->ctx, text, strlen(text)))) goto done;
  /* Calls come whole (arguments as an object), usually all in one line. */
  const cJSON *tc, *calls = cJSON_GetObjectItemCaseSensitive(msg, "tool_calls");
  if (!cJSON_IsArray(calls)) calls = NULL;
  cJSON_ArrayForEach(tc, calls) {
    if (!cJSON_IsObject(tc)) continue;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(tc, "function");
    if ((rc = llm_wire_call_whole(out, llm_wire_str(tc, "id"), llm_wire_str(f, "name"),
                                  cJSON_GetObjectItemCaseSensitive(f, "arguments"))))
      goto done;
  }
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "done"))) {
    llm_wire_usage(root, "prompt_eval_count", "eval_count", out);
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
    .framing = NET_STREAM_NDJSON,
    .eof_is_done = 0,
    .build = ollama_build,
    .stream_event = ollama_stream_event,
    .parse_body = ollama_parse,
};
