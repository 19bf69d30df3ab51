/* The OpenAI chat completions wire format, also spoken by most OpenAI-compatible servers (Ollama's
 * /v1, llama.cpp, vLLM, OpenRouter, ...): POST {base}/chat/completions with a Bearer key; streamed
 * replies are SSE "data:" chunks carrying choices[0].delta.content and end with "data: [DONE]". Tools
 * are offered as functions; a streamed call's arguments arrive as text pieces in delta.tool_calls. */
#include "llm/wire.h"

#include <cjson/cJSON.h>
#include <string.h>

/* An assistant's calls, with their arguments as the text the model wrote. */
static int add_tool_calls(cJSON *m, const llm_message *msg) {
  cJSON *calls = cJSON_AddArrayToObject(m, "tool_calls");
  if (!calls) return AG_ERR_NOMEM;
  for (size_t i = 0; i < msg->n_tool_calls; i++) {
    const llm_tool_call *tc = &msg->tool_calls[i];
    cJSON *c = cJSON_CreateObject(), *f = NULL;
    int ok = cJSON_AddItemToArray(calls, c) && cJSON_AddStringToObject(c, "id", tc->id ? tc->id : "") &&
             cJSON_AddStringToObject(c, "type", "function") && (f = cJSON_AddObjectToObject(c, "function")) &&
             cJSON_AddStringToObject(f, "name", tc->name ? tc->name : "") &&
             cJSON_AddStringToObject(f, "arguments", tc->args_json ? tc->args_json : "{}");
    if (!ok) return AG_ERR_NOMEM;
  }
  return AG_OK;
}

/* One message. A tool result names the call it answers; an assistant that only called tools has a
 * null content. */
static int add_message(cJSON *msgs, const llm_message *msg) {
  cJSON *m = cJSON_CreateObject();
  const char *content = msg->content ? msg->content : "";
  if (!cJSON_AddItemToArray(msgs, m) || !cJSON_AddStringToObject(m, "role", msg->role)) return AG_ERR_NOMEM;
  if (strcmp(msg->role, "tool") == 0) {
    int ok = cJSON_AddStringToObject(m, "tool_call_id", msg->tool_call_id ? msg->tool_call_id : "") &&
             cJSON_AddStringToObject(m, "content", content);
    return ok ? AG_OK : AG_ERR_NOMEM;
  }
  if (!msg->n_tool_calls) return cJSON_AddStringToObject(m, "content", content) ? AG_OK : AG_ERR_NOMEM;
  int ok = content[0] ? cJSON_AddStringToObject(m, "content", content) != NULL
                      : cJSON_AddNullToObject(m, "content") != NULL;
  return ok ? add_tool_calls(m, msg) : AG_ERR_NOMEM;
}

static int openai_build(const llm_config *cfg, const llm_request *req, ag_buf *url, char **body) {
  int rc = llm_wire_url(url, cfg, llm_openai_wire.default_base_url, "/chat/completions");
  if (rc) return rc;
  cJSON *root = cJSON_CreateObject();
  cJSON *msgs = cJSON_AddArrayToObject(root, "messages");
  if (!cJSON_AddStringToObject(root, "model", cfg->model ? cfg->model : llm_openai_wire.default_model) || !msgs)
    rc = AG_ERR_NOMEM;
  for (size_t i = 0; rc == AG_OK && i < req->n_messages; i++) rc = add_message(msgs, &req->messages[i]);
  if (rc == AG_OK) rc = llm_wire_function_tools(root, req);
  int ok = rc == AG_OK;
  if (ok && cfg->has_temperature) ok = cJSON_AddNumberToObject(root, "temperature", cfg->temperature) != NULL;
  if (ok && cfg->max_tokens > 0) ok = cJSON_AddNumberToObject(root, "max_tokens", cfg->max_tokens) != NULL;
  if (ok) ok = cJSON_AddBoolToObject(root, "stream", cfg->stream ? 1 : 0) != NULL;
  if (ok && cfg->stream) {
    cJSON *so = cJSON_AddObjectToObject(root, "stream_options");
    ok = so && cJSON_AddTrueToObject(so, "include_usage");
  }
  if (!ok) {
    cJSON_Delete(root);
    return rc ? rc : AG_ERR_NOMEM;
  }
  return llm_wire_body(root, body);
}

static void read_usage(const cJSON *root, llm_wire_out *out) {
  llm_wire_usage(cJSON_GetObjectItemCaseSensitive(root, "usage"), "prompt_tokens", "completion_tokens", out);
}

/* The tool calls of a message (whole) or a delta (streamed: pieces keyed by index, the id and name
 * in the first, the argument text spread over many). */
static int read_tool_calls(const cJSON *msg, int streamed, llm_wire_out *out) {
  const cJSON *tc, *calls = cJSON_GetObjectItemCaseSensitive(msg, "tool_calls");
  int i = 0, rc = AG_OK;
  if (!cJSON_IsArray(calls)) return AG_OK;
  cJSON_ArrayForEach(tc, calls) {
    if (!cJSON_IsObject(tc)) continue;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(tc, "function");
    const char *id = llm_wire_str(tc, "id"), *name = llm_wire_str(f, "name");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(f, "arguments");
    if (streamed) {
      const cJSON *ix = cJSON_GetObjectItemCaseSensitive(tc, "index");
      const char *a = cJSON_IsString(args) ? args->valuestring : NULL;
      /* A server without indexes sends the calls in order. */
      rc = llm_wire_call_piece(out, llm_wire_index(ix, i), id, name, a, a ? strlen(a) : 0);
    } else {
      rc = llm_wire_call_whole(out, id, name, args);
    }
    if (rc) break;
    i++;
  }
  return rc;
}

/* Reads choices[0].<field>: its content, tool calls and finish_reason. */
static int read_choice(const cJSON *root, const char *field, llm_wire_out *out) {
  const cJSON *choice = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "choices"), 0);
  if (!choice) return AG_OK; /* the usage chunk has no choices */
  const cJSON *msg = cJSON_GetObjectItemCaseSensitive(choice, field);
  const char *text = llm_wire_str(msg, "content");
  if (llm_wire_str(choice, "finish_reason")) out->done = 1;
  int rc = AG_OK;
  if (text && text[0]) rc = out->text(out->ctx, text, strlen(text));
  if (rc == AG_OK) rc = read_tool_calls(msg, strcmp(field, "delta") == 0, out);
  return rc;
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
    .framing = NET_STREAM_SSE,
    .eof_is_done = 0,
    .build = openai_build,
    .stream_event = openai_stream_event,
    .parse_body = openai_parse_body,
};
