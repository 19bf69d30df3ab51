/* The loopback LLM server (see llm_server.h): raw HTTP/1.1 on libevent bufferevents, in a thread of
 * its own. Each response is planned whole when its request arrives, as a queue of timed segments
 * (bytes, a stall, a reset), which the connection then plays out. */
#include "support/llm_server.h"
#include "support/llm_server_embed.h"

#include "support/loopback.h"
#include "support/wait.h"

#include "common/buf.h"

#include <cjson/cJSON.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define SRV_HEADER_CAP (64u << 10)
#define SRV_BODY_CAP (32u << 20)
#define SRV_BIG ((size_t)1 << 40) /* no cap: the server builds its own output */
#define SRV_MAX_CALLS 8           /* tool calls in one reply: tool, tool2, ..., tool8 */

typedef enum wire_kind { W_NONE, W_OPENAI, W_ANTHROPIC, W_GEMINI, W_OLLAMA } wire_kind;

/* SEG_REPEAT writes its bytes every delay_ms (at least 1 ms) count times (-1: for ever), pausing
 * while the client has not read SRV_REPEAT_HIGH bytes of what was sent: an endless stream or a
 * long bomb costs the server one piece of memory, not the whole body. */
typedef enum seg_kind { SEG_DATA, SEG_STALL, SEG_RESET, SEG_END, SEG_REPEAT } seg_kind;

#define SRV_REPEAT_HIGH (1u << 20)

typedef struct seg {
  struct seg *next;
  long delay_ms;
  long count; /* SEG_REPEAT: writes left, -1 without end */
  int waited;
  seg_kind kind;
  char *data;
  size_t len;
} seg;

typedef struct conn {
  llm_server *srv;
  struct bufferevent *bev;
  struct event *timer;
  seg *head, *tail;
  int busy;          /* a response is being played */
  int reset_pending; /* reset once the output is flushed */
  int stalled;       /* 1: stalled, its last bytes still going out; 2: they are out (counted) */
  struct conn *prev, *next;
} conn;

typedef struct rule {
  char *match;
  char *directives;
  struct rule *next;
} rule;

typedef struct counter {
  char *key;
  int n;
  struct counter *next;
} counter;

struct llm_server {
  loopback lb; /* the server's thread, loop and listener */
  conn *conns; /* server thread only */
  pthread_mutex_t mu;
  rule *rules;
  counter *counters;
  llm_server_request *reqs;
  size_t n_reqs, cap_reqs;
  int record;
  size_t accepted;
  size_t stalls; /* streams stalled with their bytes sent */
  unsigned seed; /* error_pct / stall_pct draws, under mu: the same sequence every run */
  /* Enforced rate limits (llm_server_set_limits), under mu: the accepted requests of the last window. */
  long lim_window_ms, lim_rpm, lim_tpm;
  int64_t *lim_t;  /* ring of start times (monotonic ms) */
  long *lim_tok;   /* and their tokens */
  size_t lim_head, lim_n, lim_cap;
  long lim_tokens;
  size_t lim_rejected;
  size_t in_flight, peak; /* requests answered at this moment, and the most at once (under mu) */
};

/* ---------- plans ---------- */

typedef struct plan {
  char *reply;
  int echo;
  long latency, delay, chunk, split;
  int merge;
  int no_usage; /* OpenAI: no usage in the reply, streamed or not (a local server's way) */
  long status;
  char *error_type, *error_message, *error_code;
  long retry_after, retry_after_ms; /* -1: not sent */
  long times;
  long stall, reset; /* -1: none */
  int malformed;
  long oversize;
  char *midstream_error;
  char *bad_body; /* "html", "garbage" or "empty": a 200 with that body instead of the reply */
  char *tool[SRV_MAX_CALLS], *args[SRV_MAX_CALLS]; /* tool calls in the reply */
  long args_chunk;  /* streamed argument pieces of this many bytes (OpenAI, Anthropic) */
  char *after_tool; /* the reply, with no calls, to a request whose last message is a tool result */
  /* Hostile peers: see the header. */
  int endless, redirect;
  long drip, pad_headers, gzip;
  long error_pct, stall_pct; /* faults drawn per request (soak benchmarks) */
} plan;

static void plan_init(plan *p) {
  memset(p, 0, sizeof *p);
  p->retry_after = p->retry_after_ms = -1;
  p->stall = p->reset = -1;
}

static void plan_free(plan *p) {
  free(p->reply);
  free(p->error_type);
  free(p->error_message);
  free(p->error_code);
  free(p->midstream_error);
  free(p->bad_body);
  for (int i = 0; i < SRV_MAX_CALLS; i++) {
    free(p->tool[i]);
    free(p->args[i]);
  }
  free(p->after_tool);
}

/* "tool", "tool2", ..., "tool8" (base "tool") → 0..7; -1 for any other key. */
static int call_slot(const char *k, const char *base) {
  size_t n = strlen(base);
  if (strncmp(k, base, n) != 0) return -1;
  if (!k[n]) return 0;
  return k[n] >= '2' && k[n] <= '0' + SRV_MAX_CALLS && !k[n + 1] ? k[n] - '1' : -1;
}

static int n_calls(const plan *p) {
  int n = 0;
  for (int i = 0; i < SRV_MAX_CALLS; i++) n += p->tool[i] != NULL;
  return n;
}

static void set_str(char **dst, const char *v) {
  free(*dst);
  *dst = strdup(v);
}

static int plan_set(plan *p, const char *k, const char *v) {
  long n = strtol(v, NULL, 10);
  if (!strcmp(k, "reply")) set_str(&p->reply, v);
  else if (!strcmp(k, "echo")) p->echo = (int)n;
  else if (!strcmp(k, "latency")) p->latency = n;
  else if (!strcmp(k, "delay")) p->delay = n;
  else if (!strcmp(k, "chunk")) p->chunk = n;
  else if (!strcmp(k, "split")) p->split = n;
  else if (!strcmp(k, "merge")) p->merge = (int)n;
  else if (!strcmp(k, "no_usage")) p->no_usage = (int)n;
  else if (!strcmp(k, "status")) p->status = n;
  else if (!strcmp(k, "error_type")) set_str(&p->error_type, v);
  else if (!strcmp(k, "error_message")) set_str(&p->error_message, v);
  else if (!strcmp(k, "error_code")) set_str(&p->error_code, v);
  else if (!strcmp(k, "retry_after")) p->retry_after = n;
  else if (!strcmp(k, "retry_after_ms")) p->retry_after_ms = n;
  else if (!strcmp(k, "times")) p->times = n;
  else if (!strcmp(k, "stall")) p->stall = n;
  else if (!strcmp(k, "reset")) p->reset = n;
  else if (!strcmp(k, "malformed")) p->malformed = (int)n;
  else if (!strcmp(k, "oversize")) p->oversize = n;
  else if (!strcmp(k, "midstream_error")) set_str(&p->midstream_error, v);
  else if (!strcmp(k, "body")) set_str(&p->bad_body, v);
  else if (call_slot(k, "tool") >= 0) set_str(&p->tool[call_slot(k, "tool")], v);
  else if (call_slot(k, "args") >= 0) set_str(&p->args[call_slot(k, "args")], v);
  else if (!strcmp(k, "args_chunk")) p->args_chunk = n;
  else if (!strcmp(k, "after_tool")) set_str(&p->after_tool, v);
  else if (!strcmp(k, "endless")) p->endless = (int)n;
  else if (!strcmp(k, "drip")) p->drip = n;
  else if (!strcmp(k, "redirect")) p->redirect = (int)n;
  else if (!strcmp(k, "headers")) p->pad_headers = n;
  else if (!strcmp(k, "gzip")) p->gzip = n;
  else if (!strcmp(k, "error_pct")) p->error_pct = n;
  else if (!strcmp(k, "stall_pct")) p->stall_pct = n;
  else return -1;
  return 0;
}

/* Parses "key=value ..." from s up to its end or "]]"; *end (may be NULL) gets where it stopped. */
static int plan_parse(plan *p, const char *s, const char **end) {
  int rc = 0;
  for (;;) {
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    if (!*s || (s[0] == ']' && s[1] == ']')) break;
    char key[64];
    size_t k = 0;
    while ((*s >= 'a' && *s <= 'z') || *s == '_' || (k && *s >= '0' && *s <= '9')) {
      if (k + 1 < sizeof key) key[k++] = *s;
      s++;
    }
    key[k] = '\0';
    if (!k) return -1;
    ag_buf v;
    ag_buf_init(&v, SRV_BIG);
    if (*s == '=') {
      s++;
      if (*s == '"') {
        s++;
        while (*s && *s != '"') {
          char c = *s++;
          if (c == '\\' && *s) {
            c = *s++;
            if (c == 'n') c = '\n';
          }
          ag_buf_append(&v, &c, 1);
        }
        if (*s == '"') s++;
      } else {
        const char *b = s;
        while (*s && *s != ' ' && *s != '\t' && *s != '\n' && !(s[0] == ']' && s[1] == ']')) s++;
        ag_buf_append(&v, b, (size_t)(s - b));
      }
    } else {
      ag_buf_appends(&v, "1");
    }
    if (plan_set(p, key, ag_buf_str(&v))) rc = -1;
    ag_buf_free(&v);
  }
  if (end) *end = s;
  return rc;
}

/* Applies the first directive in text; appends its raw text to key. */
static void plan_from_text(plan *p, const char *text, ag_buf *key) {
  const char *d = text ? strstr(text, "[[mock") : NULL;
  if (!d) return;
  const char *end = NULL;
  plan_parse(p, d + 6, &end);
  ag_buf_append(key, d, (size_t)(end - d));
  ag_buf_appends(key, "|");
}

/* ---------- request bodies ---------- */

typedef struct req_info {
  wire_kind kind;
  int stream;
  char *model;
  ag_buf system; /* all system text */
  ag_buf last_user;
  ag_buf all_text;
  int last_is_result; /* the last message is a tool result */
  int include_usage;  /* OpenAI streaming: stream_options.include_usage asked for the usage chunk */
  char *key; /* the credential the request carried */
  const char *path; /* the request's path (not owned) */
} req_info;

static void text_of(const cJSON *content, ag_buf *out) {
  if (cJSON_IsString(content)) {
    ag_buf_appends(out, content->valuestring);
    return;
  }
  const cJSON *part;
  cJSON_ArrayForEach(part, content) { /* Anthropic blocks, Gemini parts */
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(part, "text");
    if (cJSON_IsString(t)) ag_buf_appends(out, t->valuestring);
  }
}

/* Whether a message is a tool result: OpenAI/Ollama role "tool", an Anthropic tool_result block, a
 * Gemini functionResponse part. */
static int is_tool_result(const char *role, const cJSON *content) {
  if (!strcmp(role, "tool")) return 1;
  const cJSON *part, *parts = cJSON_IsArray(content) ? content : NULL;
  cJSON_ArrayForEach(part, parts) {
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(part, "type");
    if (cJSON_GetObjectItemCaseSensitive(part, "functionResponse") ||
        (cJSON_IsString(type) && !strcmp(type->valuestring, "tool_result")))
      return 1;
  }
  return 0;
}

static void read_messages(req_info *ri, const cJSON *msgs, const char *content_key, const char *user_role) {
  const cJSON *m;
  cJSON_ArrayForEach(m, msgs) {
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(m, content_key);
    const char *r = cJSON_IsString(role) ? role->valuestring : "";
    if (!strcmp(r, "system")) {
      text_of(content, &ri->system);
    } else if (!strcmp(r, user_role)) {
      /* A user message that only carries tool results keeps the last user text (and its directive). */
      ag_buf t;
      ag_buf_init(&t, SRV_BIG);
      text_of(content, &t);
      if (t.len || !is_tool_result(r, content)) {
        ag_buf_reset(&ri->last_user);
        ag_buf_appends(&ri->last_user, ag_buf_str(&t));
      }
      ag_buf_free(&t);
    }
    ri->last_is_result = is_tool_result(r, content);
    text_of(content, &ri->all_text);
  }
}

static char *header_value(const char *headers, const char *name) {
  size_t n = strlen(name);
  for (const char *p = headers; p && *p;) {
    const char *eol = strstr(p, "\r\n");
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    if (len > n && strncasecmp(p, name, n) == 0 && p[n] == ':') {
      const char *v = p + n + 1;
      while (*v == ' ') v++;
      return strndup(v, (size_t)(p + len - v));
    }
    p = eol ? eol + 2 : NULL;
  }
  return NULL;
}

static wire_kind route(const char *path, int *gemini_stream) {
  if (strstr(path, ":streamGenerateContent")) {
    *gemini_stream = 1;
    return W_GEMINI;
  }
  if (strstr(path, ":generateContent")) return W_GEMINI;
  size_t n = strlen(path);
  const char *q = strchr(path, '?');
  if (q) n = (size_t)(q - path);
  if (n >= 17 && !strncmp(path + n - 17, "/chat/completions", 17)) return W_OPENAI;
  if (n >= 12 && !strncmp(path + n - 12, "/v1/messages", 12)) return W_ANTHROPIC;
  if (n >= 9 && !strncmp(path + n - 9, "/api/chat", 9)) return W_OLLAMA;
  return W_NONE;
}

static int parse_request(req_info *ri, const char *path, const char *headers, const cJSON *root) {
  int gstream = 0;
  ri->kind = route(path, &gstream);
  ri->path = path;
  const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
  const cJSON *stream = cJSON_GetObjectItemCaseSensitive(root, "stream");
  ri->model = strdup(cJSON_IsString(model) ? model->valuestring : "mock-model");
  char *auth = NULL;
  switch (ri->kind) {
  case W_OPENAI:
    ri->stream = cJSON_IsTrue(stream);
    ri->include_usage = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(root, "stream_options"), "include_usage"));
    read_messages(ri, cJSON_GetObjectItemCaseSensitive(root, "messages"), "content", "user");
    auth = header_value(headers, "authorization");
    break;
  case W_OLLAMA:
    ri->stream = !cJSON_IsFalse(stream);
    read_messages(ri, cJSON_GetObjectItemCaseSensitive(root, "messages"), "content", "user");
    auth = header_value(headers, "authorization");
    break;
  case W_ANTHROPIC:
    ri->stream = cJSON_IsTrue(stream);
    text_of(cJSON_GetObjectItemCaseSensitive(root, "system"), &ri->system);
    read_messages(ri, cJSON_GetObjectItemCaseSensitive(root, "messages"), "content", "user");
    auth = header_value(headers, "x-api-key");
    break;
  case W_GEMINI: {
    ri->stream = gstream;
    const cJSON *si = cJSON_GetObjectItemCaseSensitive(root, "systemInstruction");
    text_of(cJSON_GetObjectItemCaseSensitive(si, "parts"), &ri->system);
    read_messages(ri, cJSON_GetObjectItemCaseSensitive(root, "contents"), "parts", "user");
    auth = header_value(headers, "x-goog-api-key");
    const char *m = strstr(path, "/models/");
    if (m) {
      m += 8;
      const char *c = strchr(m, ':');
      free(ri->model);
      ri->model = strndup(m, c ? (size_t)(c - m) : strlen(m));
    }
    break;
  }
  default: return -1;
  }
  if (auth && !strncmp(auth, "Bearer ", 7)) memmove(auth, auth + 7, strlen(auth + 7) + 1);
  ri->key = auth ? auth : strdup("");
  return 0;
}

static void req_info_free(req_info *ri) {
  free(ri->model);
  free(ri->key);
  ag_buf_free(&ri->system);
  ag_buf_free(&ri->last_user);
  ag_buf_free(&ri->all_text);
}

/* ---------- response building ---------- */

typedef struct out {
  conn *c;
  wire_kind kind;
  const plan *p;
  const req_info *ri;
  int merge_open;
  ag_buf merged;
  long next_delay;
  int n_text_events;
  int n_calls;   /* tool calls in this reply */
  int with_text; /* the reply has text (always without calls; with them, when reply= or echo is set) */
  int text_open; /* Anthropic: the text block (index 0) is open */
  char limit_headers[512]; /* the rate-limit headers of this reply ("" without limits) */
} out;

static void push_seg(conn *c, seg_kind kind, long delay, const char *data, size_t len) {
  seg *s = calloc(1, sizeof *s);
  s->kind = kind;
  s->delay_ms = delay;
  if (len) {
    s->data = malloc(len);
    memcpy(s->data, data, len);
    s->len = len;
  }
  if (c->tail) c->tail->next = s;
  else c->head = s;
  c->tail = s;
}

/* Raw bytes, split into pieces when asked. */
static void out_raw(out *o, const char *data, size_t len) {
  if (o->merge_open) {
    ag_buf_append(&o->merged, data, len);
    return;
  }
  /* A drip sends every byte alone, drip ms apart, the headers too. */
  long drip = o->p->drip;
  size_t step = drip > 0 ? 1 : o->p->split > 0 ? (size_t)o->p->split : len;
  for (size_t off = 0; off < len; off += step) {
    size_t n = len - off < step ? len - off : step;
    push_seg(o->c, SEG_DATA, drip > o->next_delay ? drip : o->next_delay, data + off, n);
    o->next_delay = o->p->split > 0 ? 1 : 0;
  }
}

static void out_flush_merged(out *o) {
  if (!o->merge_open) return;
  o->merge_open = 0;
  out_raw(o, ag_buf_str(&o->merged), o->merged.len);
  ag_buf_reset(&o->merged);
}

/* data framed as one chunk of chunked transfer encoding, into b (initialised here). */
static void chunk_frame(ag_buf *b, const char *data, size_t len) {
  char hex[32];
  int n = snprintf(hex, sizeof hex, "%zx\r\n", len);
  ag_buf_init(b, SRV_BIG);
  ag_buf_append(b, hex, (size_t)n);
  ag_buf_append(b, data, len);
  ag_buf_append(b, "\r\n", 2);
}

/* One body chunk in chunked transfer encoding. */
static void out_chunk(out *o, const char *data, size_t len) {
  ag_buf b;
  chunk_frame(&b, data, len);
  out_raw(o, ag_buf_str(&b), b.len);
  ag_buf_free(&b);
  if (!o->merge_open) o->next_delay = o->p->delay;
}

/* One event in the provider's framing. name is the SSE event name (Anthropic) or NULL. */
static void out_event_raw(out *o, const char *name, const char *json) {
  ag_buf b;
  ag_buf_init(&b, SRV_BIG);
  switch (o->kind) {
  case W_ANTHROPIC: ag_buf_printf(&b, "event: %s\ndata: %s\n\n", name, json); break;
  case W_GEMINI: ag_buf_printf(&b, "data: %s\r\n\r\n", json); break;
  case W_OLLAMA: ag_buf_printf(&b, "%s\n", json); break;
  default: ag_buf_printf(&b, "data: %s\n\n", json); break;
  }
  out_chunk(o, ag_buf_str(&b), b.len);
  ag_buf_free(&b);
}

static void out_event(out *o, const char *name, cJSON *obj) {
  char *json = cJSON_PrintUnformatted(obj);
  cJSON_Delete(obj);
  out_event_raw(o, name, json);
  free(json);
}

/* obj[key] = the n bytes of text t (a copy). */
static void add_text_n(cJSON *obj, const char *key, const char *t, size_t n) {
  char *s = strndup(t, n);
  cJSON_AddStringToObject(obj, key, s);
  free(s);
}

static long input_tokens(const out *o) { return (long)(o->ri->all_text.len + o->ri->system.len) / 4 + 1; }

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
    cJSON_AddNumberToObject(u, "promptTokenCount", (double)input_tokens(o));
    cJSON_AddNumberToObject(u, "candidatesTokenCount", o->n_text_events);
    cJSON_AddNumberToObject(u, "totalTokenCount", (double)(input_tokens(o) + o->n_text_events));
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
    cJSON_AddNumberToObject(r, "prompt_eval_count", (double)input_tokens(o));
    cJSON_AddNumberToObject(r, "eval_count", o->n_text_events);
  }
  return r;
}

static void stream_text_event(out *o, const char *t, size_t n) {
  o->n_text_events++;
  switch (o->kind) {
  case W_OPENAI: {
    cJSON *d = cJSON_CreateObject();
    add_text_n(d, "content", t, n);
    out_event(o, NULL, openai_chunk(o, d, NULL));
    break;
  }
  case W_ANTHROPIC: {
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "type", "content_block_delta");
    cJSON_AddNumberToObject(r, "index", 0);
    cJSON *d = cJSON_AddObjectToObject(r, "delta");
    cJSON_AddStringToObject(d, "type", "text_delta");
    add_text_n(d, "text", t, n);
    out_event(o, "content_block_delta", r);
    break;
  }
  case W_GEMINI: out_event(o, NULL, gemini_chunk(o, text_part(t, n), NULL, 0)); break;
  default: out_event(o, NULL, ollama_line(o, t, n, 0)); break;
  }
}

static void stream_prelude(out *o) {
  if (o->kind == W_OPENAI) {
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "role", "assistant");
    cJSON_AddStringToObject(d, "content", "");
    out_event(o, NULL, openai_chunk(o, d, NULL));
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
    cJSON_AddNumberToObject(u, "input_tokens", (double)input_tokens(o));
    cJSON_AddNumberToObject(u, "output_tokens", 1);
    out_event(o, "message_start", r);
    if (o->with_text) { /* tool_use blocks start later, in stream_calls */
      r = cJSON_CreateObject();
      cJSON_AddStringToObject(r, "type", "content_block_start");
      cJSON_AddNumberToObject(r, "index", 0);
      cJSON *b = cJSON_AddObjectToObject(r, "content_block");
      cJSON_AddStringToObject(b, "type", "text");
      cJSON_AddStringToObject(b, "text", "");
      out_event(o, "content_block_start", r);
      o->text_open = 1;
    }
    out_event_raw(o, "ping", "{\"type\": \"ping\"}");
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
  out_event_raw(o, "content_block_stop", ev);
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
    out_event(o, NULL, r);
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
      out_event(o, NULL, gemini_chunk(o, fc, NULL, 0));
    } else if (o->kind == W_OPENAI) {
      out_event(o, NULL, openai_chunk(o, openai_call_delta(k, id, p->tool[i], "", 0), NULL));
      for (size_t pos = 0, n; pos < len; pos += n) {
        n = piece_len(p, args, pos, len);
        out_event(o, NULL, openai_chunk(o, openai_call_delta(k, NULL, NULL, args + pos, n), NULL));
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
      out_event(o, "content_block_start", r);
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
        out_event(o, "content_block_delta", r);
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
    out_event(o, NULL, openai_chunk(o, cJSON_CreateObject(), finish_openai));
    if (!o->ri->include_usage || o->p->no_usage) { /* as OpenAI: the usage chunk only when asked for */
      out_event_raw(o, NULL, "[DONE]");
      break;
    }
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "id", "chatcmpl-mock");
    cJSON_AddStringToObject(r, "object", "chat.completion.chunk");
    cJSON_AddStringToObject(r, "model", o->ri->model);
    cJSON_AddArrayToObject(r, "choices");
    cJSON *u = cJSON_AddObjectToObject(r, "usage");
    cJSON_AddNumberToObject(u, "prompt_tokens", (double)input_tokens(o));
    cJSON_AddNumberToObject(u, "completion_tokens", o->n_text_events);
    cJSON_AddNumberToObject(u, "total_tokens", (double)(input_tokens(o) + o->n_text_events));
    out_event(o, NULL, r);
    out_event_raw(o, NULL, "[DONE]");
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
    out_event(o, "message_delta", r);
    out_event_raw(o, "message_stop", "{\"type\":\"message_stop\"}");
    break;
  }
  case W_GEMINI: out_event(o, NULL, gemini_chunk(o, text_part("", 0), "STOP", 1)); break;
  default: out_event(o, NULL, ollama_line(o, "", 0, 1)); break;
  }
}

static const char *default_error_type(wire_kind k, long status) {
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
static cJSON *error_object(const out *o, long status, const char *type) {
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

static void out_headers(out *o, long status, const char *ctype, long content_length) {
  ag_buf b;
  ag_buf_init(&b, SRV_BIG);
  ag_buf_printf(&b, "HTTP/1.1 %ld %s\r\nContent-Type: %s\r\n", status, status < 300 ? "OK" : "Error", ctype);
  if (content_length >= 0) ag_buf_printf(&b, "Content-Length: %ld\r\n", content_length);
  else ag_buf_appends(&b, "Transfer-Encoding: chunked\r\nCache-Control: no-cache\r\n");
  if (o->p->retry_after >= 0) ag_buf_printf(&b, "Retry-After: %ld\r\n", o->p->retry_after);
  if (o->p->retry_after_ms >= 0) ag_buf_printf(&b, "retry-after-ms: %ld\r\n", o->p->retry_after_ms);
  if (status >= 300 && status < 400) ag_buf_printf(&b, "Location: %s\r\n", o->ri->path);
  if (o->p->gzip > 0) ag_buf_appends(&b, "Content-Encoding: gzip\r\n");
  ag_buf_appends(&b, o->limit_headers);
  char pad[1000];
  memset(pad, 'x', sizeof pad);
  for (long i = 0; b.len < (size_t)o->p->pad_headers; i++) {
    ag_buf_printf(&b, "X-Pad-%06ld: ", i);
    ag_buf_append(&b, pad, sizeof pad);
    ag_buf_appends(&b, "\r\n");
  }
  ag_buf_appends(&b, "\r\n");
  o->next_delay = o->p->latency;
  out_raw(o, ag_buf_str(&b), b.len);
  ag_buf_free(&b);
}

static void out_whole(out *o, long status, const char *body, size_t len) {
  out_headers(o, status, "application/json", (long)len);
  if (o->p->reset >= 0) {
    out_raw(o, body, len / 2);
    push_seg(o->c, SEG_RESET, 20, NULL, 0);
    return;
  }
  if (o->p->stall >= 0) {
    push_seg(o->c, SEG_STALL, 0, NULL, 0);
    return;
  }
  if (len) out_raw(o, body, len);
  push_seg(o->c, SEG_END, 0, NULL, 0);
}

static void respond_json(out *o, long status, cJSON *obj) {
  char *s = cJSON_PrintUnformatted(obj);
  cJSON_Delete(obj);
  out_whole(o, status, s, strlen(s));
  free(s);
}

/* A whole reply: its text (when it has any) and its calls. */
static cJSON *whole_reply(out *o, const char *text) {
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
    cJSON_AddNumberToObject(u, "prompt_tokens", (double)input_tokens(o));
    cJSON_AddNumberToObject(u, "completion_tokens", 1);
    cJSON_AddNumberToObject(u, "total_tokens", (double)input_tokens(o) + 1);
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
    cJSON_AddNumberToObject(u, "input_tokens", (double)input_tokens(o));
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

static void out_big(out *o, const char *framed, long bytes);

/* After the n-th text event (n counts from 1): the streamed faults that come mid-stream. Returns 1
 * when the stream ends here. */
static int stream_fault(out *o, long n) {
  const plan *p = o->p;
  if (p->stall == n || p->reset == n) {
    out_flush_merged(o);
    push_seg(o->c, p->stall == n ? SEG_STALL : SEG_RESET, p->stall == n ? 0 : 20, NULL, 0);
    return 1;
  }
  if (n != 1) return 0;
  if (p->malformed) out_event_raw(o, "content_block_delta", malformed_event(o->kind));
  if (p->oversize > 0) {
    /* The event of a one-character text, framed as the provider frames it, then spliced open. */
    int was_open = o->merge_open;
    ag_buf saved = o->merged;
    o->merge_open = 1;
    ag_buf_init(&o->merged, SRV_BIG);
    stream_text_event(o, "\x01", 1);
    ag_buf framed = o->merged;
    o->merged = saved;
    o->merge_open = was_open;
    const char *ev = strstr(ag_buf_str(&framed), "\r\n") + 2; /* past the chunk's size line */
    framed.data[framed.len - 2] = '\0';                       /* and without its closing CRLF */
    out_big(o, ev, p->oversize);
    ag_buf_free(&framed);
  }
  if (p->midstream_error) {
    /* Providers end the stream after an error event. */
    out_event(o, "error", error_object(o, 500, p->midstream_error));
    if (o->merge_open) ag_buf_append(&o->merged, "0\r\n\r\n", 5);
    else out_raw(o, "0\r\n\r\n", 5);
    out_flush_merged(o);
    push_seg(o->c, SEG_END, 0, NULL, 0);
    return 1;
  }
  return 0;
}

static void respond_stream(out *o, const char *text) {
  const plan *p = o->p;
  out_headers(o, 200, o->kind == W_OLLAMA ? "application/x-ndjson" : "text/event-stream", -1);
  if (p->merge) {
    o->merge_open = 1;
    ag_buf_init(&o->merged, SRV_BIG);
  }
  stream_prelude(o);
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
    stream_text_event(o, text + pos, end - pos);
    pos = end;
    ended = stream_fault(o, ++n);
  }
  if (!ended && o->n_calls) stream_calls(o);
  /* A reply without text events (empty, or calls only) still gets its faults. */
  if (!ended && n == 0) ended = stream_fault(o, 1);
  if (!ended) {
    stream_end(o);
    if (o->merge_open) ag_buf_append(&o->merged, "0\r\n\r\n", 5);
    else out_raw(o, "0\r\n\r\n", 5);
    out_flush_merged(o);
    push_seg(o->c, SEG_END, 0, NULL, 0);
  }
  ag_buf_free(&o->merged);
}

/* ---------- hostile peers ---------- */

/* Bytes written again and again (see SEG_REPEAT), each time as one body chunk. */
static void out_repeat(out *o, const char *data, size_t len, long count) {
  out_flush_merged(o);
  ag_buf b;
  chunk_frame(&b, data, len);
  push_seg(o->c, SEG_REPEAT, o->p->delay, ag_buf_str(&b), b.len);
  o->c->tail->count = count;
  ag_buf_free(&b);
}

static void out_body_end(out *o) {
  out_raw(o, "0\r\n\r\n", 5);
  push_seg(o->c, SEG_END, 0, NULL, 0);
}

/* framed is JSON holding one text "\u0001": sends it with that text replaced by bytes x's, the
 * x's as a repeated piece (a 10 MB line costs the server 64 KB). */
static void out_big(out *o, const char *framed, long bytes) {
  const char *mark = strstr(framed, "\\u0001");
  if (!mark) return;
  out_flush_merged(o);
  out_chunk(o, framed, (size_t)(mark - framed));
  char piece[65536];
  memset(piece, 'x', sizeof piece);
  if (bytes >= (long)sizeof piece) out_repeat(o, piece, sizeof piece, bytes / (long)sizeof piece);
  if (bytes % (long)sizeof piece) out_chunk(o, piece, (size_t)(bytes % (long)sizeof piece));
  out_chunk(o, mark + 6, strlen(mark + 6));
}

typedef struct bitw {
  unsigned char b[64];
  size_t n; /* bits written */
} bitw;

/* Deflate packs header fields from their least significant bit and Huffman codes from their most. */
static void bits_put(bitw *w, unsigned v, int count, int code) {
  for (int i = 0; i < count; i++) {
    unsigned bit = code ? (v >> (count - 1 - i)) & 1u : (v >> i) & 1u;
    if (bit) w->b[w->n / 8] |= (unsigned char)(1u << (w->n % 8));
    w->n++;
  }
}

/* A gzip bomb: one fixed-Huffman deflate block holding a literal 0 and then (length 258, distance 1)
 * pairs, 13 bits for 258 zero bytes, then the block's end. From its third byte on the stream repeats
 * every 8 pairs (13 bytes), so a stream of 16 pairs gives the head, the period and the tail of one
 * with 8 * 4096 * blocks + 8 pairs: 8.4 MB of zeros per 53 KB block sent. The trailer's CRC is not
 * that of the data: a client must stop long before it. */
static void respond_gzip(out *o) {
  bitw w;
  memset(&w, 0, sizeof w);
  bits_put(&w, 1, 1, 0);    /* BFINAL */
  bits_put(&w, 1, 2, 0);    /* BTYPE 01: fixed Huffman codes */
  bits_put(&w, 0x30, 8, 1); /* literal 0 */
  for (int i = 0; i < 16; i++) {
    bits_put(&w, 0xC5, 8, 1); /* length code 285: 258 bytes */
    bits_put(&w, 0, 5, 1);    /* distance code 0: distance 1 */
  }
  bits_put(&w, 0, 7, 1); /* end of block */
  size_t total = (w.n + 7) / 8;
  out_headers(o, 200, o->ri->stream && o->kind != W_OLLAMA ? "text/event-stream" : "application/json", -1);
  unsigned char head[12] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, w.b[0], w.b[1]};
  out_chunk(o, (const char *)head, sizeof head);
  ag_buf period;
  ag_buf_init(&period, SRV_BIG);
  for (int i = 0; i < 4096; i++) ag_buf_append(&period, (const char *)w.b + 2, 13);
  out_repeat(o, ag_buf_str(&period), period.len, o->p->gzip);
  ag_buf_free(&period);
  unsigned char tail[64];
  size_t n = total - 15;
  memcpy(tail, w.b + 15, n);
  memset(tail + n, 0, 8); /* CRC32 and ISIZE */
  out_chunk(o, (const char *)tail, n + 8);
  out_body_end(o);
}

/* A reply that never ends: text events without end (streamed), or a JSON body whose text string
 * never closes (whole). */
static void respond_endless(out *o) {
  ag_buf b;
  ag_buf_init(&b, SRV_BIG);
  if (o->ri->stream) {
    out_headers(o, 200, o->kind == W_OLLAMA ? "application/x-ndjson" : "text/event-stream", -1);
    stream_prelude(o);
    char text[1024];
    memset(text, 'x', sizeof text - 1);
    text[sizeof text - 1] = '\0';
    /* Sixteen events a piece, built as the provider frames them. */
    o->merge_open = 1;
    ag_buf_init(&o->merged, SRV_BIG);
    for (int i = 0; i < 16; i++) stream_text_event(o, text, strlen(text));
    o->merge_open = 0;
    /* The merged events are chunk-framed already: send them raw, again and again. */
    push_seg(o->c, SEG_REPEAT, o->p->delay, ag_buf_str(&o->merged), o->merged.len);
    o->c->tail->count = -1;
    ag_buf_free(&o->merged);
  } else {
    out_headers(o, 200, "application/json", -1);
    const char *open = o->kind == W_ANTHROPIC ? "{\"type\":\"message\",\"content\":[{\"type\":\"text\",\"text\":\""
                       : o->kind == W_GEMINI  ? "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\""
                       : o->kind == W_OLLAMA  ? "{\"message\":{\"role\":\"assistant\",\"content\":\""
                                              : "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"";
    out_chunk(o, open, strlen(open));
    for (int i = 0; i < 16384; i++) ag_buf_append(&b, "x", 1);
    out_repeat(o, ag_buf_str(&b), b.len, -1);
  }
  ag_buf_free(&b);
}

/* Event-stream framing around nothing a client can use: comments, unknown fields, events without
 * data, data that is not JSON, JSON of the wrong shape, invalid UTF-8, a NUL. */
static void respond_sse_garbage(out *o) {
  static const char sse[] = ": comment\n\nevent: \x01\x02\x03\nretry: banana\nid: 7\n\n"
                            "data: {not json\n\ndata: [1, 2, 3]\n\ndata: {\"choices\": 7, \"delta\": null}\n\n"
                            "data: \xff\xfe\xfd\n\nevent: message_start\ndata: \"a string\"\n\n"
                            "data\n\n:::\n\nx\0y\n\n";
  static const char nd[] = "{\"message\": 7}\n[1, 2, 3]\n\xff\xfe\n\"done\"\n{\"done\": \"yes\", \"message\": []}\n"
                           "x\0y\n";
  int ndjson = o->kind == W_OLLAMA;
  out_headers(o, 200, ndjson ? "application/x-ndjson" : "text/event-stream", -1);
  out_chunk(o, ndjson ? nd : sse, ndjson ? sizeof nd - 1 : sizeof sse - 1);
  out_body_end(o);
}

/* The hostile replies (see the header); returns 1 when the plan asked for one and it was queued. */
static int respond_hostile(out *o) {
  const plan *p = o->p;
  if (p->redirect) {
    out_headers(o, 302, "text/html", 0); /* Location: the same path again, a loop when followed */
    push_seg(o->c, SEG_END, 0, NULL, 0);
  } else if (p->gzip > 0) {
    respond_gzip(o);
  } else if (p->endless) {
    respond_endless(o);
  } else if (p->bad_body && !strcmp(p->bad_body, "sse_garbage")) {
    respond_sse_garbage(o);
  } else {
    return 0;
  }
  return 1;
}

static int64_t lim_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The enforced limits: a request past rpm requests or tpm tokens in the last window is answered 429 with
 * the providers' headers (Retry-After, retry-after-ms, x-ratelimit-*, anthropic-ratelimit-*-remaining and
 * -reset); an accepted one says what remains. Both kinds of header go to every wire format. */
static void limits_check(llm_server *s, out *o, plan *p, long tokens) {
  pthread_mutex_lock(&s->mu);
  if (!s->lim_rpm && !s->lim_tpm) {
    pthread_mutex_unlock(&s->mu);
    return;
  }
  int64_t now = lim_now_ms();
  while (s->lim_n && s->lim_t[s->lim_head] + s->lim_window_ms <= now) {
    s->lim_tokens -= s->lim_tok[s->lim_head];
    s->lim_head = (s->lim_head + 1) % s->lim_cap;
    s->lim_n--;
  }
  int over = (s->lim_rpm && (long)s->lim_n >= s->lim_rpm) ||
             (s->lim_tpm && s->lim_n && s->lim_tokens + tokens > s->lim_tpm);
  long reset = s->lim_n ? (long)(s->lim_t[s->lim_head] + s->lim_window_ms - now) : s->lim_window_ms;
  if (reset < 1) reset = 1;
  if (!over) {
    if (s->lim_n == s->lim_cap) {
      size_t ncap = s->lim_cap ? s->lim_cap * 2 : 64;
      int64_t *t = malloc(ncap * sizeof *t);
      long *k = malloc(ncap * sizeof *k);
      for (size_t i = 0; i < s->lim_n; i++) {
        t[i] = s->lim_t[(s->lim_head + i) % s->lim_cap];
        k[i] = s->lim_tok[(s->lim_head + i) % s->lim_cap];
      }
      free(s->lim_t);
      free(s->lim_tok);
      s->lim_t = t, s->lim_tok = k, s->lim_cap = ncap, s->lim_head = 0;
    }
    s->lim_t[(s->lim_head + s->lim_n) % s->lim_cap] = now;
    s->lim_tok[(s->lim_head + s->lim_n) % s->lim_cap] = tokens;
    s->lim_n++;
    s->lim_tokens += tokens;
  } else {
    s->lim_rejected++;
  }
  long left = s->lim_rpm ? s->lim_rpm - (long)s->lim_n : 1000000;
  if (left < 0) left = 0;
  pthread_mutex_unlock(&s->mu);
  char at[40];
  time_t reset_at = time(NULL) + (reset + 999) / 1000;
  strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", gmtime(&reset_at));
  snprintf(o->limit_headers, sizeof o->limit_headers,
           "x-ratelimit-limit-requests: %ld\r\nx-ratelimit-remaining-requests: %ld\r\nx-ratelimit-reset-requests: %ldms\r\n"
           "anthropic-ratelimit-requests-remaining: %ld\r\nanthropic-ratelimit-requests-reset: %s\r\n",
           s->lim_rpm, over ? 0 : left, reset, over ? 0 : left, at);
  if (!over) return;
  p->status = 429;
  set_str(&p->error_type, "rate_limit_exceeded");
  set_str(&p->error_message, "Rate limit reached for requests");
  p->retry_after = (reset + 999) / 1000;
  p->retry_after_ms = reset;
  p->stall = p->reset = -1;
  p->endless = p->redirect = 0;
  p->drip = p->pad_headers = p->gzip = 0;
}

static void respond(conn *c, const char *method, const char *path, const char *headers, const char *body,
                    size_t body_len) {
  llm_server *s = c->srv;
  plan p;
  plan_init(&p);
  req_info ri;
  memset(&ri, 0, sizeof ri);
  ag_buf_init(&ri.system, SRV_BIG);
  ag_buf_init(&ri.last_user, SRV_BIG);
  ag_buf_init(&ri.all_text, SRV_BIG);
  out o;
  memset(&o, 0, sizeof o);
  o.c = c;
  o.p = &p;
  o.ri = &ri;
  ag_buf key, text;
  ag_buf_init(&key, SRV_BIG);
  ag_buf_init(&text, SRV_BIG);
  cJSON *root = cJSON_ParseWithLength(body, body_len);
  char *embedded = NULL;
  long embed_status = 0;
  if (!strcmp(method, "POST") && llm_server_embed_reply(path, root, &embed_status, &embedded)) {
    out_whole(&o, embed_status, embedded, strlen(embedded)); /* tests/support/llm_server_embed.c */
    free(embedded);
    goto done;
  }
  if (strcmp(method, "POST") != 0 || !root || parse_request(&ri, path, headers, root) != 0) {
    o.kind = W_OLLAMA; /* {"error": "..."} */
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "error", root ? "unknown route" : "request body is not JSON");
    respond_json(&o, root ? 404 : 400, e);
    goto done;
  }
  o.kind = ri.kind;
  /* Rules, then the system prompt's directive, then the last user message's. */
  pthread_mutex_lock(&s->mu);
  int idx = 0;
  for (rule *r = s->rules; r; r = r->next, idx++) {
    if (!r->match[0] || strstr(ag_buf_str(&ri.system), r->match) || strstr(ag_buf_str(&ri.last_user), r->match)) {
      plan_parse(&p, r->directives, NULL);
      ag_buf_printf(&key, "rule%d|", idx);
      break;
    }
  }
  pthread_mutex_unlock(&s->mu);
  plan_from_text(&p, ag_buf_str(&ri.system), &key);
  plan_from_text(&p, ag_buf_str(&ri.last_user), &key);
  ag_buf_printf(&key, "%d", (int)ri.kind);
  if (p.times > 0) {
    pthread_mutex_lock(&s->mu);
    counter *ct = s->counters;
    while (ct && strcmp(ct->key, ag_buf_str(&key)) != 0) ct = ct->next;
    if (!ct) {
      ct = calloc(1, sizeof *ct);
      ct->key = strdup(ag_buf_str(&key));
      ct->next = s->counters;
      s->counters = ct;
    }
    int n = ++ct->n;
    pthread_mutex_unlock(&s->mu);
    if (n > p.times) { /* this plan's faults are used up */
      p.status = 0;
      p.retry_after = p.retry_after_ms = -1;
      p.stall = p.reset = -1;
      p.malformed = 0;
      p.oversize = 0;
      free(p.midstream_error);
      p.midstream_error = NULL;
      free(p.bad_body);
      p.bad_body = NULL;
      p.endless = p.redirect = 0;
      p.drip = p.pad_headers = p.gzip = 0;
    }
  }
  if (p.error_pct > 0 || p.stall_pct > 0) {
    pthread_mutex_lock(&s->mu);
    long draw = (long)(rand_r(&s->seed) % 100);
    pthread_mutex_unlock(&s->mu);
    if (draw < p.error_pct) p.status = 500;
    else if (draw < p.error_pct + p.stall_pct) p.stall = ri.stream ? 1 : 0;
  }
  if (p.after_tool && ri.last_is_result) {
    /* The model's answer once it has a tool's result: text, no more calls. */
    for (int i = 0; i < SRV_MAX_CALLS; i++) {
      free(p.tool[i]);
      p.tool[i] = NULL;
    }
    p.echo = 0;
    set_str(&p.reply, p.after_tool);
  }
  limits_check(s, &o, &p, input_tokens(&o));
  o.n_calls = n_calls(&p);
  o.with_text = !o.n_calls || p.reply || p.echo;
  if (p.echo) {
    /* The last user message without its directive. */
    const char *u = ag_buf_str(&ri.last_user);
    const char *d = strstr(u, "[[mock");
    const char *e = d ? strstr(d, "]]") : NULL;
    ag_buf_appends(&text, "echo: ");
    if (d) {
      ag_buf_append(&text, u, (size_t)(d - u));
      if (e) ag_buf_appends(&text, e + 2);
    } else {
      ag_buf_appends(&text, u);
    }
    while (text.len && (text.data[text.len - 1] == ' ' || text.data[text.len - 1] == '\n')) text.data[--text.len] = '\0';
  } else {
    ag_buf_appends(&text, p.reply ? p.reply : "mock reply");
  }
  if (respond_hostile(&o)) {
    /* queued */
  } else if (p.status >= 300) {
    respond_json(&o, p.status, error_object(&o, p.status, p.error_type ? p.error_type : default_error_type(ri.kind, p.status)));
  } else if (p.bad_body) {
    /* What a captive portal, a misrouted proxy or a crashed backend sends with status 200. */
    const char *b = !strcmp(p.bad_body, "html")      ? "<!DOCTYPE html><html><body><h1>Welcome</h1></body></html>\n"
                    : !strcmp(p.bad_body, "garbage") ? "\x01\x02 not json at all }{\n"
                                                     : "";
    const char *type = !strcmp(p.bad_body, "html")      ? "text/html; charset=utf-8"
                       : !strcmp(p.bad_body, "garbage") ? "text/plain"
                       : ri.stream                      ? "text/event-stream"
                                                        : "application/json";
    out_headers(&o, 200, type, (long)strlen(b));
    if (*b) out_raw(&o, b, strlen(b));
    push_seg(o.c, SEG_END, 0, NULL, 0);
  } else if (ri.stream) {
    respond_stream(&o, ag_buf_str(&text));
  } else if (p.malformed) {
    const char *bad = "{\"choices\": [ oops";
    out_whole(&o, 200, bad, strlen(bad));
  } else if (p.midstream_error) {
    respond_json(&o, 200, error_object(&o, 500, p.midstream_error));
  } else if (p.oversize > 0) {
    cJSON *r = whole_reply(&o, "\x01");
    char *framed = cJSON_PrintUnformatted(r);
    cJSON_Delete(r);
    out_headers(&o, 200, "application/json", -1);
    out_big(&o, framed, p.oversize);
    free(framed);
    out_body_end(&o);
  } else {
    respond_json(&o, 200, whole_reply(&o, ag_buf_str(&text)));
  }
done:
  cJSON_Delete(root);
  req_info_free(&ri);
  plan_free(&p);
  ag_buf_free(&key);
  ag_buf_free(&text);
}

/* ---------- connections ---------- */

/* A request is in flight from its parse until the last byte of its response is queued (or its connection
 * goes): what a client's concurrency limit must keep to. */
static void conn_set_busy(conn *c, int busy) {
  llm_server *s = c->srv;
  if (c->busy == busy) return;
  c->busy = busy;
  pthread_mutex_lock(&s->mu);
  if (busy && ++s->in_flight > s->peak) s->peak = s->in_flight;
  if (!busy) s->in_flight--;
  pthread_mutex_unlock(&s->mu);
}

static void conn_free(conn *c) {
  llm_server *s = c->srv;
  conn_set_busy(c, 0);
  while (c->head) {
    seg *n = c->head->next;
    free(c->head->data);
    free(c->head);
    c->head = n;
  }
  if (c->timer) event_free(c->timer);
  if (c->bev) bufferevent_free(c->bev);
  if (c->prev) c->prev->next = c->next;
  else s->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  free(c);
}

static void conn_reset(conn *c) {
  struct linger lg = {1, 0};
  setsockopt(bufferevent_getfd(c->bev), SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  conn_free(c); /* closing with a zero linger sends RST */
}

static void conn_read(conn *c);

/* A stalled stream whose bytes have all gone out: what a test waits on before it acts on the stall. */
static void conn_count_stall(conn *c) {
  c->stalled = 2;
  pthread_mutex_lock(&c->srv->mu);
  c->srv->stalls++;
  pthread_mutex_unlock(&c->srv->mu);
}

/* Plays the response queue until it must wait (a delay, a flush) or ends. Returns 0 when the
 * connection was freed. */
static int conn_play(conn *c) {
  while (c->head) {
    seg *sg = c->head;
    if (sg->kind == SEG_REPEAT) {
      if (evbuffer_get_length(bufferevent_get_output(c->bev)) < SRV_REPEAT_HIGH) {
        bufferevent_write(c->bev, sg->data, sg->len);
        if (sg->count > 0 && --sg->count == 0) {
          c->head = sg->next;
          if (!c->head) c->tail = NULL;
          free(sg->data);
          free(sg);
          continue;
        }
      }
      long ms = sg->delay_ms > 0 ? sg->delay_ms : 1;
      struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
      evtimer_add(c->timer, &tv);
      return 1;
    }
    if (sg->delay_ms > 0 && !sg->waited) {
      sg->waited = 1;
      struct timeval tv = {sg->delay_ms / 1000, (sg->delay_ms % 1000) * 1000};
      evtimer_add(c->timer, &tv);
      return 1;
    }
    c->head = sg->next;
    if (!c->head) c->tail = NULL;
    seg_kind kind = sg->kind;
    if (kind == SEG_DATA && sg->len) bufferevent_write(c->bev, sg->data, sg->len);
    free(sg->data);
    free(sg);
    if (kind == SEG_STALL) {
      c->stalled = 1;
      if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) conn_count_stall(c);
      while (c->head) {
        seg *n = c->head->next;
        free(c->head->data);
        free(c->head);
        c->head = n;
      }
      c->tail = NULL;
      return 1;
    }
    if (kind == SEG_RESET) {
      if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
        conn_reset(c);
        return 0;
      }
      c->reset_pending = 1; /* after the write callback says the output is flushed */
      return 1;
    }
    if (kind == SEG_END) {
      conn_set_busy(c, 0);
      conn_read(c); /* a request that arrived meanwhile */
      return 1;
    }
  }
  return 1;
}

static void on_conn_timer(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  conn_play(arg);
}

static void on_conn_write(struct bufferevent *bev, void *arg) {
  (void)bev;
  conn *c = arg;
  if (c->stalled == 1) conn_count_stall(c);
  if (c->reset_pending) conn_reset(c);
}

/* Parses one whole request from the input buffer when it is there, and plans its response. */
static void conn_read(conn *c) {
  if (c->busy || c->stalled) return;
  struct evbuffer *in = bufferevent_get_input(c->bev);
  struct evbuffer_ptr end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
  if (end.pos < 0) {
    if (evbuffer_get_length(in) > SRV_HEADER_CAP) conn_free(c);
    return;
  }
  size_t hlen = (size_t)end.pos + 4;
  char *head = malloc(hlen + 1);
  evbuffer_copyout(in, head, hlen);
  head[hlen] = '\0';
  char *eol = strstr(head, "\r\n");
  *eol = '\0';
  char *headers = eol + 2;
  char *cl = header_value(headers, "content-length");
  size_t blen = cl ? strtoul(cl, NULL, 10) : 0;
  free(cl);
  if (blen > SRV_BODY_CAP) {
    free(head);
    conn_free(c);
    return;
  }
  if (evbuffer_get_length(in) < hlen + blen) {
    free(head);
    return; /* the rest of the body is on its way */
  }
  evbuffer_drain(in, hlen);
  char *body = malloc(blen + 1);
  evbuffer_remove(in, body, blen);
  body[blen] = '\0';
  char method[16] = "", path[4096] = "";
  sscanf(head, "%15s %4095s", method, path);
  headers[strlen(headers) - 2] = '\0'; /* drop the blank line's CRLF */
  llm_server *s = c->srv;
  pthread_mutex_lock(&s->mu);
  if (s->record) {
    if (s->n_reqs == s->cap_reqs) {
      s->cap_reqs = s->cap_reqs ? s->cap_reqs * 2 : 16;
      s->reqs = realloc(s->reqs, s->cap_reqs * sizeof *s->reqs);
    }
    llm_server_request *r = &s->reqs[s->n_reqs++];
    r->method = strdup(method);
    r->path = strdup(path);
    r->headers = strdup(headers);
    r->body = strdup(body);
  }
  pthread_mutex_unlock(&s->mu);
  conn_set_busy(c, 1);
  respond(c, method, path, headers, body, blen);
  free(head);
  free(body);
  conn_play(c);
}

static void on_conn_read(struct bufferevent *bev, void *arg) {
  (void)bev;
  conn_read(arg);
}

static void on_conn_event(struct bufferevent *bev, short what, void *arg) {
  (void)bev;
  if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) conn_free(arg);
}

static void on_accept(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa, int socklen, void *arg) {
  (void)lis;
  (void)sa;
  (void)socklen;
  llm_server *s = arg;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  conn *c = calloc(1, sizeof *c);
  c->srv = s;
  c->bev = bufferevent_socket_new(s->lb.base, fd, BEV_OPT_CLOSE_ON_FREE);
  c->timer = evtimer_new(s->lb.base, on_conn_timer, c);
  bufferevent_setcb(c->bev, on_conn_read, on_conn_write, on_conn_event, c);
  bufferevent_enable(c->bev, EV_READ | EV_WRITE);
  c->next = s->conns;
  if (s->conns) s->conns->prev = c;
  s->conns = c;
  pthread_mutex_lock(&s->mu);
  s->accepted++;
  pthread_mutex_unlock(&s->mu);
}

/* ---------- public ---------- */

int llm_server_start(llm_server **out) {
  llm_server *s = calloc(1, sizeof *s);
  if (!s) return -1;
  pthread_mutex_init(&s->mu, NULL);
  s->record = 1;
  s->seed = 1;
  if (loopback_start(&s->lb, on_accept, s) != 0) {
    llm_server_stop(s);
    return -1;
  }
  *out = s;
  return 0;
}

void llm_server_stop(llm_server *s) {
  if (!s) return;
  loopback_join(&s->lb);
  while (s->conns) conn_free(s->conns);
  loopback_free(&s->lb);
  llm_server_reset(s);
  free(s->reqs);
  free(s->lim_t);
  free(s->lim_tok);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

int llm_server_port(const llm_server *s) { return s->lb.port; }

const char *llm_server_url(const llm_server *s, const char *suffix) {
  static char buf[256];
  snprintf(buf, sizeof buf, "http://127.0.0.1:%d%s", s->lb.port, suffix ? suffix : "");
  return buf;
}

int llm_server_rule(llm_server *s, const char *match, const char *directives) {
  plan p;
  plan_init(&p);
  int bad = plan_parse(&p, directives, NULL);
  plan_free(&p);
  if (bad) return -1;
  rule *r = calloc(1, sizeof *r);
  r->match = strdup(match ? match : "");
  r->directives = strdup(directives);
  pthread_mutex_lock(&s->mu);
  rule **tail = &s->rules;
  while (*tail) tail = &(*tail)->next;
  *tail = r;
  pthread_mutex_unlock(&s->mu);
  return 0;
}

void llm_server_reset(llm_server *s) {
  pthread_mutex_lock(&s->mu);
  while (s->rules) {
    rule *n = s->rules->next;
    free(s->rules->match);
    free(s->rules->directives);
    free(s->rules);
    s->rules = n;
  }
  while (s->counters) {
    counter *n = s->counters->next;
    free(s->counters->key);
    free(s->counters);
    s->counters = n;
  }
  for (size_t i = 0; i < s->n_reqs; i++) llm_server_request_free(&s->reqs[i]);
  s->n_reqs = 0;
  s->stalls = 0;
  s->peak = s->in_flight;
  pthread_mutex_unlock(&s->mu);
}

void llm_server_set_limits(llm_server *s, long window_ms, long rpm, long tpm) {
  pthread_mutex_lock(&s->mu);
  s->lim_window_ms = window_ms > 0 ? window_ms : 60000;
  s->lim_rpm = rpm;
  s->lim_tpm = tpm;
  s->lim_n = s->lim_head = 0;
  s->lim_tokens = 0;
  s->lim_rejected = 0;
  pthread_mutex_unlock(&s->mu);
}

size_t llm_server_rejected(llm_server *s) {
  pthread_mutex_lock(&s->mu);
  size_t n = s->lim_rejected;
  pthread_mutex_unlock(&s->mu);
  return n;
}

void llm_server_set_recording(llm_server *s, int on) {
  pthread_mutex_lock(&s->mu);
  s->record = on;
  pthread_mutex_unlock(&s->mu);
}

size_t llm_server_request_count(llm_server *s) { return loopback_count(&s->mu, &s->n_reqs); }

static size_t requests_seen(void *s) { return llm_server_request_count(s); }

int llm_server_wait_requests(llm_server *s, size_t n, long ms) { return wait_count(requests_seen, s, n, ms); }

int llm_server_request_get(llm_server *s, size_t i, llm_server_request *out) {
  int rc = -1;
  pthread_mutex_lock(&s->mu);
  if (i < s->n_reqs) {
    const llm_server_request *r = &s->reqs[i];
    out->method = strdup(r->method);
    out->path = strdup(r->path);
    out->headers = strdup(r->headers);
    out->body = strdup(r->body);
    rc = 0;
  }
  pthread_mutex_unlock(&s->mu);
  return rc;
}

void llm_server_request_free(llm_server_request *r) {
  free(r->method);
  free(r->path);
  free(r->headers);
  free(r->body);
  memset(r, 0, sizeof *r);
}

char *llm_server_request_header(const llm_server_request *r, const char *name) {
  return header_value(r->headers, name);
}

size_t llm_server_stalls(llm_server *s) { return loopback_count(&s->mu, &s->stalls); }

size_t llm_server_connections(llm_server *s) { return loopback_count(&s->mu, &s->accepted); }

size_t llm_server_peak_concurrency(llm_server *s) { return loopback_count(&s->mu, &s->peak); }
