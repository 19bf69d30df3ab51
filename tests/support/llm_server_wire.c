/* The loopback LLM server's wire formats (see llm_server_int.h): OpenAI, Anthropic, Gemini and Ollama
 * replies, whole and streamed, with text, tool calls, usage and errors, and the faults a stream can
 * carry part way. */
#include "support/llm_server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* obj[key] = the n bytes of text t (a copy). */
static void add_text_n(cJSON *obj, const char *key, const char *t, size_t n) {
  char *s = strndup(t, n);
  cJSON_AddStringToObject(obj, key, s);
  free(s);
}

long lsrv_input_tokens(const out *o) { return (long)(o->ri->all_text.len + o->ri->system.len) / 4 + 1; }

/* An OpenAI completion of the given object kind with its one choice (index 0) in *choice, which the
 * object owns. */
static cJSON *openai_envelope(const out *o, const char *object, cJSON **choice) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "id", "chatcmpl-mock");
  cJSON_AddStringToObject(r, "object", object);
  cJSON_AddNumberToObject(r, "created", 0);
  cJSON_AddStringToObject(r, "model", o->ri->model);
  cJSON *ch = cJSON_AddArrayToObject(r, "choices");
  *choice = cJSON_CreateObject();
  cJSON_AddItemToArray(ch, *choice);
  cJSON_AddNumberToObject(*choice, "index", 0);
  return r;
}

static cJSON *openai_chunk(const out *o, cJSON *delta, const char *finish) {
  cJSON *c;
  cJSON *r = openai_envelope(o, "chat.completion.chunk", &c);
  cJSON_AddItemToObject(c, "delta", delta);
  if (finish) cJSON_AddStringToObject(c, "finish_reason", finish);
  else cJSON_AddNullToObject(c, "finish_reason");
  return r;
}

static cJSON *gemini_chunk(const out *o, cJSON *part, const char *finish, int usage) {
  cJSON *r = cJSON_CreateObject();
  cJSON *cands = cJSON_AddArrayToObject(r, "candidates");
  cJSON *cand = cJSON_CreateObject();
  cJSON_AddItemToArray(cands, cand);
  cJSON *content = cJSON_AddObjectToObject(cand, "content");
  cJSON *parts = cJSON_AddArrayToObject(content, "parts");
  cJSON_AddItemToArray(parts, part);
  cJSON_AddStringToObject(content, "role", "model");
  if (finish) cJSON_AddStringToObject(cand, "finishReason", finish);
  cJSON_AddNumberToObject(cand, "index", 0);
  if (usage) {
    cJSON *u = cJSON_AddObjectToObject(r, "usageMetadata");
    cJSON_AddNumberToObject(u, "promptTokenCount", (double)lsrv_input_tokens(o));
    cJSON_AddNumberToObject(u, "candidatesTokenCount", o->n_text_events);
    cJSON_AddNumberToObject(u, "totalTokenCount", (double)(lsrv_input_tokens(o) + o->n_text_events));
  }
  cJSON_AddStringToObject(r, "modelVersion", o->ri->model);
  return r;
}

static cJSON *text_part(const char *t, size_t n) {
  cJSON *p = cJSON_CreateObject();
  add_text_n(p, "text", t, n);
  return p;
}

static cJSON *ollama_line(const out *o, const char *text, size_t n, int done) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "model", o->ri->model);
  cJSON_AddStringToObject(r, "created_at", "2025-01-01T00:00:00Z");
  cJSON *m = cJSON_AddObjectToObject(r, "message");
  cJSON_AddStringToObject(m, "role", "assistant");
  add_text_n(m, "content", text, n);
  cJSON_AddBoolToObject(r, "done", done);
  if (done) {
    cJSON_AddStringToObject(r, "done_reason", "stop");
    cJSON_AddNumberToObject(r, "prompt_eval_count", (double)lsrv_input_tokens(o));
    cJSON_AddNumberToObject(r, "eval_count", o->n_text_events);
  }
  return r;
}

void lsrv_stream_text_event(out *o, const char *t, size_t n) {
  o->n_text_events++;
  switch (o->kind) {
  case W_OPENAI: {
    cJSON *d = cJSON_CreateObject();
    add_text_n(d, "content", t, n);
    lsrv_out_event(o, NULL, openai_chunk(o, d, NULL));
    break;
  }
  case W_ANTHROPIC: {
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "type", "content_block_delta");
    cJSON_AddNumberToObject(r, "index", 0);
    cJSON *d = cJSON_AddObjectToObject(r, "delta");
    cJSON_AddStringToObject(d, "type", "text_delta");
    add_text_n(d, "text", t, n);
    lsrv_out_event(o, "content_block_delta", r);
    break;
  }
  case W_GEMINI: lsrv_out_event(o, NULL, gemini_chunk(o, text_part(t, n), NULL, 0)); break;
  default: lsrv_out_event(o, NULL, ollama_line(o, t, n, 0)); break;
  }
}

void lsrv_stream_prelude(out *o) {
  if (o->kind == W_OPENAI) {
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "role", "assistant");
    cJSON_AddStringToObject(d, "content", "");
    lsrv_out_event(o, NULL, openai_chunk(o, d, NULL));
  } else if (o->kind == W_ANTHROPIC) {
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "type", "message_start");
    cJSON *m = cJSON_AddObjectToObject(r, "message");
    cJSON_AddStringToObject(m, "id", "msg_mock");
    cJSON_AddStringToObject(m, "type", "message");
    cJSON_AddStringToObject(m, "role", "assistant");
    cJSON_AddStringToObject(m, "model", o->ri->model);
    cJSON_AddArrayToObject(m, "content");
    cJSON_AddNullToObject(m, "stop_reason");
    cJSON *u = cJSON_AddObjectToObject(m, "usage");
    cJSON_AddNumberToObject(u, "input_tokens", (double)lsrv_input_tokens(o));
    cJSON_AddNumberToObject(u, "output_tokens", 1);
    lsrv_out_event(o, "message_start", r);
    if (o->with_text) { /* tool_use blocks start later, in stream_calls */
      r = cJSON_CreateObject();
      cJSON_AddStringToObject(r, "type", "content_block_start");
      cJSON_AddNumberToObject(r, "index", 0);
      cJSON *b = cJSON_AddObjectToObject(r, "content_block");
      cJSON_AddStringToObject(b, "type", "text");
      cJSON_AddStringToObject(b, "text", "");
      lsrv_out_event(o, "content_block_start", r);
      o->text_open = 1;
    }
    lsrv_out_event_raw(o, "ping", "{\"type\": \"ping\"}");
  }
}

/* Call i's arguments: the args= JSON, or its text as a JSON string when it does not parse (so a test
 * can send malformed arguments); {} when none. */
static cJSON *call_args(const plan *p, int i) {
  if (!p->args[i]) return cJSON_CreateObject();
  cJSON *a = cJSON_ParseWithOpts(p->args[i], NULL, 1);
  return a ? a : cJSON_CreateString(p->args[i]);
}

static const char *call_args_text(const plan *p, int i) { return p->args[i] ? p->args[i] : "{}"; }

/* Call ids: OpenAI call_mock_N, Anthropic toolu_mock_N (N from 1); Gemini and Ollama send none. */
static void call_id(const out *o, int i, char *buf, size_t cap) {
  snprintf(buf, cap, "%s_%d", o->kind == W_ANTHROPIC ? "toolu_mock" : "call_mock", i + 1);
}

/* The i-th call as a whole object in the provider's shape: OpenAI {id,type,function{name,
 * arguments text}}, Anthropic {type:tool_use,id,name,input}, Gemini {functionCall{name,args}},
 * Ollama {function{name,arguments}}. */
static cJSON *call_object(const out *o, int i) {
  const plan *p = o->p;
  char id[32];
  call_id(o, i, id, sizeof id);
  cJSON *c = cJSON_CreateObject();
  switch (o->kind) {
  case W_OPENAI: {
    cJSON_AddStringToObject(c, "id", id);
    cJSON_AddStringToObject(c, "type", "function");
    cJSON *f = cJSON_AddObjectToObject(c, "function");
    cJSON_AddStringToObject(f, "name", p->tool[i]);
    cJSON_AddStringToObject(f, "arguments", call_args_text(p, i));
    break;
  }
  case W_ANTHROPIC:
    cJSON_AddStringToObject(c, "type", "tool_use");
    cJSON_AddStringToObject(c, "id", id);
    cJSON_AddStringToObject(c, "name", p->tool[i]);
    cJSON_AddItemToObject(c, "input", call_args(p, i));
    break;
  case W_GEMINI: {
    cJSON *fc = cJSON_AddObjectToObject(c, "functionCall");
    cJSON_AddStringToObject(fc, "name", p->tool[i]);
    cJSON_AddItemToObject(fc, "args", call_args(p, i));
    break;
  }
  default: {
    cJSON *f = cJSON_AddObjectToObject(c, "function");
    cJSON_AddStringToObject(f, "name", p->tool[i]);
    cJSON_AddItemToObject(f, "arguments", call_args(p, i));
    break;
  }
  }
  return c;
}

/* The length of the next argument piece from pos: args_chunk bytes (default 4), not splitting a
 * UTF-8 sequence. */
static size_t piece_len(const plan *p, const char *s, size_t pos, size_t len) {
  size_t end = pos + (size_t)(p->args_chunk > 0 ? p->args_chunk : 4);
  if (end >= len) return len - pos;
  while (end < len && ((unsigned char)s[end] & 0xC0) == 0x80) end++;
  return end - pos;
}

static cJSON *openai_call_delta(int index, const char *id, const char *name, const char *args, size_t n) {
  cJSON *d = cJSON_CreateObject();
  cJSON *calls = cJSON_AddArrayToObject(d, "tool_calls");
  cJSON *call = cJSON_CreateObject();
  cJSON_AddItemToArray(calls, call);
  cJSON_AddNumberToObject(call, "index", index);
  if (id) {
    cJSON_AddStringToObject(call, "id", id);
    cJSON_AddStringToObject(call, "type", "function");
  }
  cJSON *f = cJSON_AddObjectToObject(call, "function");
  if (name) cJSON_AddStringToObject(f, "name", name);
  char *a = strndup(args, n);
  cJSON_AddStringToObject(f, "arguments", a);
  free(a);
  return d;
}

static void anthropic_block_stop(out *o, int index) {
  char ev[64];
  snprintf(ev, sizeof ev, "{\"type\":\"content_block_stop\",\"index\":%d}", index);
  lsrv_out_event_raw(o, "content_block_stop", ev);
}

/* The calls of a streamed reply, after its text. OpenAI and Anthropic split the argument text over
 * several events, as the real ones do; Gemini sends one event per call, Ollama one line with all. */
static void stream_calls(out *o) {
  const plan *p = o->p;
  if (o->kind == W_OLLAMA) {
    cJSON *r = ollama_line(o, "", 0, 0);
    cJSON *calls = cJSON_AddArrayToObject(cJSON_GetObjectItemCaseSensitive(r, "message"), "tool_calls");
    for (int i = 0; i < SRV_MAX_CALLS; i++)
      if (p->tool[i]) cJSON_AddItemToArray(calls, call_object(o, i));
    lsrv_out_event(o, NULL, r);
    return;
  }
  if (o->text_open) {
    anthropic_block_stop(o, 0);
    o->text_open = 0;
  }
  int k = 0; /* the call's position in the reply */
  for (int i = 0; i < SRV_MAX_CALLS; i++) {
    if (!p->tool[i]) continue;
    const char *args = call_args_text(p, i);
    size_t len = strlen(args);
    char id[32];
    call_id(o, i, id, sizeof id);
    if (o->kind == W_GEMINI) {
      cJSON *fc = call_object(o, i);
      lsrv_out_event(o, NULL, gemini_chunk(o, fc, NULL, 0));
    } else if (o->kind == W_OPENAI) {
      lsrv_out_event(o, NULL, openai_chunk(o, openai_call_delta(k, id, p->tool[i], "", 0), NULL));
      for (size_t pos = 0, n; pos < len; pos += n) {
        n = piece_len(p, args, pos, len);
        lsrv_out_event(o, NULL, openai_chunk(o, openai_call_delta(k, NULL, NULL, args + pos, n), NULL));
      }
    } else {
      int index = (o->with_text ? 1 : 0) + k;
      cJSON *r = cJSON_CreateObject();
      cJSON_AddStringToObject(r, "type", "content_block_start");
      cJSON_AddNumberToObject(r, "index", index);
      cJSON *b = cJSON_AddObjectToObject(r, "content_block");
      cJSON_AddStringToObject(b, "type", "tool_use");
      cJSON_AddStringToObject(b, "id", id);
      cJSON_AddStringToObject(b, "name", p->tool[i]);
      cJSON_AddObjectToObject(b, "input");
      lsrv_out_event(o, "content_block_start", r);
      for (size_t pos = 0, n; pos < len; pos += n) {
        n = piece_len(p, args, pos, len);
        r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "type", "content_block_delta");
        cJSON_AddNumberToObject(r, "index", index);
        cJSON *d = cJSON_AddObjectToObject(r, "delta");
        cJSON_AddStringToObject(d, "type", "input_json_delta");
        char *piece = strndup(args + pos, n);
        cJSON_AddStringToObject(d, "partial_json", piece);
        free(piece);
        lsrv_out_event(o, "content_block_delta", r);
      }
      anthropic_block_stop(o, index);
    }
    k++;
  }
}

static void stream_end(out *o) {
  const char *finish_openai = o->n_calls ? "tool_calls" : "stop";
  switch (o->kind) {
  case W_OPENAI: {
    lsrv_out_event(o, NULL, openai_chunk(o, cJSON_CreateObject(), finish_openai));
    if (!o->ri->include_usage || o->p->no_usage) { /* as OpenAI: the usage chunk only when asked for */
      lsrv_out_event_raw(o, NULL, "[DONE]");
      break;
    }
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "id", "chatcmpl-mock");
    cJSON_AddStringToObject(r, "object", "chat.completion.chunk");
    cJSON_AddStringToObject(r, "model", o->ri->model);
    cJSON_AddArrayToObject(r, "choices");
    cJSON *u = cJSON_AddObjectToObject(r, "usage");
    cJSON_AddNumberToObject(u, "prompt_tokens", (double)lsrv_input_tokens(o));
    cJSON_AddNumberToObject(u, "completion_tokens", o->n_text_events);
    cJSON_AddNumberToObject(u, "total_tokens", (double)(lsrv_input_tokens(o) + o->n_text_events));
    lsrv_out_event(o, NULL, r);
    lsrv_out_event_raw(o, NULL, "[DONE]");
    break;
  }
  case W_ANTHROPIC: {
    if (o->text_open) anthropic_block_stop(o, 0);
    o->text_open = 0;
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "type", "message_delta");
    cJSON *d = cJSON_AddObjectToObject(r, "delta");
    cJSON_AddStringToObject(d, "stop_reason", o->n_calls ? "tool_use" : "end_turn");
    cJSON_AddNullToObject(d, "stop_sequence");
    cJSON *u = cJSON_AddObjectToObject(r, "usage");
    cJSON_AddNumberToObject(u, "output_tokens", o->n_text_events);
    lsrv_out_event(o, "message_delta", r);
    lsrv_out_event_raw(o, "message_stop", "{\"type\":\"message_stop\"}");
    break;
  }
  case W_GEMINI: lsrv_out_event(o, NULL, gemini_chunk(o, text_part("", 0), "STOP", 1)); break;
  default: lsrv_out_event(o, NULL, ollama_line(o, "", 0, 1)); break;
  }
}

const char *lsrv_default_error_type(wire_kind k, long status) {
  switch (k) {
  case W_ANTHROPIC:
    return status == 401 ? "authentication_error" : status == 403 ? "permission_error"
           : status == 404 ? "not_found_error"    : status == 429 ? "rate_limit_error"
           : status == 529 ? "overloaded_error"   : status >= 500 ? "api_error"
                                                   : "invalid_request_error";
  case W_GEMINI:
    return status == 401 ? "UNAUTHENTICATED" : status == 403 ? "PERMISSION_DENIED"
           : status == 404 ? "NOT_FOUND"     : status == 429 ? "RESOURCE_EXHAUSTED"
           : status == 503 ? "UNAVAILABLE"   : status >= 500 ? "INTERNAL"
                                             : "INVALID_ARGUMENT";
  default:
    return status == 429 ? "rate_limit_exceeded" : status >= 500 ? "server_error" : "invalid_request_error";
  }
}

/* The provider's error object, as a whole body or a mid-stream event. */
cJSON *lsrv_error_object(const out *o, long status, const char *type) {
  const plan *p = o->p;
  char msg[512];
  if (p->error_message) snprintf(msg, sizeof msg, "%s", p->error_message);
  else if (status == 401) snprintf(msg, sizeof msg, "Incorrect API key provided: %s.", o->ri->key);
  else snprintf(msg, sizeof msg, "mock error %ld (%s)", status, type);
  cJSON *r = cJSON_CreateObject();
  if (o->kind == W_OLLAMA) {
    cJSON_AddStringToObject(r, "error", msg);
    return r;
  }
  if (o->kind == W_ANTHROPIC) cJSON_AddStringToObject(r, "type", "error");
  cJSON *e = cJSON_AddObjectToObject(r, "error");
  if (o->kind == W_GEMINI) {
    cJSON_AddNumberToObject(e, "code", (double)status);
    cJSON_AddStringToObject(e, "message", msg);
    cJSON_AddStringToObject(e, "status", type);
  } else {
    cJSON_AddStringToObject(e, "type", type);
    cJSON_AddStringToObject(e, "message", msg);
    if (o->kind == W_OPENAI) {
      cJSON_AddNullToObject(e, "param");
      if (status == 401) cJSON_AddStringToObject(e, "code", "invalid_api_key");
      else if (p->error_code) cJSON_AddStringToObject(e, "code", p->error_code);
      else if (p->error_type) cJSON_AddStringToObject(e, "code", p->error_type);
      else cJSON_AddNullToObject(e, "code");
    }
  }
  return r;
}

/* A whole reply: its text (when it has any) and its calls. */
cJSON *lsrv_whole_reply(out *o, const char *text) {
  const plan *p = o->p;
  o->n_text_events = 1;
  cJSON *r;
  switch (o->kind) {
  case W_OPENAI: {
    cJSON *c;
    r = openai_envelope(o, "chat.completion", &c);
    cJSON *m = cJSON_AddObjectToObject(c, "message");
    cJSON_AddStringToObject(m, "role", "assistant");
    if (o->with_text) cJSON_AddStringToObject(m, "content", text);
    else cJSON_AddNullToObject(m, "content");
    if (o->n_calls) {
      cJSON *calls = cJSON_AddArrayToObject(m, "tool_calls");
      for (int i = 0; i < SRV_MAX_CALLS; i++)
        if (p->tool[i]) cJSON_AddItemToArray(calls, call_object(o, i));
    }
    cJSON_AddStringToObject(c, "finish_reason", o->n_calls ? "tool_calls" : "stop");
    if (p->no_usage) return r;
    cJSON *u = cJSON_AddObjectToObject(r, "usage");
    cJSON_AddNumberToObject(u, "prompt_tokens", (double)lsrv_input_tokens(o));
    cJSON_AddNumberToObject(u, "completion_tokens", 1);
    cJSON_AddNumberToObject(u, "total_tokens", (double)lsrv_input_tokens(o) + 1);
    return r;
  }
  case W_ANTHROPIC: {
    r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "id", "msg_mock");
    cJSON_AddStringToObject(r, "type", "message");
    cJSON_AddStringToObject(r, "role", "assistant");
    cJSON_AddStringToObject(r, "model", o->ri->model);
    cJSON *content = cJSON_AddArrayToObject(r, "content");
    if (o->with_text) {
      cJSON *b = cJSON_CreateObject();
      cJSON_AddItemToArray(content, b);
      cJSON_AddStringToObject(b, "type", "text");
      cJSON_AddStringToObject(b, "text", text);
    }
    for (int i = 0; i < SRV_MAX_CALLS; i++)
      if (p->tool[i]) cJSON_AddItemToArray(content, call_object(o, i));
    cJSON_AddStringToObject(r, "stop_reason", o->n_calls ? "tool_use" : "end_turn");
    cJSON_AddNullToObject(r, "stop_sequence");
    cJSON *u = cJSON_AddObjectToObject(r, "usage");
    cJSON_AddNumberToObject(u, "input_tokens", (double)lsrv_input_tokens(o));
    cJSON_AddNumberToObject(u, "output_tokens", 1);
    return r;
  }
  case W_GEMINI: {
    r = gemini_chunk(o, text_part(text, strlen(text)), "STOP", 1);
    cJSON *cand = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "candidates"), 0);
    cJSON *parts = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cand, "content"), "parts");
    if (!o->with_text) cJSON_DeleteItemFromArray(parts, 0);
    for (int i = 0; i < SRV_MAX_CALLS; i++)
      if (p->tool[i]) cJSON_AddItemToArray(parts, call_object(o, i));
    return r;
  }
  default:
    r = ollama_line(o, o->with_text ? text : "", o->with_text ? strlen(text) : 0, 1);
    if (o->n_calls) {
      cJSON *calls = cJSON_AddArrayToObject(cJSON_GetObjectItemCaseSensitive(r, "message"), "tool_calls");
      for (int i = 0; i < SRV_MAX_CALLS; i++)
        if (p->tool[i]) cJSON_AddItemToArray(calls, call_object(o, i));
    }
    return r;
  }
}

static const char *malformed_event(wire_kind k) {
  switch (k) {
  case W_ANTHROPIC: return "{\"type\":\"content_block_delta\",\"delta\":{\"text\": oops";
  case W_GEMINI: return "{\"candidates\": [ {\"content\": ";
  case W_OLLAMA: return "{\"message\": {\"content\": \"x\"";
  default: return "{\"choices\": [ {\"delta\": ";
  }
}


/* After the n-th text event (n counts from 1): the streamed faults that come mid-stream. Returns 1
 * when the stream ends here. */
static int stream_fault(out *o, long n) {
  const plan *p = o->p;
  if (p->stall == n || p->reset == n) {
    lsrv_out_flush_merged(o);
    lsrv_push_seg(o->c, p->stall == n ? SEG_STALL : SEG_RESET, p->stall == n ? 0 : 20, NULL, 0);
    return 1;
  }
  if (n != 1) return 0;
  if (p->malformed) lsrv_out_event_raw(o, "content_block_delta", malformed_event(o->kind));
  if (p->oversize > 0) {
    /* The event of a one-character text, framed as the provider frames it, then spliced open. */
    int was_open = o->merge_open;
    ag_buf saved = o->merged;
    o->merge_open = 1;
    ag_buf_init(&o->merged, SRV_BIG);
    lsrv_stream_text_event(o, "\x01", 1);
    ag_buf framed = o->merged;
    o->merged = saved;
    o->merge_open = was_open;
    const char *ev = strstr(ag_buf_str(&framed), "\r\n") + 2; /* past the chunk's size line */
    framed.data[framed.len - 2] = '\0';                       /* and without its closing CRLF */
    lsrv_out_big(o, ev, p->oversize);
    ag_buf_free(&framed);
  }
  if (p->midstream_error) {
    /* Providers end the stream after an error event. */
    lsrv_out_event(o, "error", lsrv_error_object(o, 500, p->midstream_error));
    if (o->merge_open) ag_buf_append(&o->merged, "0\r\n\r\n", 5);
    else lsrv_out_raw(o, "0\r\n\r\n", 5);
    lsrv_out_flush_merged(o);
    lsrv_push_seg(o->c, SEG_END, 0, NULL, 0);
    return 1;
  }
  return 0;
}

void lsrv_respond_stream(out *o, const char *text) {
  const plan *p = o->p;
  lsrv_out_headers(o, 200, o->kind == W_OLLAMA ? "application/x-ndjson" : "text/event-stream", -1);
  if (p->merge) {
    o->merge_open = 1;
    ag_buf_init(&o->merged, SRV_BIG);
  }
  lsrv_stream_prelude(o);
  int ended = stream_fault(o, 0);
  size_t len = o->with_text ? strlen(text) : 0, pos = 0;
  long n = 0;
  while (!ended && pos < len) {
    size_t end = pos;
    if (p->chunk > 0) {
      end = pos + (size_t)p->chunk < len ? pos + (size_t)p->chunk : len;
    } else {
      while (end < len && text[end] != ' ') end++;
      while (end < len && text[end] == ' ') end++;
    }
    lsrv_stream_text_event(o, text + pos, end - pos);
    pos = end;
    ended = stream_fault(o, ++n);
  }
  if (!ended && o->n_calls) stream_calls(o);
  /* A reply without text events (empty, or calls only) still gets its faults. */
  if (!ended && n == 0) ended = stream_fault(o, 1);
  if (!ended) {
    stream_end(o);
    if (o->merge_open) ag_buf_append(&o->merged, "0\r\n\r\n", 5);
    else lsrv_out_raw(o, "0\r\n\r\n", 5);
    lsrv_out_flush_merged(o);
    lsrv_push_seg(o->c, SEG_END, 0, NULL, 0);
  }
  ag_buf_free(&o->merged);
}
