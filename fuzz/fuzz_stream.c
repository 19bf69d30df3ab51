/* Fuzzes the SSE and NDJSON stream parsers (net/net_stream.c): the input is fed whole and again in
 * random pieces derived from it; both must give the same events (a parser must not care where the
 * network splits its bytes), within the caps, each data NUL-terminated. */
#include "fuzz_util.h"

#include "common/buf.h"
#include "net/net_stream.h"

#define EVENT_CAP 4096
#define TOTAL_CAP (1u << 20)

/* The events seen, as "event\0data\0" records. */
typedef struct record {
  ag_buf log;
  size_t events;
  int stop_at; /* return 1 from this event on (0: never), to test that a stop is passed back */
} record;

static int on_event(void *ud, const char *event, const char *data, size_t len) {
  record *r = ud;
  if (data[len] != '\0' || len > EVENT_CAP || strlen(event) >= 64) abort();
  r->events++;
  if (ag_buf_append(&r->log, event, strlen(event) + 1) || ag_buf_append(&r->log, data, len + 1)) abort();
  return r->stop_at && (int)r->events >= r->stop_at ? 7 : 0;
}

static int feed(void *ud, const char *p, size_t n) { return net_stream_feed(ud, p, n); }

/* Feeds p[0..n) in pieces; split 0 = whole. Returns the result of the first failing call. */
static int run(net_stream_kind kind, const uint8_t *p, size_t n, uint32_t split, record *r) {
  net_stream s;
  net_stream_init(&s, kind, EVENT_CAP, TOTAL_CAP, on_event, r);
  int rc = fuzz_feed_pieces(p, n, split, feed, &s);
  if (!rc) rc = net_stream_finish(&s);
  /* After a failure every later feed fails too. */
  if (rc && net_stream_feed(&s, "data: x\n\n", 9) == AG_OK) abort();
  net_stream_free(&s);
  return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_in in = {data, size};
  uint8_t ctl = fuzz_byte(&in);
  net_stream_kind kind = ctl & 1 ? NET_STREAM_NDJSON : NET_STREAM_SSE;
  uint32_t seed = 0x9e3779b9u ^ ((uint32_t)ctl << 8) ^ (uint32_t)size;
  record whole = {{0}, 0, ctl & 2 ? 1 + (ctl >> 4) : 0}, split = whole;
  ag_buf_init(&whole.log, 64u << 20);
  ag_buf_init(&split.log, 64u << 20);
  int rc1 = run(kind, in.data, in.size, 0, &whole);
  int rc2 = run(kind, in.data, in.size, seed | 1, &split);
  if (rc1 != rc2 || whole.events != split.events || whole.log.len != split.log.len ||
      (whole.log.len && memcmp(whole.log.data, split.log.data, whole.log.len)))
    abort();
  if (whole.stop_at && whole.events >= (size_t)whole.stop_at && rc1 != 7) abort();
  ag_buf_free(&whole.log);
  ag_buf_free(&split.log);
  return 0;
}
