/* One MCP transport as the client sees it: a pipe that carries whole JSON-RPC messages both ways.
 * Two implementations: mcp/stdio.c (a child process, newline-delimited JSON on its pipes, driven by the
 * libevent loop) and mcp/http.c (Streamable HTTP on the network client's curl multi handles: POST per message,
 * answers as application/json or SSE, Mcp-Session-Id kept, optional GET stream). The client (mcp/client.c)
 * does the JSON-RPC: ids, handshake, timeouts; a transport only moves messages and reports its end. */
#ifndef AG_MCP_TRANSPORT_H
#define AG_MCP_TRANSPORT_H

#include <stddef.h>

typedef struct mcp_transport mcp_transport;

/* What a transport reports to its client. Both run from the event loop, never from inside a libcurl
 * callback or a signal handler. */
typedef struct mcp_transport_sink {
  /* One complete JSON-RPC message (a response, a request or a notification; a JSON-RPC batch array is
   * split by the transport). json is borrowed for the call and not NUL-terminated. */
  void (*on_message)(void *ud, const char *json, size_t len);
  /* The transport ended (child exited, stream or session lost, protocol garbage): why is a short
   * human text, borrowed. No callback runs after this one. */
  void (*on_closed)(void *ud, const char *why);
} mcp_transport_sink;

typedef struct mcp_transport_ops {
  /* Queues one message (copied); 0 or an AG_ERR_* code (common/error.h). Answers, if any, come through on_message. */
  int (*send)(mcp_transport *t, const char *json, size_t len);
  /* Ends the transport cleanly (stdio: close stdin, SIGTERM, SIGKILL after a grace period, reaped from
   * the loop; HTTP: DELETE the session) and frees it. No sink callback runs afterwards. */
  void (*close)(mcp_transport *t);
} mcp_transport_ops;

/* Every transport struct starts with this header, so the client can call through it. */
struct mcp_transport {
  const mcp_transport_ops *ops;
};

#endif
