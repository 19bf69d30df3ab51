/* agora serve's HTTP front: listening with evhttp on the server's loop, the bearer token, routing each
 * request (serve_route.c) to the page, /healthz, /metrics or the JSON API, and the JSON replies. */
#include "serve/serve_int.h"

#include "common/jsonnum.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

void serve_reply_json(struct evhttp_request *req, int status, cJSON *j) {
  /* Text from storage or NATS may hold any bytes: the reply is repaired into valid UTF-8. */
  char *text = j ? ag_json_print_line(j) : NULL;
  cJSON_Delete(j);
  struct evbuffer *b = evbuffer_new();
  if (!text || !b) {
    free(text);
    if (b) evbuffer_free(b);
    evhttp_send_error(req, 500, "out of memory");
    return;
  }
  evbuffer_add(b, text, strlen(text));
  evbuffer_add(b, "\n", 1);
  free(text);
  evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
  evhttp_send_reply(req, status, serve_status_reason(status), b);
  evbuffer_free(b);
}

void serve_reply_error(struct evhttp_request *req, int status, const char *fmt, ...) {
  char msg[SERVE_ERR_MAX + 128];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  cJSON *j = cJSON_CreateObject();
  cJSON *e = cJSON_AddObjectToObject(j, "error");
  cJSON_AddStringToObject(e, "code", serve_status_code(status));
  cJSON_AddStringToObject(e, "message", msg);
  serve_reply_json(req, status, j);
}

int serve_status_of(int err) {
  switch (err) {
  case AG_ERR_NOT_FOUND: return 404;
  case AG_ERR_STATE:
  case AG_ERR_EXISTS: return 409;
  case AG_ERR_INVALID:
  case AG_ERR_VERSION: return 422;
  case AG_ERR_TOO_BIG: return 413;
  default: return 500;
  }
}

void serve_reply_fail(struct evhttp_request *req, int rc, const ag_errmsg *em) {
  serve_reply_error(req, serve_status_of(rc), "%s", em->text[0] ? em->text : ag_strerror(rc));
}

/* Compares the whole of both, whatever differs first: the time taken says nothing about the token. */
static int token_equal(const char *a, size_t alen, const char *b, size_t blen) {
  unsigned char d = alen != blen;
  for (size_t i = 0; i < alen; i++) d |= (unsigned char)(a[i] ^ b[i % (blen ? blen : 1)]);
  return d == 0 && blen;
}

static int authorized(serve *s, struct evhttp_request *req) {
  if (!s->token) return 1;
  const char *h = evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
  if (!h || strncmp(h, "Bearer ", 7)) return 0;
  return token_equal(h + 7, strlen(h + 7), s->token, strlen(s->token));
}

static int method_of(struct evhttp_request *req) {
  switch (evhttp_request_get_command(req)) {
  case EVHTTP_REQ_GET: return SERVE_GET;
  case EVHTTP_REQ_POST: return SERVE_POST;
  case EVHTTP_REQ_PATCH: return SERVE_PATCH;
  case EVHTTP_REQ_DELETE: return SERVE_DELETE;
  case EVHTTP_REQ_PUT: return SERVE_PUT;
  case EVHTTP_REQ_HEAD: return SERVE_HEAD;
  default: return SERVE_OTHER;
  }
}

static void reply_page(struct evhttp_request *req) {
  struct evbuffer *b = evbuffer_new();
  if (!b) return evhttp_send_error(req, 500, "out of memory");
  evbuffer_add_reference(b, serve_page_html, serve_page_html_len, NULL, NULL);
  struct evkeyvalq *hd = evhttp_request_get_output_headers(req);
  evhttp_add_header(hd, "Content-Type", "text/html; charset=utf-8");
  /* Scripts only from the server's own files: no inline script or handler runs, even one that got past
   * the sanitiser in a rendered reply (docs/serve.md "The page"). */
  evhttp_add_header(hd, "Content-Security-Policy",
                    "default-src 'self'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; "
                    "object-src 'none'; base-uri 'none'; form-action 'none'");
  evhttp_send_reply(req, 200, "OK", b);
  evbuffer_free(b);
}

/* A file embedded in the binary (len bytes at data, never copied), as type. */
static void reply_embedded(struct evhttp_request *req, const char *data, unsigned long len, const char *type) {
  struct evbuffer *b = evbuffer_new();
  if (!b) return evhttp_send_error(req, 500, "out of memory");
  evbuffer_add_reference(b, data, len, NULL, NULL);
  struct evkeyvalq *hd = evhttp_request_get_output_headers(req);
  evhttp_add_header(hd, "Content-Type", type);
  evhttp_add_header(hd, "X-Content-Type-Options", "nosniff");
  evhttp_send_reply(req, 200, "OK", b);
  evbuffer_free(b);
}

/* GET /assets/NAME: the page's script and the libraries it embeds, from the binary. */
static void reply_asset(struct evhttp_request *req, const char *name) {
  static const struct { const char *name; const char *data; const unsigned long *len; } assets[] = {
    {"app.js", serve_app_js, &serve_app_js_len},
    {"actions.js", serve_actions_js, &serve_actions_js_len},
    {"agents.js", serve_agents_js, &serve_agents_js_len},
    {"marked.js", serve_marked_js, &serve_marked_js_len},
    {"purify.js", serve_purify_js, &serve_purify_js_len},
    {"graphs.js", serve_graphs_js, &serve_graphs_js_len},
    {"d3.js", serve_d3_js, &serve_d3_js_len}};
  for (size_t i = 0; i < sizeof assets / sizeof *assets; i++)
    if (!strcmp(name, assets[i].name))
      return reply_embedded(req, assets[i].data, *assets[i].len, "text/javascript; charset=utf-8");
  serve_reply_error(req, 404, "no asset '%s'", name);
}

static void allow_header(struct evhttp_request *req, int allowed) {
  static const struct { int bit; const char *name; } m[] = {
    {SERVE_GET, "GET, HEAD"}, {SERVE_POST, "POST"}, {SERVE_PATCH, "PATCH"}, {SERVE_DELETE, "DELETE"},
    {SERVE_PUT, "PUT"}};
  char v[64] = "";
  for (size_t i = 0; i < sizeof m / sizeof *m; i++)
    if (allowed & m[i].bit) snprintf(v + strlen(v), sizeof v - strlen(v), "%s%s", v[0] ? ", " : "", m[i].name);
  evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", v);
}

static void on_request(struct evhttp_request *req, void *arg) {
  serve *s = arg;
  s->requests++;
  if (s->stopping) return serve_reply_error(req, 503, "the server is stopping");
  if (serve_conn_request(s, req)) {
    evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
    evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", "1");
    return serve_reply_error(req, 503, "too many connections (the server takes %zu at once): try again later",
                             s->max_conns);
  }
  int method = method_of(req);
  serve_match m;
  char err[SERVE_ERR_MAX];
  struct evkeyvalq *in_hd = evhttp_request_get_input_headers(req);
  if (serve_check_origin(evhttp_find_header(in_hd, "Host"), evhttp_find_header(in_hd, "Origin"), !s->token, err))
    return serve_reply_error(req, 403, "%s", err);
  int status = serve_route_match(method, evhttp_request_get_uri(req), &m, err);
  /* Only the page may be fetched from another site (a link to it); an <img> or a form there must not
   * reach anything else (issue 28 item 2b). */
  char site_err[SERVE_ERR_MAX];
  if (m.route != SR_PAGE && m.route != SR_ASSET && serve_check_fetch_site(evhttp_find_header(in_hd, "Sec-Fetch-Site"), site_err))
    return serve_reply_error(req, 403, "%s", site_err);
  /* The page, its scripts and the health check need no token: the page asks for it. */
  if (m.route != SR_PAGE && m.route != SR_ASSET && m.route != SR_HEALTHZ && !authorized(s, req)) {
    evhttp_add_header(evhttp_request_get_output_headers(req), "WWW-Authenticate", "Bearer");
    return serve_reply_error(req, 401, "missing or wrong bearer token");
  }
  if (status == 405) allow_header(req, m.allowed);
  if (status) return serve_reply_error(req, status, "%s", err);
  struct evbuffer *in = evhttp_request_get_input_buffer(req);
  size_t len = evbuffer_get_length(in);
  if (len > SERVE_BODY_MAX) return serve_reply_error(req, 413, "the request body is larger than %u bytes", SERVE_BODY_MAX);
  const char *body = len ? (const char *)evbuffer_pullup(in, (ev_ssize_t)len) : "";
  if (m.route == SR_PAGE) return reply_page(req);
  if (m.route == SR_ASSET) return reply_asset(req, m.asset);
  /* The API's own description: an /api route like the others, so behind the token when there is one. */
  if (m.route == SR_OPENAPI) return reply_embedded(req, serve_openapi_json, serve_openapi_json_len, "application/json");
  if (m.route == SR_HEALTHZ) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "status", "ok");
    cJSON_AddNumberToObject(j, "worlds", (double)s->n_worlds);
    return serve_reply_json(req, 200, j);
  }
  if (m.route == SR_METRICS) return serve_metrics_reply(s, req);
  serve_api_handle(s, req, &m, method, body ? body : "", body ? len : 0);
}

/* Splits "HOST:PORT" ("[V6]:PORT") into host (cap bytes) and port; 0 or -1. */
static int split_listen(const char *listen, char *host, size_t cap, int *port) {
  const char *colon = strrchr(listen, ':');
  if (!colon || !colon[1]) return -1;
  const char *h = listen;
  size_t hlen = (size_t)(colon - listen);
  if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') h++, hlen -= 2;
  if (hlen == 0 || hlen >= cap) return -1;
  memcpy(host, h, hlen);
  host[hlen] = '\0';
  char *end;
  long p = strtol(colon + 1, &end, 10);
  if (*end || p < 0 || p > 65535) return -1;
  *port = (int)p;
  return 0;
}

int serve_listen_is_loopback(const char *listen) {
  char host[256];
  int port;
  if (split_listen(listen, host, sizeof host, &port)) return 0;
  struct in_addr a4;
  if (!strcmp(host, "localhost") || !strcmp(host, "::1")) return 1;
  return inet_pton(AF_INET, host, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
}

int serve_http_start(serve *s, const char *listen, ag_errmsg *em) {
  char host[256];
  int port;
  if (split_listen(listen, host, sizeof host, &port))
    return ag_fail(em, AG_ERR_INVALID, "serve: --listen '%s': expected HOST:PORT (e.g. 127.0.0.1:8080)", listen);
  if (!(s->http = evhttp_new(s->base))) return ag_fail(em, AG_ERR_NOMEM, "serve: cannot create the HTTP server");
  evhttp_set_allowed_methods(s->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT |
                                          EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH);
  /* Bodies up to 4 x the cap reach the handler, which answers 413 as JSON; larger ones are refused
   * by evhttp itself (413) before they are read, so memory stays bounded. */
  evhttp_set_max_body_size(s->http, 4 * (ev_ssize_t)SERVE_BODY_MAX);
  evhttp_set_max_headers_size(s->http, 64 * 1024);
  evhttp_set_gencb(s->http, on_request, s);
  /* A connection idle (or a reply unsent) this long is closed; event streams set their own. */
  evhttp_set_timeout(s->http, SERVE_IDLE_S);
  int rc = serve_conns_start(s, em);
  if (rc) return rc;
  struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(s->http, host, (ev_uint16_t)port);
  s->bound = bs;
  if (!bs) return ag_fail(em, AG_ERR_IO, "serve: cannot listen on %s (in use, or not an address of this host)", listen);
  serve_conns_listen(s);
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  char addr[INET6_ADDRSTRLEN] = "?";
  int bound = port;
  if (!getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&ss, &sl)) {
    if (ss.ss_family == AF_INET6) {
      struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
      inet_ntop(AF_INET6, &a->sin6_addr, addr, sizeof addr);
      bound = ntohs(a->sin6_port);
    } else {
      struct sockaddr_in *a = (struct sockaddr_in *)&ss;
      inet_ntop(AF_INET, &a->sin_addr, addr, sizeof addr);
      bound = ntohs(a->sin_port);
    }
  }
  /* The one line a script (or a test on port 0) reads to find the server. */
  printf(strchr(addr, ':') ? "agora: serving on http://[%s]:%d/\n" : "agora: serving on http://%s:%d/\n", addr, bound);
  fflush(stdout);
  return AG_OK;
}

void serve_http_stop_accepting(serve *s) {
  if (s->http && s->bound) evhttp_del_accept_socket(s->http, s->bound);
  s->bound = NULL;
}
