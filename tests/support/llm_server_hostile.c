/* The loopback LLM server's hostile peers (see llm_server.h): bodies that never end, gzip and
 * oversize bombs, redirects and garbage, each costing the server one piece of memory. */
#include "support/llm_server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  lsrv_out_headers(o, 200, o->ri->stream && o->kind != W_OLLAMA ? "text/event-stream" : "application/json", -1);
  unsigned char head[12] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, w.b[0], w.b[1]};
  lsrv_out_chunk(o, (const char *)head, sizeof head);
  ag_buf period;
  ag_buf_init(&period, SRV_BIG);
  for (int i = 0; i < 4096; i++) ag_buf_append(&period, (const char *)w.b + 2, 13);
  lsrv_out_repeat(o, ag_buf_str(&period), period.len, o->p->gzip);
  ag_buf_free(&period);
  unsigned char tail[64];
  size_t n = total - 15;
  memcpy(tail, w.b + 15, n);
  memset(tail + n, 0, 8); /* CRC32 and ISIZE */
  lsrv_out_chunk(o, (const char *)tail, n + 8);
  lsrv_out_body_end(o);
}

/* A reply that never ends: text events without end (streamed), or a JSON body whose text string
 * never closes (whole). */
static void respond_endless(out *o) {
  ag_buf b;
  ag_buf_init(&b, SRV_BIG);
  if (o->ri->stream) {
    lsrv_out_headers(o, 200, o->kind == W_OLLAMA ? "application/x-ndjson" : "text/event-stream", -1);
    lsrv_stream_prelude(o);
    char text[1024];
    memset(text, 'x', sizeof text - 1);
    text[sizeof text - 1] = '\0';
    /* Sixteen events a piece, built as the provider frames them. */
    o->merge_open = 1;
    ag_buf_init(&o->merged, SRV_BIG);
    for (int i = 0; i < 16; i++) lsrv_stream_text_event(o, text, strlen(text));
    o->merge_open = 0;
    /* The merged events are chunk-framed already: send them raw, again and again. */
    lsrv_push_seg(o->c, SEG_REPEAT, o->p->delay, ag_buf_str(&o->merged), o->merged.len);
    o->c->tail->count = -1;
    ag_buf_free(&o->merged);
  } else {
    lsrv_out_headers(o, 200, "application/json", -1);
    const char *open = o->kind == W_ANTHROPIC ? "{\"type\":\"message\",\"content\":[{\"type\":\"text\",\"text\":\""
                       : o->kind == W_GEMINI  ? "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\""
                       : o->kind == W_OLLAMA  ? "{\"message\":{\"role\":\"assistant\",\"content\":\""
                                              : "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"";
    lsrv_out_chunk(o, open, strlen(open));
    for (int i = 0; i < 16384; i++) ag_buf_append(&b, "x", 1);
    lsrv_out_repeat(o, ag_buf_str(&b), b.len, -1);
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
  lsrv_out_headers(o, 200, ndjson ? "application/x-ndjson" : "text/event-stream", -1);
  lsrv_out_chunk(o, ndjson ? nd : sse, ndjson ? sizeof nd - 1 : sizeof sse - 1);
  lsrv_out_body_end(o);
}

/* The hostile replies (see the header); returns 1 when the plan asked for one and it was queued. */
int lsrv_respond_hostile(out *o) {
  const plan *p = o->p;
  if (p->redirect) {
    lsrv_out_headers(o, 302, "text/html", 0); /* Location: the same path again, a loop when followed */
    lsrv_push_seg(o->c, SEG_END, 0, NULL, 0);
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
