/* The loopback LLM server's HTTP framing (see llm_server_int.h): a response is a queue of timed
 * segments (bytes, a stall, a reset, a repeat) that the connection plays out; bodies go chunked, and
 * events in the provider's framing (SSE or NDJSON). */
#include "support/llm_server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lsrv_push_seg(conn *c, seg_kind kind, long delay, const char *data, size_t len) {
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
void lsrv_out_raw(out *o, const char *data, size_t len) {
  if (o->merge_open) {
    ag_buf_append(&o->merged, data, len);
    return;
  }
  /* A drip sends every byte alone, drip ms apart, the headers too. */
  long drip = o->p->drip;
  size_t step = drip > 0 ? 1 : o->p->split > 0 ? (size_t)o->p->split : len;
  for (size_t off = 0; off < len; off += step) {
    size_t n = len - off < step ? len - off : step;
    lsrv_push_seg(o->c, SEG_DATA, drip > o->next_delay ? drip : o->next_delay, data + off, n);
    o->next_delay = o->p->split > 0 ? 1 : 0;
  }
}

void lsrv_out_flush_merged(out *o) {
  if (!o->merge_open) return;
  o->merge_open = 0;
  lsrv_out_raw(o, ag_buf_str(&o->merged), o->merged.len);
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
void lsrv_out_chunk(out *o, const char *data, size_t len) {
  ag_buf b;
  chunk_frame(&b, data, len);
  lsrv_out_raw(o, ag_buf_str(&b), b.len);
  ag_buf_free(&b);
  if (!o->merge_open) o->next_delay = o->p->delay;
}

/* One event in the provider's framing. name is the SSE event name (Anthropic) or NULL. */
void lsrv_out_event_raw(out *o, const char *name, const char *json) {
  ag_buf b;
  ag_buf_init(&b, SRV_BIG);
  switch (o->kind) {
  case W_ANTHROPIC: ag_buf_printf(&b, "event: %s\ndata: %s\n\n", name, json); break;
  case W_GEMINI: ag_buf_printf(&b, "data: %s\r\n\r\n", json); break;
  case W_OLLAMA: ag_buf_printf(&b, "%s\n", json); break;
  default: ag_buf_printf(&b, "data: %s\n\n", json); break;
  }
  lsrv_out_chunk(o, ag_buf_str(&b), b.len);
  ag_buf_free(&b);
}

void lsrv_out_event(out *o, const char *name, cJSON *obj) {
  char *json = cJSON_PrintUnformatted(obj);
  cJSON_Delete(obj);
  lsrv_out_event_raw(o, name, json);
  free(json);
}

void lsrv_out_headers(out *o, long status, const char *ctype, long content_length) {
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
  lsrv_out_raw(o, ag_buf_str(&b), b.len);
  ag_buf_free(&b);
}

void lsrv_out_whole(out *o, long status, const char *body, size_t len) {
  lsrv_out_headers(o, status, "application/json", (long)len);
  if (o->p->reset >= 0) {
    lsrv_out_raw(o, body, len / 2);
    lsrv_push_seg(o->c, SEG_RESET, 20, NULL, 0);
    return;
  }
  if (o->p->stall >= 0) {
    lsrv_push_seg(o->c, SEG_STALL, 0, NULL, 0);
    return;
  }
  if (len) lsrv_out_raw(o, body, len);
  lsrv_push_seg(o->c, SEG_END, 0, NULL, 0);
}

void lsrv_respond_json(out *o, long status, cJSON *obj) {
  char *s = cJSON_PrintUnformatted(obj);
  cJSON_Delete(obj);
  lsrv_out_whole(o, status, s, strlen(s));
  free(s);
}

/* Bytes written again and again (see SEG_REPEAT), each time as one body chunk. */
void lsrv_out_repeat(out *o, const char *data, size_t len, long count) {
  lsrv_out_flush_merged(o);
  ag_buf b;
  chunk_frame(&b, data, len);
  lsrv_push_seg(o->c, SEG_REPEAT, o->p->delay, ag_buf_str(&b), b.len);
  o->c->tail->count = count;
  ag_buf_free(&b);
}

void lsrv_out_body_end(out *o) {
  lsrv_out_raw(o, "0\r\n\r\n", 5);
  lsrv_push_seg(o->c, SEG_END, 0, NULL, 0);
}

/* framed is JSON holding one text "\u0001": sends it with that text replaced by bytes x's, the
 * x's as a repeated piece (a 10 MB line costs the server 64 KB). */
void lsrv_out_big(out *o, const char *framed, long bytes) {
  const char *mark = strstr(framed, "\\u0001");
  if (!mark) return;
  lsrv_out_flush_merged(o);
  lsrv_out_chunk(o, framed, (size_t)(mark - framed));
  char piece[65536];
  memset(piece, 'x', sizeof piece);
  if (bytes >= (long)sizeof piece) lsrv_out_repeat(o, piece, sizeof piece, bytes / (long)sizeof piece);
  if (bytes % (long)sizeof piece) lsrv_out_chunk(o, piece, (size_t)(bytes % (long)sizeof piece));
  lsrv_out_chunk(o, mark + 6, strlen(mark + 6));
}
