/* The Anthropic Messages wire format: POST {base}/v1/messages with x-api-key and anthropic-version;
 * the system prompt is the top-level "system" and max_tokens is required. Streamed replies are typed
 * SSE events (message_start, content_block_delta, ..., message_stop, and error). Tool calls are
 * tool_use content blocks (their input streamed as input_json_delta pieces); tool results go back as
 * tool_result blocks in a user message. */
#include "llm/wire.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#define ANTHROPIC_DEFAULT_MAX_TOKENS 1024

/* Appends text to a block list; the API rejects empty text blocks. */
static int add_text_block(cJSON *blocks, const char *text) {
  if (!text || !text[0]) return AG_OK;
  cJSON *b = cJSON_CreateObject();
  int ok = cJSON_AddItemToArray(blocks, b) && cJSON_AddStringToObject(b, "type", "text") &&
           cJSON_AddStringToObject(b, "text", text);
  return ok ? AG_OK : AG_ERR_NOMEM;
}

/* The content blocks of a message that is not plain text: an assistant's text and tool_use blocks
 * (input as an object), or a tool result. */
static int message_blocks(const llm_message *m, cJSON *blocks) {
  if (strcmp(m->role, "tool") == 0) {
    cJSON *b = cJSON_CreateObject();
    int ok = cJSON_AddItemToArray(blocks, b) && cJSON_AddStringToObject(b, "type", "tool_result") &&
             cJSON_AddStringToObject(b, "tool_use_id", m->tool_call_id ? m->tool_call_id : "") &&
             cJSON_AddStringToObject(b, "content", m->content ? m->content : "");
    return ok ? AG_OK : AG_ERR_NOMEM;
  }
  int rc = add_text_block(blocks, m->content);
  for (size_t i = 0; rc == AG_OK && i < m->n_tool_calls; i++) {
    const llm_tool_call *tc = &m->tool_calls[i];
    cJSON *b = cJSON_CreateObject();
    cJSON *input = llm_wire_args_object(tc->args_json);
    int ok = cJSON_AddItemToArray(blocks, b) && cJSON_AddStringToObject(b, "type", "tool_use") &&
             cJSON_AddStringToObject(b, "id", tc->id ? tc->id : "") &&
             cJSON_AddStringToObject(b, "name", tc->name ? tc->name : "");
    if (!ok || !cJSON_AddItemToObject(b, "input", input)) {
      cJSON_Delete(input);
      rc = AG_ERR_NOMEM;
    }
  }
  return rc;
}

/* Turns a message's string content into blocks, so that blocks can be appended to it. */
static int content_to_blocks(cJSON *msg, cJSON **blocks) {
  cJSON *c = cJSON_GetObjectItemCaseSensitive(msg, "content");
  if (cJSON_IsArray(c)) {
    *blocks = c;
    return AG_OK;
  }
  cJSON *arr = cJSON_CreateArray();
  if (!arr) return AG_ERR_NOMEM;
  int rc = add_text_block(arr, cJSON_IsString(c) ? c->valuestring : NULL);
  if (rc || !cJSON_ReplaceItemInObjectCaseSensitive(msg, "content", arr)) {
    cJSON_Delete(arr);
    return rc ? rc : AG_ERR_NOMEM;
  }
  *blocks = arr;
  return AG_OK;
}

/* Adds a message, merged into the last one when it has the same role so the conversation alternates
 * as the API expects: plain texts are joined into one string; a message with blocks (tool use, tool
 * results) turns the merged content into a block list, so consecutive tool results share one user
 * message. */
static int add_message(cJSON *msgs, const llm_message *m) {
  const char *role = strcmp(m->role, "assistant") == 0 ? "assistant" : "user";
  int plain = strcmp(m->role, "tool") != 0 && m->n_tool_calls == 0;
  const char *text = m->content ? m->content : "";
  cJSON *last = cJSON_GetArrayItem(msgs, cJSON_GetArraySize(msgs) - 1);
  const char *last_role = last ? llm_wire_str(last, "role") : NULL;
  if (last_role && strcmp(last_role, role) == 0) {
    cJSON *c = cJSON_GetObjectItemCaseSensitive(last, "content");
    if (plain && cJSON_IsString(c)) {
      ag_buf b;
      ag_buf_init(&b, (size_t)-1);
      int rc = ag_buf_printf(&b, "%s\n\n%s", c->valuestring, text);
      if (rc == AG_OK && !cJSON_SetValuestring(c, ag_buf_str(&b))) rc = AG_ERR_NOMEM;
      ag_buf_free(&b);
      return rc;
    }
    cJSON *blocks;
    int rc = content_to_blocks(last, &blocks);
    if (rc) return rc;
    return plain ? add_text_block(blocks, text) : message_blocks(m, blocks);
  }
  cJSON *o = cJSON_CreateObject();
  if (!cJSON_AddItemToArray(msgs, o) || !cJSON_AddStringToObject(o, "role", role)) return AG_ERR_NOMEM;
  if (plain) return cJSON_AddStringToObject(o, "content", text) ? AG_OK : AG_ERR_NOMEM;
  cJSON *blocks = cJSON_AddArrayToObject(o, "content");
  return blocks ? message_blocks(m, blocks) : AG_ERR_NOMEM;
}

/* tools: [{"name","description","input_schema"}], or nothing when the request has none. */
static int add_tools(cJSON *root, const llm_request *req) {
  if (!req->n_tools) return AG_OK;
  cJSON *tools = cJSON_AddArrayToObject(root, "tools");
  return tools ? llm_wire_tool_list(tools, req, "input_schema", 0) : AG_ERR_NOMEM;
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
  if (!msgs) ok = 0;
  for (size_t i = 0; ok && rc == AG_OK && i < req->n_messages; i++) {
    const llm_message *m = &req->messages[i];
    if (strcmp(m->role, "system") == 0) {
      if (system.len) rc = ag_buf_appends(&system, "\n\n");
      if (rc == AG_OK) rc = ag_buf_appends(&system, m->content ? m->content : "");
    } else {
      rc = add_message(msgs, m);
    }
  }
  if (ok && system.len) ok = cJSON_AddStringToObject(root, "system", ag_buf_str(&system)) != NULL;
  if (ok) ok = cJSON_AddItemToObject(root, "messages", msgs);
  else cJSON_Delete(msgs);
  if (ok && rc == AG_OK) rc = add_tools(root, req);
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
  llm_wire_usage(usage, "input_tokens", "output_tokens", out);
}

/* The index of the content block an event is about (text and tool_use blocks share the numbering). */
static long block_index(const cJSON *root) {
  const cJSON *ix = cJSON_GetObjectItemCaseSensitive(root, "index");
  return llm_wire_index(ix, 0);
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
  } else if (strcmp(type, "content_block_start") == 0) {
    const cJSON *block = cJSON_GetObjectItemCaseSensitive(root, "content_block");
    const char *btype = llm_wire_str(block, "type");
    if (btype && strcmp(btype, "tool_use") == 0)
      rc = llm_wire_call_start(out, block_index(root), llm_wire_str(block, "id"), llm_wire_str(block, "name"),
                               cJSON_GetObjectItemCaseSensitive(block, "input"));
  } else if (strcmp(type, "content_block_delta") == 0) {
    const cJSON *delta = cJSON_GetObjectItemCaseSensitive(root, "delta");
    const char *text = llm_wire_str(delta, "text");
    const char *json = llm_wire_str(delta, "partial_json"); /* input_json_delta: a tool's input */
    if (text && text[0]) rc = out->text(out->ctx, text, strlen(text));
    else if (json) rc = llm_wire_call_append(out, block_index(root), json, strlen(json));
  } else if (strcmp(type, "message_start") == 0) {
    read_usage(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "message"), "usage"),
               out);
  } else if (strcmp(type, "message_delta") == 0) {
    read_usage(cJSON_GetObjectItemCaseSensitive(root, "usage"), out);
  } else if (strcmp(type, "message_stop") == 0) {
    out->done = 1;
  }
  /* ping, content_block_stop and unknown future events carry nothing we need. */
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
    if (type && strcmp(type, "tool_use") == 0 &&
        (rc = llm_wire_call_whole(out, llm_wire_str(block, "id"), llm_wire_str(block, "name"),
                                  cJSON_GetObjectItemCaseSensitive(block, "input"))))
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
    .framing = NET_STREAM_SSE,
    .eof_is_done = 0,
    .build = anthropic_build,
    .stream_event = anthropic_stream_event,
    .parse_body = anthropic_parse_body,
};
