/* A plain HTTP request on a network client's transport, for the layers that do not drive libcurl
 * themselves (the MCP Streamable HTTP transport): the same curl multi handles on the same loop as the
 * LLM providers, with TLS, CA bundle and proxy from a net_opts (net/net_opts.h). Unlike net/net_http.h,
 * every callback runs from the loop, never inside libcurl, so a sink may start or cancel requests (its
 * own included) from any callback. */
#ifndef AG_NET_FETCH_H
#define AG_NET_FETCH_H

#include <stddef.h>

#include "net/net_client.h"
#include "net/net_opts.h"

typedef struct net_fetch net_fetch;

typedef struct net_fetch_request {
  const char *method;         /* "GET", "POST", "DELETE", ... */
  const char *url;            /* http:// or https:// only */
  const char *const *headers; /* n_headers "Name: value" lines; copied, and wiped when the request ends */
  size_t n_headers;
  const char *body;           /* NULL: none; copied */
  size_t body_len;
  long timeout_ms;            /* the whole request; 0: none (a long-lived event stream) */
  long connect_timeout_ms;    /* 0: libcurl's default */
  size_t max_body;            /* bytes of response body accepted in all; past it the request fails */
  const net_opts *net;        /* ca_file, proxy, insecure (borrowed for the call); NULL: the defaults */
} net_fetch_request;

/* What a request reports, in this order: on_response once (before any body), on_body for each piece,
 * on_done once; none after net_fetch_cancel. ud is borrowed until on_done or cancel. */
typedef struct net_fetch_sink {
  /* The final response's status and its header block ("Name: value\r\n" lines, NUL-terminated,
   * borrowed for the call); read one header with net_fetch_header. */
  void (*on_response)(void *ud, long status, const char *headers);
  void (*on_body)(void *ud, const char *data, size_t len);
  /* err: AG_OK when the whole response arrived (whatever its status), AG_ERR_TOO_BIG past max_body,
   * AG_ERR_IO for a transport failure (refused, reset, timed out: errmsg says which, timed_out set).
   * status is 0 when no response came. */
  void (*on_done)(void *ud, int err, long status, int timed_out, const char *errmsg);
} net_fetch_sink;

/* Starts a request on c's transport (created on first use). sink is borrowed (static). Callbacks run
 * from later loop iterations, never from inside this call. *out (may be NULL) is valid until on_done
 * returns or net_fetch_cancel. */
int net_fetch_start(net_client *c, const net_fetch_request *req, const net_fetch_sink *sink, void *ud,
                    net_fetch **out);

/* Stops a request: no callback runs for it afterwards. Safe from inside its own callbacks. */
void net_fetch_cancel(net_fetch *f);

/* Copies the value of header name (case-insensitive, white space trimmed) from a header block into
 * out (cap bytes, truncated); returns 1 when found, 0 otherwise (out then ""). */
int net_fetch_header(const char *headers, const char *name, char *out, size_t cap);

/* Requests not yet ended (for tests: a closed user leaves none behind). */
size_t net_fetch_live(const net_client *c);

#endif
