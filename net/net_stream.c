/* SSE and NDJSON incremental parsing (see net_stream.h). Lines may end in "\n", "\r\n" or "\r"; a "\r\n"
 * split across two feeds still counts as one line end. */
#include "net/net_stream.h"

#include "common/error.h"

#include <string.h>

void net_stream_init(net_stream *s, net_stream_kind kind, size_t event_cap, size_t total_cap,
                     net_stream_event_fn on_event, void *ud) {
  memset(s, 0, sizeof *s);
  s->kind = kind;
  s->on_event = on_event;
  s->ud = ud;
  s->total_cap = total_cap;
  s->retry_ms = -1;
  ag_buf_init(&s->line, event_cap);
  ag_buf_init(&s->data, event_cap);
}

void net_stream_free(net_stream *s) {
  ag_buf_free(&s->line);
  ag_buf_free(&s->data);
}

static int sse_dispatch(net_stream *s) {
  int rc = AG_OK;
  memcpy(s->last_id, s->id_buf, sizeof s->last_id); /* as EventSource does, even for an event without data */
  if (s->has_data) rc = s->on_event(s->ud, s->event, ag_buf_str(&s->data), s->data.len);
  ag_buf_reset(&s->data);
  s->has_data = 0;
  s->event[0] = '\0';
  return rc;
}

/* An id too long to keep, or holding a NUL (which the standard ignores), cannot be resent whole:
 * it clears the id rather than resending a wrong one. */
static void sse_id(net_stream *s, const char *v, size_t n) {
  if (memchr(v, '\0', n)) return;
  if (n >= sizeof s->id_buf) n = 0;
  memcpy(s->id_buf, v, n);
  s->id_buf[n] = '\0';
}

/* "retry:" takes ASCII digits only; anything else is ignored. Capped at a day. */
static void sse_retry(net_stream *s, const char *v, size_t n) {
  long ms = 0;
  if (!n) return;
  for (size_t i = 0; i < n; i++) {
    if (v[i] < '0' || v[i] > '9') return;
    if (ms < 86400000L) ms = ms * 10 + (v[i] - '0');
  }
  s->retry_ms = ms < 86400000L ? ms : 86400000L;
}

static int sse_line(net_stream *s, const char *line, size_t len) {
  if (len == 0) return sse_dispatch(s);
  if (line[0] == ':') return AG_OK; /* a comment, used as keep-alive */
  const char *colon = memchr(line, ':', len);
  size_t name_len = colon ? (size_t)(colon - line) : len;
  const char *value = colon ? colon + 1 : line + len;
  size_t value_len = (size_t)(line + len - value);
  if (value_len && value[0] == ' ') {
    value++;
    value_len--;
  }
  if (name_len == 4 && memcmp(line, "data", 4) == 0) {
    int rc;
    if (s->has_data && (rc = ag_buf_append(&s->data, "\n", 1))) return rc;
    s->has_data = 1;
    return ag_buf_append(&s->data, value, value_len);
  }
  if (name_len == 5 && memcmp(line, "event", 5) == 0) {
    size_t n = value_len < sizeof s->event - 1 ? value_len : sizeof s->event - 1;
    memcpy(s->event, value, n);
    s->event[n] = '\0';
  }
  if (name_len == 2 && memcmp(line, "id", 2) == 0) sse_id(s, value, value_len);
  if (name_len == 5 && memcmp(line, "retry", 5) == 0) sse_retry(s, value, value_len);
  return AG_OK; /* unknown fields are ignored, as the SSE standard says */
}

static int ndjson_line(net_stream *s, const char *line, size_t len) {
  size_t i = 0;
  while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
  if (i == len) return AG_OK;
  return s->on_event(s->ud, "", line, len);
}

static int end_line(net_stream *s) {
  /* The line buffer is NUL-terminated, so handlers may treat the data as a C string. */
  int rc = ag_buf_append(&s->line, "", 0);
  if (rc) return rc;
  const char *line = ag_buf_str(&s->line);
  rc = s->kind == NET_STREAM_SSE ? sse_line(s, line, s->line.len) : ndjson_line(s, line, s->line.len);
  ag_buf_reset(&s->line);
  return rc;
}

int net_stream_feed(net_stream *s, const char *p, size_t n) {
  int rc = AG_OK;
  if (s->failed) return s->failed;
  if (n > s->total_cap || s->total > s->total_cap - n) {
    rc = AG_ERR_TOO_BIG;
    goto done;
  }
  s->total += n;
  const char *end = p + n;
  while (p < end) {
    if (s->after_cr && *p == '\n') p++;
    s->after_cr = 0;
    const char *q = p;
    while (q < end && *q != '\n' && *q != '\r') q++;
    if ((rc = ag_buf_append(&s->line, p, (size_t)(q - p)))) goto done;
    if (q == end) break;
    s->after_cr = *q == '\r';
    p = q + 1;
    if ((rc = end_line(s))) goto done;
  }
done:
  if (rc) s->failed = rc;
  return rc;
}

int net_stream_finish(net_stream *s) {
  int rc = AG_OK;
  if (s->failed) return s->failed;
  if (s->line.len && (rc = end_line(s))) goto done;
  if (s->kind == NET_STREAM_SSE) rc = sse_dispatch(s);
done:
  if (rc) s->failed = rc;
  return rc;
}

const char *net_stream_last_id(const net_stream *s) { return s->last_id; }

long net_stream_retry_ms(const net_stream *s) { return s->retry_ms; }
