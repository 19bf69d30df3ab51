/* The pure half of the Streamable HTTP transport (mcp/http.c): splitting a response body or an SSE
 * event into JSON-RPC messages, reading what the transport needs from a message going by (its id,
 * method, an initialize result's protocol version), and wording the error answer the transport gives
 * for a request it could not carry. No I/O; fuzzed by fuzz/fuzz_mcp_http.c. */
#ifndef AG_MCP_HTTP_MSG_H
#define AG_MCP_HTTP_MSG_H

#include <stddef.h>

/* The JSON-RPC error code of the answers the transport makes up (JSON-RPC's "server error" range). */
#define MCP_HTTP_TRANSPORT_ERROR (-32000)

typedef struct mcp_http_peek {
  int is_request;            /* "method" and "id" */
  int is_response;           /* "id" and "result" or "error", no "method" */
  int bad_id;                /* an id no answer could echo: neither a string nor a whole number within
                                +-(2^53-1) (1.5, -1e999, 2^53, true); the message is then neither of the two */
  char id[128];              /* the id as compact JSON (1, "a"), a number as its exact integer; "" when
                                absent, null, bad or too long */
  char method[64];           /* "" when absent or too long */
  char protocol_version[64]; /* result.protocolVersion of a response; "" when absent */
} mcp_http_peek;

/* Called for each message with its compact JSON text (borrowed, NUL-terminated) and what it says.
 * A non-zero return stops the split and is returned by it. */
typedef int (*mcp_http_msg_fn)(void *ud, const char *json, size_t len, const mcp_http_peek *pk);

/* body is one message (a JSON object) or a batch (an array of objects, split in order; an empty
 * array holds none). Returns AG_OK, AG_ERR_INVALID when it is neither or a message in it has a bad id
 * (nothing is delivered then: no answer could carry that id back, and a request stripped of it would
 * pass for a notification), AG_ERR_NOMEM, or what fn returned. A numeric id is handed on as its exact
 * integer (cJSON alone would print 9000000001999981 as 9.00000000199998e+15). */
int mcp_http_split(const char *body, size_t len, mcp_http_msg_fn fn, void *ud);

/* Reads one message's text; AG_ERR_INVALID when it is not a JSON object. */
int mcp_http_peek_text(const char *json, size_t len, mcp_http_peek *out);

/* {"jsonrpc":"2.0","id":ID,"error":{"code":MCP_HTTP_TRANSPORT_ERROR,"message":MESSAGE}} for a request
 * whose id (compact JSON, as in mcp_http_peek) is id_json, the id written exactly as that text reads;
 * malloc'd, NULL when out of memory or id_json is not an id a peek gives. */
char *mcp_http_error_answer(const char *id_json, const char *message);

#endif
