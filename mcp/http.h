/* The MCP Streamable HTTP transport (protocol 2025-03-26 and later): an mcp_transport (mcp/transport.h)
 * on a network client (net/net_client.h: the curl multi handles the LLM providers use) with its own TLS,
 * CA and proxy settings (net/net_opts.h). Each send is one POST;
 * answers come back as application/json (one message or a batch) or as an SSE stream; the session id
 * the server gives is kept, the protocol version from the initialize answer is sent, the optional GET
 * stream carries server-initiated messages, a dropped SSE stream is resumed with GET + Last-Event-ID
 * after the server's retry, and close DELETEs the session.
 *
 * CONTRACT WITH THE CLIENT (mcp/client.c)
 * - A request (a message with "method" and "id") always gets exactly one answer through on_message,
 *   unless the transport ends first: the server's, or one made up here when the POST fails
 *   (an HTTP error status without a JSON-RPC answer, the server unreachable, the request's own time
 *   limit, a stream that ends or drops without the answer and cannot be resumed, a body or event that
 *   is not JSON-RPC). A made-up answer is {"jsonrpc":"2.0","id":ID,"error":{"code":-32000,
 *   "message":"HTTP transport: ..."}} (MCP_HTTP_TRANSPORT_ERROR), naming the server by scheme://host:port
 *   only (a path or query may hold a token). So a failure fails that one call and
 *   the transport goes on; notifications and responses that fail are dropped.
 * - Sending "initialize" starts a new session: the session id and protocol version are forgotten and
 *   the initialize POST goes without them; the answer's Mcp-Session-Id and protocolVersion are kept.
 * - Session expiry: a 404 to a request that carried Mcp-Session-Id ends the transport with
 *   on_closed(ud, MCP_HTTP_SESSION_EXPIRED) (compare with strcmp). The other requests in flight get no
 *   answer (the client fails them). The client then calls close() (which sends no DELETE for the
 *   expired session) and opens a new transport to re-initialize, once.
 * - on_closed is called only for session expiry; after it and after close() nothing is called.
 * - close() is always called exactly once, also after on_closed; it may be called from inside
 *   on_message. It DELETEs the session (when there is one) in the background with a 2 s limit while
 *   the loop runs: net_fetch_live() falls to 0 when it is done.
 * Header values (e.g. a bearer token) are copied, never logged, and wiped when freed. */
#ifndef AG_MCP_HTTP_H
#define AG_MCP_HTTP_H

#include <stddef.h>

#include "mcp/transport.h"
#include "net/net_client.h"
#include "net/net_opts.h"

/* The why of on_closed when the server no longer knows the session (HTTP 404). */
#define MCP_HTTP_SESSION_EXPIRED "session expired"

typedef struct mcp_http_header {
  const char *name;  /* e.g. "Authorization" */
  const char *value; /* already resolved (${VAR} replaced); copied */
} mcp_http_header;

typedef struct mcp_http_options {
  const char *url;                /* http:// or https://; copied */
  const mcp_http_header *headers; /* extra headers sent with every request; copied */
  size_t n_headers;
  long timeout_ms;    /* one POST (its whole SSE stream included) and one resume; 0: 300000 */
  size_t max_message; /* bytes of one message (JSON body or SSE event); 0: 4 MiB */
  size_t max_response;/* bytes of one response body or stream; 0: 64 MiB */
  const net_opts *net; /* ca_file, proxy, insecure (copied); NULL: the defaults */
} mcp_http_options;

/* Creates the transport; nothing is sent until the first send. net is borrowed and must outlive the
 * transport (its DELETE included); sink is copied, ud borrowed until close. AG_ERR_INVALID when the URL
 * is not http(s) or a header name or value is malformed (CR, LF, or ':' in a name). */
int mcp_http_open(net_client *net, const mcp_http_options *opt, const mcp_transport_sink *sink, void *ud,
                  mcp_transport **out);

/* For tests and benchmarks: the session id in use ("" none), the protocol version sent ("" none),
 * whether the GET stream is open (1), not offered by the server (-1) or not (0). */
const char *mcp_http_session(const mcp_transport *t);
const char *mcp_http_protocol_version(const mcp_transport *t);
int mcp_http_get_stream(const mcp_transport *t);

#endif
