/* Incremental parsers for the two streaming framings on the network: Server-Sent Events (OpenAI,
 * Anthropic, Gemini, MCP Streamable HTTP) and newline-delimited JSON (Ollama). Bytes arrive in arbitrary
 * pieces; an event may be split across pieces and one piece may hold several events. Pure: no I/O, no
 * loop. */
#ifndef AG_NET_STREAM_H
#define AG_NET_STREAM_H

#include <stddef.h>

#include "common/buf.h"

typedef enum net_stream_kind {
  NET_STREAM_SSE = 0, /* "event:" / "data:" lines, events end at a blank line */
  NET_STREAM_NDJSON   /* one JSON document per line */
} net_stream_kind;

/* One complete event. SSE: event is the "event:" field ("" when absent) and data the "data:" lines
 * joined by "\n"; NDJSON: event is "" and data one non-blank line. data is NUL-terminated and both
 * are borrowed for the callback. A non-zero return stops the parser and is returned by the feed. */
typedef int (*net_stream_event_fn)(void *ud, const char *event, const char *data, size_t len);

typedef struct net_stream {
  net_stream_kind kind;
  net_stream_event_fn on_event;
  void *ud;
  ag_buf line;       /* the line being read (capped at the event cap) */
  ag_buf data;       /* SSE: data of the event being read (capped at the event cap) */
  char event[64];    /* SSE: its event name, truncated */
  int has_data;      /* SSE: a "data:" line was seen for this event */
  char id_buf[256];  /* SSE: the "id:" field seen last ("" when none or too long), kept across events */
  char last_id[256]; /* SSE: the id as of the last completed event (what Last-Event-ID resends) */
  long retry_ms;     /* SSE: the last "retry:" field, in ms; -1 when none was seen */
  size_t total;      /* bytes fed so far */
  size_t total_cap;  /* bytes allowed over the whole reply */
  int after_cr;      /* the last byte was '\r': a following '\n' belongs to the same line end */
  int failed;        /* a previous feed failed: later ones fail too */
} net_stream;

/* event_cap bounds one line and one event, total_cap the whole reply; past either the feed fails with
 * AG_ERR_TOO_BIG. ud is borrowed. */
void net_stream_init(net_stream *s, net_stream_kind kind, size_t event_cap, size_t total_cap,
                     net_stream_event_fn on_event, void *ud);
/* Parses more bytes, calling on_event for every event they complete. Returns AG_OK, AG_ERR_TOO_BIG,
 * or the first non-zero value on_event returned. */
int net_stream_feed(net_stream *s, const char *p, size_t n);
/* End of input: delivers a last event that was not terminated (no trailing blank line/newline). */
int net_stream_finish(net_stream *s);
/* SSE: the last event ID ("" when none) and the server's reconnection delay (-1 when it sent none),
 * for resuming a dropped stream (Streamable HTTP's Last-Event-ID). */
const char *net_stream_last_id(const net_stream *s);
long net_stream_retry_ms(const net_stream *s);
/* Frees the buffers; the stream may be initialised again. */
void net_stream_free(net_stream *s);

#endif
