/* The loopback LLM server's insides, shared by its files (the public door is llm_server.h): the
 * server, a connection and its queue of timed segments, a request's plan, what the request holds, and
 * the response being built. Server thread only, except the fields documented as under mu. */
#ifndef AG_TEST_LLM_SERVER_INT_H
#define AG_TEST_LLM_SERVER_INT_H

#include "support/llm_server.h"
#include "support/loopback.h"

#include "common/buf.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct bufferevent;
struct event;

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
  size_t closed; /* connections freed: accepted - closed are open */
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
  long after_tool_stall; /* the first N such requests of the plan stall instead */
  /* Hostile peers: see the header. */
  int endless, redirect;
  long drip, pad_headers, gzip;
  long error_pct, stall_pct; /* faults drawn per request (soak benchmarks) */
} plan;

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

/* ---- plans: the mock directives ([[mock ...]] and rules) parsed into what a reply does (llm_server_plan.c) ---- */

void lsrv_plan_init(plan *p);
void lsrv_plan_free(plan *p);
int lsrv_n_calls(const plan *p);
void lsrv_set_str(char **dst, const char *v);
/* Parses "key=value ..." from s up to its end or "]]"; *end (may be NULL) gets where it stopped. */
int lsrv_plan_parse(plan *p, const char *s, const char **end);
/* Applies the first directive in text; appends its raw text to key. */
void lsrv_plan_from_text(plan *p, const char *text, ag_buf *key);

/* ---- request bodies: the route to a wire format and the messages a request holds (llm_server_req.c) ---- */

/* The value of header name (case-insensitive) in raw "Name: value\r\n" lines; NULL when absent (caller frees). */
char *lsrv_header_value(const char *headers, const char *name);
/* The provider a request path belongs to (W_NONE: none); *gemini_stream set for a streamed Gemini call. */
wire_kind lsrv_route(const char *path, int *gemini_stream);
/* Fills ri from a request (its body parsed in root): 0, or -1 for an unknown route. */
int lsrv_parse_request(req_info *ri, const char *path, const char *headers, const cJSON *root);
/* Frees what ri owns. */
void lsrv_req_info_free(req_info *ri);

/* ---- HTTP framing: timed segments, chunked bodies, event framing (llm_server_out.c) ---- */

/* Queues a segment on c: data (copied; may be NULL) after delay ms. */
void lsrv_push_seg(conn *c, seg_kind kind, long delay, const char *data, size_t len);
/* Raw bytes, split into pieces when asked. */
void lsrv_out_raw(out *o, const char *data, size_t len);
/* Writes what merge= held back as one piece. */
void lsrv_out_flush_merged(out *o);
/* One body chunk in chunked transfer encoding. */
void lsrv_out_chunk(out *o, const char *data, size_t len);
/* One event in the provider's framing. name is the SSE event name (Anthropic) or NULL. */
void lsrv_out_event_raw(out *o, const char *name, const char *json);
/* lsrv_out_event_raw for obj, which it consumes. */
void lsrv_out_event(out *o, const char *name, cJSON *obj);
/* The status line and headers (content_length -1: chunked), with the plan's Retry-After and limits. */
void lsrv_out_headers(out *o, long status, const char *ctype, long content_length);
/* A whole body with its headers, cut short or stalled when the plan says so. */
void lsrv_out_whole(out *o, long status, const char *body, size_t len);
/* lsrv_out_whole for obj, which it consumes. */
void lsrv_respond_json(out *o, long status, cJSON *obj);
/* Bytes written again and again (see SEG_REPEAT), each time as one body chunk. */
void lsrv_out_repeat(out *o, const char *data, size_t len, long count);
/* The chunked body's end, and the end of the response. */
void lsrv_out_body_end(out *o);
/* framed is JSON holding one text "\u0001": sends it with that text replaced by bytes x's, the
 * x's as a repeated piece (a 10 MB line costs the server 64 KB). */
void lsrv_out_big(out *o, const char *framed, long bytes);

/* ---- each provider's wire format: whole and streamed replies, calls, errors, faults (llm_server_wire.c) ---- */

/* A request's input tokens, as the replies count them (4 bytes a token). */
long lsrv_input_tokens(const out *o);
/* One streamed piece of text (n bytes of t) in the provider's event shape. */
void lsrv_stream_text_event(out *o, const char *t, size_t n);
/* What a provider streams before the first text (OpenAI's role chunk, Anthropic's message_start...). */
void lsrv_stream_prelude(out *o);
/* The provider's own error type for an HTTP status. */
const char *lsrv_default_error_type(wire_kind k, long status);
/* The provider's error object, as a whole body or a mid-stream event. */
cJSON *lsrv_error_object(const out *o, long status, const char *type);
/* A whole reply: its text (when it has any) and its calls. */
cJSON *lsrv_whole_reply(out *o, const char *text);
/* A streamed reply of text (and the plan's calls), with the faults the plan asks for. */
void lsrv_respond_stream(out *o, const char *text);

/* ---- hostile peers: bodies that never end, bombs, redirects, garbage (llm_server_hostile.c) ---- */

/* The hostile replies (see the header); returns 1 when the plan asked for one and it was queued. */
int lsrv_respond_hostile(out *o);

/* ---- enforced rate limits: 429s and the providers' rate-limit headers (llm_server_limits.c) ---- */

/* The enforced limits: a request past rpm requests or tpm tokens in the last window is answered 429 with
 * the providers' headers (Retry-After, retry-after-ms, x-ratelimit-*, anthropic-ratelimit-*-remaining and
 * -reset); an accepted one says what remains. Both kinds of header go to every wire format. */
void lsrv_limits_check(llm_server *s, out *o, plan *p, long tokens);

#endif
