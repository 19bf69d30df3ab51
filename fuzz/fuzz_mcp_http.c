/* Fuzzes what the MCP Streamable HTTP transport reads from a server (mcp/http_msg.c, and net/net_stream.c
 * as the transport frames SSE): a JSON body split into messages, and an event stream fed whole and in
 * random pieces. Checks: every message handed on is a JSON object whose peek agrees with the one given;
 * a request is never also a response; no message handed on has a bad id (one that is not a string or a
 * whole number within +-(2^53 - 1)), and a body holding one is refused whole; a made-up error answer for any
 * id read parses back with that id; the stream gives the same messages, result, last event id and retry
 * however it is split. */
#include "fuzz_util.h"

#include "common/buf.h"
#include "net/net_stream.h"
#include "mcp/http_msg.h"

#include <cjson/cJSON.h>

#define EVENT_CAP 4096
#define TOTAL_CAP (1u << 20)

static void check_error_answer(const char *id) {
  char *text = mcp_http_error_answer(id, "why");
  if (!text) abort();
  mcp_http_peek pk;
  if (mcp_http_peek_text(text, strlen(text), &pk) || !pk.is_response || strcmp(pk.id, id) != 0) abort();
  free(text);
}

static int on_msg(void *ud, const char *json, size_t len, const mcp_http_peek *pk) {
  ag_buf *log = ud;
  mcp_http_peek again;
  if (json[len] != '\0' || mcp_http_peek_text(json, len, &again)) abort();
  if (memcmp(&again, pk, sizeof again) != 0 || (pk->is_request && pk->is_response)) abort();
  if (strlen(pk->id) >= sizeof pk->id || strlen(pk->method) >= sizeof pk->method) abort();
  if (pk->protocol_version[0] && !pk->is_response) abort();
  if (pk->bad_id) abort();
  if (pk->id[0]) check_error_answer(pk->id);
  if (log && ag_buf_append(log, json, len + 1)) abort();
  return 0;
}

/* As mcp/http.c: each event's data (of type "" or "message", non-empty) is a message or a batch. */
static int on_event(void *ud, const char *event, const char *data, size_t len) {
  if (!len || (event[0] && strcmp(event, "message") != 0)) return 0;
  int rc = mcp_http_split(data, len, on_msg, ud);
  return rc == AG_ERR_INVALID ? 3 : rc;
}

typedef struct outcome {
  ag_buf log;
  int rc;
  char last_id[256];
  long retry_ms;
} outcome;

static int feed(void *ud, const char *p, size_t n) { return net_stream_feed(ud, p, n); }

static void run_stream(const uint8_t *p, size_t n, uint32_t split, outcome *o) {
  net_stream s;
  ag_buf_init(&o->log, 64u << 20);
  net_stream_init(&s, NET_STREAM_SSE, EVENT_CAP, TOTAL_CAP, on_event, &o->log);
  int rc = fuzz_feed_pieces(p, n, split, feed, &s);
  if (!rc) rc = net_stream_finish(&s);
  o->rc = rc;
  memcpy(o->last_id, net_stream_last_id(&s), sizeof o->last_id);
  o->retry_ms = net_stream_retry_ms(&s);
  if (strlen(o->last_id) >= sizeof o->last_id || o->retry_ms < -1 || o->retry_ms > 86400000L) abort();
  net_stream_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_in in = {data, size};
  uint8_t ctl = fuzz_byte(&in);
  if (!(ctl & 1)) {
    int rc = mcp_http_split((const char *)in.data, in.size, on_msg, NULL);
    mcp_http_peek pk;
    if (mcp_http_peek_text((const char *)in.data, in.size, &pk) == AG_OK) {
      if (pk.bad_id && (rc != AG_ERR_INVALID || pk.id[0] || pk.is_request || pk.is_response)) abort();
      if (!pk.bad_id && rc == AG_ERR_INVALID) abort(); /* an object with a usable id is delivered */
    }
    return 0;
  }
  outcome whole, split;
  run_stream(in.data, in.size, 0, &whole);
  run_stream(in.data, in.size, (0x9e3779b9u ^ ((uint32_t)ctl << 8) ^ (uint32_t)size) | 1, &split);
  if (whole.rc != split.rc || whole.retry_ms != split.retry_ms || strcmp(whole.last_id, split.last_id) != 0 ||
      whole.log.len != split.log.len || (whole.log.len && memcmp(whole.log.data, split.log.data, whole.log.len)))
    abort();
  ag_buf_free(&whole.log);
  ag_buf_free(&split.log);
  return 0;
}
