/* A loopback MCP Streamable HTTP server that misbehaves on purpose, for the transport's fault tests:
 * 127.0.0.1 on an ephemeral port, its own thread and event loop, one request per connection
 * (Connection: close, but in MF_KEEP_ALIVE), every request recorded.
 *
 * Always: POST "initialize" → 200 application/json answer (protocolVersion 2025-06-18) with
 * Mcp-Session-Id: fault-session-1; a POSTed notification → 202; DELETE → 200. GET → 405 unless the
 * mode says otherwise. A POSTed request (any other method) → by mode:
 *   MF_ANSWER      200 application/json {"jsonrpc":"2.0","id":ID,"result":{"ok":true}}
 *   MF_EXPIRE      404 when it carries Mcp-Session-Id (the session is gone)
 *   MF_STALL       200 text/event-stream, then nothing, the connection held open
 *   MF_GARBAGE     200 application/json with an HTML body
 *   MF_SSE_GARBAGE 200 text/event-stream: one event whose data is not JSON, then the end
 *   MF_STATUS500   500 text/plain "boom"
 *   MF_DROP        200 text/event-stream: "retry: 60", then an event id "ev-1" holding a
 *                  notifications/progress, then a reset (RST). A GET with Last-Event-ID: ev-1 then gets
 *                  200 text/event-stream with the answer to the dropped request, and the end.
 *   MF_KEEP_ALIVE  as MF_ANSWER, on a kept-alive connection (for benchmarks: many requests each)
 *   MF_GET_STREAM  GET → 200 text/event-stream: a notifications/message event (id "g-N"), then the end. */
#ifndef AG_TEST_MCP_FAULT_H
#define AG_TEST_MCP_FAULT_H

#include <stddef.h>

typedef enum mcp_fault_mode {
  MF_ANSWER = 0,
  MF_EXPIRE,
  MF_STALL,
  MF_GARBAGE,
  MF_SSE_GARBAGE,
  MF_STATUS500,
  MF_DROP,
  MF_GET_STREAM,
  MF_KEEP_ALIVE
} mcp_fault_mode;

typedef struct mcp_fault mcp_fault;

/* One request as the server saw it (strings owned by the server; "" when the header was absent). */
typedef struct mcp_fault_req {
  char method[16];
  char session[128];
  char last_event_id[128];
  char protocol_version[64];
  char accept[128];
  char authorization[128];
  char rpc_method[64]; /* the JSON-RPC method of a POST body */
  double at_ms;        /* when it arrived, on a monotonic clock */
} mcp_fault_req;

int mcp_fault_start(mcp_fault **out);
void mcp_fault_stop(mcp_fault *s);
/* "http://127.0.0.1:PORT/mcp" (static buffer). */
const char *mcp_fault_url(const mcp_fault *s);
void mcp_fault_mode_set(mcp_fault *s, mcp_fault_mode mode);
/* Copies the n-th request seen (0-based) into *out; returns 0, or -1 when there are not that many. */
int mcp_fault_request(mcp_fault *s, size_t n, mcp_fault_req *out);
/* Requests seen (all counted; the first 256 are kept for mcp_fault_request). */
size_t mcp_fault_count(mcp_fault *s);
/* Requests with that HTTP method so far. */
size_t mcp_fault_count_method(mcp_fault *s, const char *method);
double mcp_fault_now_ms(void);

#endif
