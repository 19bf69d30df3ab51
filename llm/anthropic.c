/* The Anthropic Messages wire format: POST {base}/v1/messages with x-api-key and anthropic-version;
 * the system prompt is the top-level "system" and max_tokens is required. Streamed replies are typed
 * SSE events (message_start, content_block_delta, ..., message_stop, and error). */
#include "llm/wire.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#define ANTHROPIC_DEFAULT_MAX_TOKENS 1024

/* Appends text to the last message when it has the same role: consecutive turns of one role are
 * merged so the conversation alternates as the API expects. */
static int add_turn(cJSON *msgs, const char *role, const char *text) {
  cJSON *last = cJSON_GetArrayItem(msgs, cJSON_GetArraySize(msgs) - 1);
  const char *last_role = last ? llm_wire_str(last, "role") : NULL;
  if (last_role && strcmp(last_role, role) == 0) {
    cJSON *c = cJSON_GetObjectItemCaseSensitive(last, "content");
    ag_buf b;
    ag_buf_init(&b, (size_t)-1);
    int rc = ag_buf_printf(&b, "%s\n\n%s", c->valuestring, text);
    if (rc == AG_OK && !cJSON_SetValuestring(c, ag_buf_str(&b))) rc = AG_ERR_NOMEM;
    ag_buf_free(&b);
    return rc;
  }
  cJSON *m = cJSON_CreateObject();
  int ok = cJSON_AddItemToArray(msgs, m) && cJSON_AddStringToObject(m, "role", role) &&
           cJSON_AddStringToObject(m, "content", text);
  return ok ? AG_OK : AG_ERR_NOMEM;
}

static int anthropic_build(const llm_config *cfg, const llm_request *req, ag_buf *url, char **body) {
  int rc = llm_wire_url(url, cfg, llm_anthropic_wire.default_base_url, "/v1/messages");
  if (rc) return rc;
  ag_buf system;
  ag_buf_init(&system, (size_t)-1);
  cJSON *root = cJSON_CreateObject();
  int ok = cJSON_AddStringToObject(root, "model",
                                   cfg->model ? cfg->model : llm_anthropic_wire.default_model) &&
           cJSON_AddNumberToObject(root, "max_tokens",
                                   cfg->max_tokens > 0 ? cfg->max_tokens : ANTHROPIC_DEFAULT_MAX_TOKENS);
  cJSON *msgs = cJSON_CreateArray();
  for (size_t i = 0; ok && rc == AG_OK && i < req->n_messages; i++) {
    const llm_message *m = &req->messages[i];
    if (strcmp(m->role, "system") == 0) {
      if (system.len) rc = ag_buf_appends(&system, "\n\n");
      if (rc == AG_OK) rc = ag_buf_appends(&system, m->content);
    } else {
      rc = add_turn(msgs, strcmp(m->role, "assistant") == 0 ? "assistant" : "user", m->content);
    }
  }
  if (ok && system.len) ok = cJSON_AddStringToObject(root, "system", ag_buf_str(&system)) != NULL;
  if (ok) ok = cJSON_AddItemToObject(root, "messages", msgs);
  else cJSON_Delete(msgs);
  if (ok && cfg->has_temperature) ok = cJSON_AddNumberToObject(root, "temperature", cfg->temperature) != NULL;
  if (ok) ok = cJSON_AddBoolToObject(root, "stream", cfg->stream ? 1 : 0) != NULL;
  ag_buf_free(&system);
  if (!ok || rc) {
    cJSON_Delete(root);
    return rc ? rc : AG_ERR_NOMEM;
  }
  return llm_wire_body(root, body);
}

static void read_usage(const cJSON *usage, llm_wire_out *out) {
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(usage, "input_tokens");
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(usage, "output_tokens");
  if (cJSON_IsNumber(in)) out->input_tokens = (long)in->valuedouble;
  if (cJSON_IsNumber(o)) out->output_tokens = (long)o->valuedouble;
}

static int anthropic_stream_event(const char *event, const char *data, size_t len, llm_wire_out *out) {
  cJSON *root;
  int rc = llm_wire_json(data, len, &root, out->err);
  if (rc) return rc;
  /* The event name and the data's "type" agree; the name may be missing behind some proxies. */
  const char *type = event[0] ? event : llm_wire_str(root, "type");
  if (!type) type = "";
  if (llm_wire_error_object(root, out->err)) {
    rc = AG_ERR_LLM;
  } else if (strcmp(type, "error") == 0) {
    snprintf(out->err->type, sizeof out->err->type, "error");
    snprintf(out->err->message, sizeof out->err->message, "error event without details");
    rc = AG_ERR_LLM;
  } else if (strcmp(type, "content_block_delta") == 0) {
    const cJSON *delta = cJSON_GetObjectItemCaseSensitive(root, "delta");
    const char *text = llm_wire_str(delta, "text"); /* input_json_delta (tool use) has none */
    if (text && text[0]) rc = out->text(out->ctx, text, strlen(text));
  } else if (strcmp(type, "message_start") == 0) {
    read_usage(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "message"), "usage"),
               out);
  } else if (strcmp(type, "message_delta") == 0) {
    read_usage(cJSON_GetObjectItemCaseSensitive(root, "usage"), out);
  } else if (strcmp(type, "message_stop") == 0) {
    out->done = 1;
  }
  /* ping, content_block_start/stop and unknown future events carry no text. */
  cJSON_Delete(root);
  return rc;
}

static int anthropic_parse_body(const char *body, size_t len, llm_wire_out *out) {
  cJSON *root;
  int rc = llm_wire_json(body, len, &root, out->err);
  if (rc) return rc;
  if (llm_wire_error_object(root, out->err)) {
    rc = AG_ERR_LLM;
    goto done;
  }
  const cJSON *block;
  cJSON_ArrayForEach(block, cJSON_GetObjectItemCaseSensitive(root, "content")) {
    const char *type = llm_wire_str(block, "type");
    const char *text = llm_wire_str(block, "text");
    if (type && strcmp(type, "text") == 0 && text && text[0] && (rc = out->text(out->ctx, text, strlen(text))))
      goto done;
  }
  read_usage(cJSON_GetObjectItemCaseSensitive(root, "usage"), out);
  out->done = 1;
done:
  cJSON_Delete(root);
  return rc;
}

const llm_wire llm_anthropic_wire = {
    .kind = LLM_ANTHROPIC,
    .default_base_url = "https://api.anthropic.com",
    .default_model = "claude-3-5-haiku-latest",
    .needs_key = 1,
    .key_header = "x-api-key: ",
    .extra_header = "anthropic-version: 2023-06-01",
    .framing = LLM_STREAM_SSE,
    .eof_is_done = 0,
    .build = anthropic_build,
    .stream_event = anthropic_stream_event,
    .parse_body = anthropic_parse_body,
};
