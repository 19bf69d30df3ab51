/* The HTTP transport of the LLM layer: libcurl multi handles (one for HTTP/2, one for HTTP/1.1) per client, driven by the client's
 * libevent loop (socket and timer callbacks, curl_multi_socket_action), so hundreds of requests are
 * in flight together on one thread. It knows nothing of providers: it runs transfers and reports
 * headers, body bytes and the end to a sink. Only llm/ includes this. */
#ifndef AG_LLM_HTTP_H
#define AG_LLM_HTTP_H

#include <curl/curl.h>
#include <stddef.h>

#include "llm/provider.h"

typedef struct llm_http llm_http;
typedef struct llm_http_xfer llm_http_xfer;

/* What a transfer reports. on_header and on_body run from inside libcurl callbacks: they must not
 * call curl, and a non-zero return aborts the transfer (on_done then sees CURLE_WRITE_ERROR).
 * on_done runs from the loop after the transfer has been removed and freed: it may start new
 * transfers or cancel others. None runs after llm_http_cancel. */
typedef struct llm_http_sink {
  int (*on_header)(void *ud, const char *line, size_t len);
  int (*on_body)(void *ud, const char *data, size_t len);
  /* status is the HTTP status (0 without a response); proxy_code the proxy's answer to CONNECT (0
   * without a tunnel); errmsg describes a transport failure. */
  void (*on_done)(void *ud, CURLcode res, long status, long proxy_code, const char *errmsg);
} llm_http_sink;

/* The client's transport, created on first use: HTTP/2 connections shared by the calls to an HTTPS
 * server, HTTP/1.1 connections kept alive between turns, TLS sessions resumed. */
int llm_http_get(llm_client *c, llm_http **out);

/* Runs a transfer to url (copied). Takes easy (configured by the caller: body, timeouts, TLS) and
 * headers (freed,
 * after their bytes are wiped since they may hold a key, when the transfer ends); both are consumed
 * even on failure. sink is borrowed (static), ud until on_done or cancel. Safe to call from inside a
 * sink callback: the transfer is then added from the loop. */
int llm_http_start(llm_http *h, CURL *easy, const char *url, struct curl_slist *headers,
                   const llm_http_sink *sink, void *ud, llm_http_xfer **out);

/* Stops a transfer: no sink callback runs for it afterwards. When called from inside a libcurl
 * callback (an on_chunk that cancels), the easy handle is removed later from the loop, as libcurl
 * forbids removing handles from its callbacks. */
void llm_http_cancel(llm_http_xfer *x);

/* Transfers not yet freed (running, waiting to be added, or cancelled and waiting to be removed). */
size_t llm_http_live(const llm_http *h);

#endif
