/* A plain HTTP request on the LLM client's transport, for the layers above llm/ (the MCP Streamable
 * HTTP transport): the same curl multi handles on the same loop, the same TLS, CA bundle and proxy
 * settings as the providers (llm/net.c). Unlike llm/http.h, every callback runs from the loop, never
 * inside libcurl, so a sink may start or cancel requests (its own included) from any callback. */
#ifndef AG_LLM_FETCH_H
#define AG_LLM_FETCH_H

#include <stddef.h>

#include "llm/llm.h"

typedef struct llm_fetch llm_fetch;

typedef struct llm_fetch_request {
  const char *method;         /* "GET", "POST", "DELETE", ... */
  const char *url;            /* http:// or https:// only */
  const char *const *headers; /* n_headers "Name: value" lines; copied, and wiped when the request ends */
  size_t n_headers;
  const char *body;           /* NULL: none; copied */
  size_t body_len;
  long timeout_ms;            /* the whole request; 0: none (a long-lived event stream) */
  long connect_timeout_ms;    /* 0: libcurl's default */
  size_t max_body;            /* bytes of response body accepted in all; past it the request fails */
  const llm_config *net;      /* ca_file, proxy, insecure (borrowed for the call); NULL: the defaults */
} llm_fetch_request;

/* What a request reports, in this order: on_response once (before any body), on_body for each piece,
 * on_done once; none after llm_fetch_cancel. ud is borrowed until on_done or cancel. */
typedef struct llm_fetch_sink {
  /* The final response's status and its header block ("Name: value\r\n" lines, NUL-terminated,
   * borrowed for the call); read one header with llm_fetch_header. */
  void (*on_response)(void *ud, long status, const char *headers);
  void (*on_body)(void *ud, const char *data, size_t len);
  /* err: AG_OK when the whole response arrived (whatever its status), AG_ERR_TOO_BIG past max_body,
   * AG_ERR_IO for a transport failure (refused, reset, timed out: errmsg says which, timed_out set).
   * status is 0 when no response came. */
  void (*on_done)(void *ud, int err, long status, int timed_out, const char *errmsg);
} llm_fetch_sink;

/* Starts a request on c's transport (created on first use). sink is borrowed (static). Callbacks run
 * from later loop iterations, never from inside this call. *out (may be NULL) is valid until on_done
 * returns or llm_fetch_cancel. */
int llm_fetch_start(llm_client *c, const llm_fetch_request *req, const llm_fetch_sink *sink, void *ud,
                    llm_fetch **out);

/* Stops a request: no callback runs for it afterwards. Safe from inside its own callbacks. */
void llm_fetch_cancel(llm_fetch *f);

/* Copies the value of header name (case-insensitive, white space trimmed) from a header block into
 * out (cap bytes, truncated); returns 1 when found, 0 otherwise (out then ""). */
int llm_fetch_header(const char *headers, const char *name, char *out, size_t cap);

/* The loop c runs on, for callers' own timers. */
struct event_base *llm_fetch_base(const llm_client *c);

/* Requests not yet ended (for tests: a closed user leaves none behind). */
size_t llm_fetch_live(const llm_client *c);

#endif
