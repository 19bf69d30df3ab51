/* The HTTP transport of a network client: libcurl multi handles (one for HTTP/2, one for HTTP/1.1) per
 * client, driven by the client's libevent loop (socket and timer callbacks, curl_multi_socket_action),
 * so hundreds of requests are in flight together on one thread. It knows nothing of providers: it runs
 * transfers the caller configured (net_opts_setup for TLS and proxies) and reports headers, body bytes
 * and the end to a sink. The LLM providers use it directly; other layers use net/net_fetch.h. */
#ifndef AG_NET_HTTP_H
#define AG_NET_HTTP_H

#include <curl/curl.h>
#include <stddef.h>

#include "net/net_client.h"

typedef struct net_http_xfer net_http_xfer;

/* What a transfer reports. on_header and on_body run from inside libcurl callbacks: they must not
 * call curl, and a non-zero return aborts the transfer (on_done then sees CURLE_WRITE_ERROR).
 * on_done runs from the loop after the transfer has been removed and freed: it may start new
 * transfers or cancel others. None runs after net_http_cancel. */
typedef struct net_http_sink {
  int (*on_header)(void *ud, const char *line, size_t len);
  int (*on_body)(void *ud, const char *data, size_t len);
  /* status is the HTTP status (0 without a response); proxy_code the proxy's answer to CONNECT (0
   * without a tunnel); errmsg describes a transport failure. */
  void (*on_done)(void *ud, CURLcode res, long status, long proxy_code, const char *errmsg);
  /* NULL, or runs from inside libcurl (so, like on_header, it must not call curl) each time the
   * connection is ready and the request is about to leave (CURLOPT_PREREQFUNCTION): the moment a server
   * starts counting it, which for a new connection is later than net_http_start by its set-up. */
  void (*on_sent)(void *ud);
} net_http_sink;

/* Runs a transfer to url (copied) on c's transport, created on first use: HTTP/2 connections shared by
 * the calls to an HTTPS server, HTTP/1.1 connections kept alive between turns, TLS sessions resumed.
 * Takes easy (configured by the caller: body, timeouts, TLS) and headers (freed, after their bytes are
 * wiped since they may hold a key, when the transfer ends); both are consumed even on failure. sink is
 * borrowed (static), ud until on_done or cancel. Safe to call from inside a sink callback: the transfer
 * is then added from the loop. */
int net_http_start(net_client *c, CURL *easy, const char *url, struct curl_slist *headers,
                   const net_http_sink *sink, void *ud, net_http_xfer **out);

/* Stops a transfer: no sink callback runs for it afterwards. When called from inside a libcurl
 * callback (an on_chunk that cancels), the easy handle is removed later from the loop, as libcurl
 * forbids removing handles from its callbacks. */
void net_http_cancel(net_http_xfer *x);

/* Transfers of c not yet freed (running, waiting to be added, or cancelled and waiting to be removed);
 * 0 before the first. */
size_t net_http_live(const net_client *c);

#endif
