/* The Google Gemini wire format: POST {base}/v1beta/models/{model}:generateContent, or
 * :streamGenerateContent?alt=sse for SSE, with the key in x-goog-api-key (never in the URL, which
 * may end up in logs). Roles are user/model; the system prompt goes in systemInstruction. Tools are
 * functionDeclarations; calls come back whole as functionCall parts, and results go back as
 * functionResponse parts of a user turn. */
#include "llm/wire.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

/* Escapes a model name for the URL path; names are short ("gemini-2.0-flash"). */
static int escape_model(const char *model, char *out, size_t cap) {
  static const char hex[] = "0123456789ABCDEF";
  if (strncmp(model, "models/", 7) == 0) model += 7;
  size_t j = 0;
  for (const unsigned char *p = (const unsigned char *)model; *p; p++) {
    if (j + 4 > cap) return AG_ERR_INVALID;
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
        *p == '.' || *p == '_') {
      out[j++] = (char)*p;
    } else {
      out[j++] = '%';
      out[j++] = hex[*p >> 4];
      out[j++] = hex[*p & 15];
    }
  }
  out[j] = '\0';
  return AG_OK;
}

static int add_part(cJSON *parts, const char *text) {
  cJSON *p = cJSON_CreateObject();
  return cJSON_AddItemToArray(parts, p) && cJSON_AddStringToObject(p, "text", text) ? AG_OK : AG_ERR_NOMEM;
}

/* Adds {key: {"name": name, field: value}} to parts; value is consumed. */
static int add_function_part(cJSON *parts, const char *key, const char *name, const char *field, cJSON *value) {
  cJSON *p = cJSON_CreateObject(), *f = NULL;
  int ok = cJSON_AddItemToArray(parts, p) && (f = cJSON_AddObjectToObject(p, key)) &&
           cJSON_AddStringToObject(f, "name", name ? name : "");
  if (!ok || !value || !cJSON_AddItemToObject(f, field, value)) {
    cJSON_Delete(value);
    return AG_ERR_NOMEM;
  }
  return AG_OK;
}

/* The parts of a message: its text; a model turn's functionCall parts; a tool result as a
 * functionResponse (Gemini has no call ids: the name says which call it answers). */
static int add_message_parts(cJSON *parts, const llm_message *m) {
  if (strcmp(m->role, "tool") == 0)
    return add_function_part(parts, "functionResponse", m->tool_name, "response",
                             llm_wire_result_object(m->content));
  const char *text = m->content ? m->content : "";
  int rc = AG_OK;
  /* A turn that only calls functions has no text part (empty text parts are refused). */
  if (text[0] || !m->n_tool_calls) rc = add_part(parts, text);
  for (size_t i = 0; rc == AG_OK && i < m->n_tool_calls; i++) {
    rc = add_function_part(parts, "functionCall", m->tool_calls[i].name, "args",
                           llm_wire_args_object(m->tool_calls[i].args_json));
    const char *sig = m->tool_calls[i].signature;
    if (!rc && sig && !cJSON_AddStringToObject(cJSON_GetArrayItem(parts, cJSON_GetArraySize(parts) - 1),
                                               "thoughtSignature", sig))
      rc = AG_ERR_NOMEM;
  }
  return rc;
}

/* Consecutive turns of one role become parts of one content, so roles alternate; tool results are
 * user turns. */
static int add_turn(cJSON *contents, const llm_message *m) {
  const char *role = strcmp(m->role, "assistant") == 0 ? "model" : "user";
  cJSON *last = cJSON_GetArrayItem(contents, cJSON_GetArraySize(contents) - 1);
  const char *last_role = last ? llm_wire_str(last, "role") : NULL;
  if (last_role && strcmp(last_role, role) == 0)
    return add_message_parts(cJSON_GetObjectItemCaseSensitive(last, "parts"), m);
  cJSON *c = cJSON_CreateObject();
  if (!cJSON_AddItemToArray(contents, c) || !cJSON_AddStringToObject(c, "role", role)) return AG_ERR_NOMEM;
  cJSON *parts = cJSON_AddArrayToObject(c, "parts");
  return parts ? add_message_parts(parts, m) : AG_ERR_NOMEM;
}

/* tools: [{"functionDeclarations":[{"name","description","parameters"}]}], or nothing. */
static int add_tools(cJSON *root, const llm_request *req) {
  if (!req->n_tools) return AG_OK;
  cJSON *tools = cJSON_AddArrayToObject(root, "tools");
  cJSON *t = cJSON_CreateObject();
  if (!tools || !t || !cJSON_AddItemToArray(tools, t)) {
    cJSON_Delete(t);
    return AG_ERR_NOMEM;
  }
  cJSON *decls = cJSON_AddArrayToObject(t, "functionDeclarations");
  return decls ? llm_wire_tool_list(decls, req, "parameters", 0) : AG_ERR_NOMEM;
}

static int gemini_build(const llm_config *cfg, const llm_request *req, ag_buf *url, char **body) {
  char model[512];
  int rc = escape_model(cfg->model ? cfg->model : llm_gemini_wire.default_model, model, sizeof model);
  if (rc) return rc;
  rc = llm_wire_url(url, cfg, llm_gemini_wire.default_base_url, "/v1beta/models/%s:%s", model,
                    cfg->stream ? "streamGenerateContent?alt=sse" : "generateContent");
  if (rc) return rc;
  cJSON *root = cJSON_CreateObject();
  cJSON *contents = cJSON_AddArrayToObject(root, "contents");
  cJSON *sys_parts = NULL;
  if (!contents) rc = AG_ERR_NOMEM;
  for (size_t i = 0; rc == AG_OK && i < req->n_messages; i++) {
    const llm_message *m = &req->messages[i];
    if (strcmp(m->role, "system") == 0) {
      if (!sys_parts) {
        cJSON *si = cJSON_AddObjectToObject(root, "systemInstruction");
        sys_parts = si ? cJSON_AddArrayToObject(si, "parts") : NULL;
        if (!sys_parts) rc = AG_ERR_NOMEM;
      }
      if (rc == AG_OK) rc = add_part(sys_parts, m->content ? m->content : "");
    } else {
      rc = add_turn(contents, m);
    }
  }
  if (rc == AG_OK) rc = add_tools(root, req);
  if (rc == AG_OK && (cfg->has_temperature || cfg->max_tokens > 0)) {
    cJSON *gc = cJSON_AddObjectToObject(root, "generationConfig");
    int ok = gc != NULL;
    if (ok && cfg->has_temperature) ok = cJSON_AddNumberToObject(gc, "temperature", cfg->temperature) != NULL;
    if (ok && cfg->max_tokens > 0) ok = cJSON_AddNumberToObject(gc, "maxOutputTokens", cfg->max_tokens) != NULL;
    if (!ok) rc = AG_ERR_NOMEM;
  }
  if (rc) {
    cJSON_Delete(root);
    return rc;
  }
  return llm_wire_body(root, body);
}

/* One GenerateContentResponse: a streamed chunk or the whole reply, same shape. */
static int read_response(const cJSON *root, llm_wire_out *out) {
  if (llm_wire_error_object(root, out->err)) return AG_ERR_LLM;
  llm_wire_usage(cJSON_GetObjectItemCaseSensitive(root, "usageMetadata"), "promptTokenCount",
                 "candidatesTokenCount", out);
  const cJSON *cand = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "candidates"), 0);
  if (!cand) {
    /* A prompt the safety filters refused comes back with no candidates at all. */
    const char *block = llm_wire_str(cJSON_GetObjectItemCaseSensitive(root, "promptFeedback"), "blockReason");
    if (block) {
      snprintf(out->err->type, sizeof out->err->type, "blocked");
      snprintf(out->err->message, sizeof out->err->message, "prompt blocked: %s", block);
      return AG_ERR_LLM;
    }
    return AG_OK;
  }
  const cJSON *part;
  cJSON_ArrayForEach(part, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cand, "content"),
                                                            "parts")) {
    const char *text = llm_wire_str(part, "text");
    const cJSON *fc = cJSON_GetObjectItemCaseSensitive(part, "functionCall");
    int rc = AG_OK;
    if (text && text[0]) rc = out->text(out->ctx, text, strlen(text));
    /* Calls come whole, one or several per chunk; with no ids, the library numbers them. */
    else if (cJSON_IsObject(fc))
    {
      rc = llm_wire_call_whole(out, NULL, llm_wire_str(fc, "name"), cJSON_GetObjectItemCaseSensitive(fc, "args"));
      /* Thinking models sign their calls and refuse a follow-up that does not send the signature back. */
      if (!rc) rc = llm_wire_call_sign(out, llm_wire_str(part, "thoughtSignature"));
    }
    if (rc) return rc;
  }
  if (llm_wire_str(cand, "finishReason")) out->done = 1;
  return AG_OK;
}

static int gemini_parse(const char *data, size_t len, llm_wire_out *out) {
  cJSON *root;
  int rc = llm_wire_json(data, len, &root, out->err);
  if (rc) return rc;
  rc = read_response(root, out);
  cJSON_Delete(root);
  return rc;
}

static int gemini_stream_event(const char *event, const char *data, size_t len, llm_wire_out *out) {
  (void)event;
  return gemini_parse(data, len, out);
}

static int gemini_parse_body(const char *body, size_t len, llm_wire_out *out) {
  int rc = gemini_parse(body, len, out);
  if (rc == AG_OK) out->done = 1;
  return rc;
}

const llm_wire llm_gemini_wire = {
    .kind = LLM_GEMINI,
    .default_base_url = "https://generativelanguage.googleapis.com",
    .default_model = "gemini-2.0-flash",
    .needs_key = 1,
    .key_header = "x-goog-api-key: ",
    .extra_header = NULL,
    .framing = NET_STREAM_SSE,
    .eof_is_done = 1,
    .build = gemini_build,
    .stream_event = gemini_stream_event,
    .parse_body = gemini_parse_body,
};
