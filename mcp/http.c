/* The MCP Streamable HTTP transport (see http.h). Every exchange with the server is an http_x: a POST
 * carrying one message, the GET that resumes a POST's dropped stream (same http_x, so the request it
 * waits for stays known), or the standalone GET stream. Callbacks come from net/net_fetch.c on the loop;
 * the client may close the transport from inside on_message, so every callback counts itself (depth)
 * and what died meanwhile (exchanges, the transport) is freed when the outermost one returns. */
#include "mcp/http.h"

#include "common/buf.h"
#include "net/net_fetch.h"
#include "net/net_stream.h"
#include "mcp/http_msg.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define HTTP_TIMEOUT_MS 300000L
#define HTTP_CONNECT_MS 10000L
#define HTTP_DELETE_MS 2000L
#define HTTP_MAX_MESSAGE (4u << 20)
#define HTTP_MAX_RESPONSE (64u << 20)
#define HTTP_RETRY_MS 1000L      /* before resuming when the server named no retry */
#define HTTP_RETRY_MAX_MS 60000L /* a server's retry past this is cut to it */
#define HTTP_TRIES 3             /* reconnections in a row that bring no event */
#define HTTP_MAX_HEADERS 64
#define HTTP_ID_MAX 256

typedef enum x_kind { X_POST, X_STREAM } x_kind;

typedef struct http_x {
  struct mcp_http *t;
  x_kind kind;
  net_fetch *fetch;    /* NULL between a drop and its resume */
  struct event *timer; /* the resume */
  char id[128];        /* the request waiting for its answer ("" none) */
  char method[64];
  int answered, had_session, sse, got_event, tries, timed_out;
  int dead;
  long status;
  ag_buf body; /* a JSON body, or the start of an error body */
  net_stream parser;
  int parser_on;
  char last_id[HTTP_ID_MAX];
  long retry_ms;
  struct http_x *prev, *next;
} http_x;

typedef struct mcp_http {
  mcp_transport base;
  net_client *net;
  char *url;
  char origin[256]; /* scheme://host:port of url, for error texts (a path or query may hold a token) */
  char *lines[HTTP_MAX_HEADERS]; /* the user's headers, "Name: value" */
  size_t n_lines;
  net_opts opts; /* an owned copy ({0}: the defaults) */
  mcp_transport_sink sink;
  void *ud;
  long timeout_ms;
  size_t max_message, max_response;
  char session[HTTP_ID_MAX], version[64], init_id[128];
  int get_state; /* 1 open, -1 the server has none, 0 neither */
  http_x *xs;
  http_x *graveyard; /* killed, freed by reap when no callback runs */
  int depth, closed, ended;
} mcp_http;

static const net_fetch_sink x_sink;

static void reap(mcp_http *t);

static void http_free(mcp_http *t) {
  reap(t);
  for (size_t i = 0; i < t->n_lines; i++) {
    explicit_bzero(t->lines[i], strlen(t->lines[i]));
    free(t->lines[i]);
  }
  net_opts_free(&t->opts);
  free(t->url);
  free(t);
}

static void x_free(http_x *x) {
  if (x->timer) event_free(x->timer);
  if (x->parser_on) net_stream_free(&x->parser);
  ag_buf_free(&x->body);
  free(x);
}

/* Ends an exchange: no callback for it afterwards. It goes to the graveyard, freed by reap once no
 * callback of the transport is running (one of its own may be). */
static void x_kill(http_x *x) {
  mcp_http *t = x->t;
  if (x->dead) return;
  x->dead = 1;
  net_fetch_cancel(x->fetch);
  x->fetch = NULL;
  if (x->timer) event_del(x->timer);
  if (x->prev) x->prev->next = x->next;
  else t->xs = x->next;
  if (x->next) x->next->prev = x->prev;
  x->prev = NULL;
  x->next = t->graveyard;
  t->graveyard = x;
}

static void reap(mcp_http *t) {
  while (t->graveyard) {
    http_x *x = t->graveyard;
    t->graveyard = x->next;
    x_free(x);
  }
}

static http_x *x_new(mcp_http *t, x_kind kind) {
  http_x *x = calloc(1, sizeof *x);
  if (!x) return NULL;
  x->t = t;
  x->kind = kind;
  x->retry_ms = -1;
  ag_buf_init(&x->body, t->max_message);
  x->next = t->xs;
  if (t->xs) t->xs->prev = x;
  t->xs = x;
  return x;
}

/* Around every callback: what dies inside one is freed when the outermost returns. */
static void enter(http_x *x) { x->t->depth++; }

static void leave(http_x *x) {
  mcp_http *t = x->t; /* x may be freed below: not used after this */
  if (--t->depth) return;
  if (t->closed) http_free(t);
  else reap(t);
}

/* The end of the transport (session expiry): every exchange dropped, then the client told. */
static void http_end(mcp_http *t, const char *why) {
  if (t->ended || t->closed) return;
  t->ended = 1;
  while (t->xs) x_kill(t->xs);
  t->sink.on_closed(t->ud, why);
}

/* The headers of one request: the user's, then the protocol's. */
typedef struct req_headers {
  const char *v[HTTP_MAX_HEADERS + 4];
  size_t n;
  char version[96], session[HTTP_ID_MAX + 32], last_id[HTTP_ID_MAX + 32];
} req_headers;

static void headers_for(const mcp_http *t, const http_x *x, int get, req_headers *h) {
  h->n = 0;
  for (size_t i = 0; i < t->n_lines; i++) h->v[h->n++] = t->lines[i];
  if (get) {
    h->v[h->n++] = "Accept: text/event-stream";
  } else {
    h->v[h->n++] = "Accept: application/json, text/event-stream";
    h->v[h->n++] = "Content-Type: application/json";
  }
  if (t->version[0]) {
    snprintf(h->version, sizeof h->version, "MCP-Protocol-Version: %s", t->version);
    h->v[h->n++] = h->version;
  }
  if (t->session[0]) {
    snprintf(h->session, sizeof h->session, "Mcp-Session-Id: %s", t->session);
    h->v[h->n++] = h->session;
  }
  if (get && x && x->last_id[0]) {
    snprintf(h->last_id, sizeof h->last_id, "Last-Event-ID: %s", x->last_id);
    h->v[h->n++] = h->last_id;
  }
}

/* (Re)starts an exchange's request: POST with its message, or GET for a stream or a resume. */
static int x_start(http_x *x, const char *body, size_t len) {
  mcp_http *t = x->t;
  int get = body == NULL;
  req_headers h;
  headers_for(t, x, get, &h);
  x->status = 0;
  x->sse = x->got_event = 0;
  ag_buf_reset(&x->body);
  if (x->parser_on) net_stream_free(&x->parser);
  x->parser_on = 0;
  x->had_session = t->session[0] != '\0';
  net_fetch_request req = {
      .method = get ? "GET" : "POST", .url = t->url, .headers = h.v, .n_headers = h.n,
      .body = body, .body_len = len, .timeout_ms = x->kind == X_STREAM ? 0 : t->timeout_ms,
      .connect_timeout_ms = HTTP_CONNECT_MS, .max_body = t->max_response, .net = &t->opts};
  return net_fetch_start(t->net, &req, &x_sink, x, &x->fetch);
}

/* Gives a request its made-up error answer (once), then ends the exchange. */
static void x_fail(http_x *x, const char *why) {
  mcp_http *t = x->t;
  if (x->id[0] && !x->answered && !x->dead) {
    char msg[512];
    snprintf(msg, sizeof msg, "HTTP transport: %s", why);
    char *text = mcp_http_error_answer(x->id, msg);
    x->answered = 1;
    if (text) t->sink.on_message(t->ud, text, strlen(text));
    free(text);
  }
  if (x->kind == X_STREAM && !x->dead) t->get_state = 0;
  x_kill(x);
}

/* An answer going by: which request it answers, and the initialize answer's protocol version. */
static void note_answer(mcp_http *t, http_x *x, const mcp_http_peek *pk) {
  if (!pk->is_response) return;
  if (strcmp(pk->id, x->id) == 0) {
    x->answered = 1;
  } else {
    for (http_x *o = t->xs; o; o = o->next)
      if (!o->answered && strcmp(pk->id, o->id) == 0) {
        o->answered = 1;
        break;
      }
  }
  if (t->init_id[0] && strcmp(pk->id, t->init_id) == 0) {
    snprintf(t->version, sizeof t->version, "%s", pk->protocol_version);
    t->init_id[0] = '\0';
  }
}

static int on_msg(void *ud, const char *json, size_t len, const mcp_http_peek *pk) {
  http_x *x = ud;
  mcp_http *t = x->t;
  note_answer(t, x, pk);
  t->sink.on_message(t->ud, json, len);
  return x->dead ? 1 : 0; /* closed meanwhile: nothing more */
}

static int on_event(void *ud, const char *event, const char *data, size_t len) {
  http_x *x = ud;
  x->got_event = 1;
  x->tries = 0;
  if (!len || (event[0] && strcmp(event, "message") != 0)) return AG_OK; /* a priming or other event */
  return mcp_http_split(data, len, on_msg, x);
}

static void keep_resume_point(http_x *x) {
  const char *id = net_stream_last_id(&x->parser);
  if (id[0]) snprintf(x->last_id, sizeof x->last_id, "%s", id);
  if (net_stream_retry_ms(&x->parser) >= 0) x->retry_ms = net_stream_retry_ms(&x->parser);
}

/* A session id is visible ASCII (the spec's rule); anything else is not put in a header. */
static void keep_session(mcp_http *t, const char *headers) {
  char sid[HTTP_ID_MAX];
  if (!net_fetch_header(headers, "Mcp-Session-Id", sid, sizeof sid) || !sid[0]) return;
  for (const char *p = sid; *p; p++)
    if (*p < 0x21 || *p > 0x7e) return;
  memcpy(t->session, sid, sizeof sid);
}

static void on_response(void *ud, long status, const char *headers) {
  http_x *x = ud;
  mcp_http *t = x->t;
  x->status = status;
  if (status < 200 || status > 299) return;
  keep_session(t, headers);
  if (x->kind == X_STREAM) t->get_state = 1;
  char ct[128];
  net_fetch_header(headers, "Content-Type", ct, sizeof ct);
  if (strncasecmp(ct, "text/event-stream", 17) == 0) {
    x->sse = 1;
    net_stream_init(&x->parser, NET_STREAM_SSE, t->max_message, t->max_response, on_event, x);
    x->parser_on = 1;
  }
}

static void on_body(void *ud, const char *data, size_t len) {
  http_x *x = ud;
  enter(x);
  if (x->sse) {
    int rc = net_stream_feed(&x->parser, data, len);
    keep_resume_point(x);
    if (rc && !x->dead)
      x_fail(x, rc == AG_ERR_TOO_BIG ? "an event past the size cap" : "an event that is not JSON-RPC");
  } else if (ag_buf_append(&x->body, data, len) && x->status >= 200 && x->status <= 299) {
    x_fail(x, "a response past the size cap");
  }
  leave(x);
}

static void open_stream(mcp_http *t);

static void on_resume_timer(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  http_x *x = arg;
  enter(x);
  if (x_start(x, NULL, 0)) x_fail(x, "could not resume the event stream");
  leave(x);
}

/* Waits the server's retry (or HTTP_RETRY_MS), then GETs with Last-Event-ID. */
static int schedule_resume(http_x *x) {
  if (++x->tries > HTTP_TRIES) return AG_ERR_IO;
  if (!x->timer) x->timer = evtimer_new(net_client_base(x->t->net), on_resume_timer, x);
  if (!x->timer) return AG_ERR_NOMEM;
  long ms = x->retry_ms < 0 ? HTTP_RETRY_MS : x->retry_ms < HTTP_RETRY_MAX_MS ? x->retry_ms : HTTP_RETRY_MAX_MS;
  struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
  return evtimer_add(x->timer, &tv) == 0 ? AG_OK : AG_ERR_IO;
}

/* Why a request got no answer, for its made-up error. */
static void why_unanswered(const http_x *x, int err, const char *errmsg, char *why, size_t cap) {
  if (x->timed_out) snprintf(why, cap, "no answer within %ld ms", x->t->timeout_ms);
  else if (err == AG_ERR_TOO_BIG) snprintf(why, cap, "a response past the size cap");
  else if (err) snprintf(why, cap, "%s (%s)", errmsg, x->t->origin);
  else if (x->status < 200 || x->status > 299) snprintf(why, cap, "HTTP %ld from %s", x->status, x->t->origin);
  else if (x->sse) snprintf(why, cap, "the event stream ended without the answer");
  else if (x->body.len) snprintf(why, cap, "a response that is not JSON-RPC");
  else snprintf(why, cap, "HTTP %ld without an answer", x->status);
}

static void post_done(http_x *x, int err, const char *errmsg) {
  mcp_http *t = x->t;
  int ok = x->status >= 200 && x->status <= 299;
  if (x->status == 404 && x->had_session) {
    t->session[0] = '\0'; /* gone: close() sends no DELETE */
    http_end(t, MCP_HTTP_SESSION_EXPIRED);
    return;
  }
  /* A JSON body: the answer, or a JSON-RPC error sent with an error status. */
  if (!err && !x->sse && x->body.len) mcp_http_split(ag_buf_str(&x->body), x->body.len, on_msg, x);
  if (x->dead) return;
  if (ok && strcmp(x->method, "notifications/initialized") == 0 && t->get_state == 0) open_stream(t);
  if (!x->id[0] || x->answered) {
    x_kill(x);
    return;
  }
  if (x->sse && ok && x->last_id[0] && !x->timed_out && err != AG_ERR_TOO_BIG && schedule_resume(x) == AG_OK)
    return;
  char why[400];
  why_unanswered(x, err, errmsg, why, sizeof why);
  x_fail(x, why);
}

/* The standalone GET stream ended: 405 means the server has none; a stream that was open is
 * reopened after the server's retry (up to HTTP_TRIES times in a row without an event). */
static void stream_done(http_x *x) {
  mcp_http *t = x->t;
  if (x->status == 404 && x->had_session) {
    t->session[0] = '\0';
    http_end(t, MCP_HTTP_SESSION_EXPIRED);
    return;
  }
  if (x->status >= 200 && x->status <= 299 && x->sse && !x->timed_out && schedule_resume(x) == AG_OK) return;
  t->get_state = x->status == 405 ? -1 : 0;
  x_kill(x);
}

static void on_done(void *ud, int err, long status, int timed_out, const char *errmsg) {
  http_x *x = ud;
  enter(x);
  x->fetch = NULL;
  x->status = status;
  x->timed_out = timed_out;
  if (x->parser_on && !err) {
    int rc = net_stream_finish(&x->parser);
    keep_resume_point(x);
    if (rc && !x->dead) x_fail(x, "an event that is not JSON-RPC");
  }
  if (!x->dead) {
    if (x->kind == X_STREAM) stream_done(x);
    else post_done(x, err, errmsg);
  }
  leave(x);
}

static const net_fetch_sink x_sink = {on_response, on_body, on_done};

static void open_stream(mcp_http *t) {
  http_x *x = x_new(t, X_STREAM);
  if (x && x_start(x, NULL, 0)) x_kill(x); /* it is optional: without it the server's requests wait */
}

static int http_send(mcp_transport *base, const char *json, size_t len) {
  mcp_http *t = (mcp_http *)base;
  if (t->closed || t->ended) return AG_ERR_STATE;
  mcp_http_peek pk;
  size_t i = 0;
  while (i < len && (json[i] == ' ' || json[i] == '\n' || json[i] == '\r' || json[i] == '\t')) i++;
  if (mcp_http_peek_text(json, len, &pk) && (i == len || json[i] != '[')) return AG_ERR_INVALID;
  if (strcmp(pk.method, "initialize") == 0) { /* a new session */
    t->session[0] = t->version[0] = '\0';
    snprintf(t->init_id, sizeof t->init_id, "%s", pk.id);
    for (http_x *s = t->xs, *next; s; s = next) {
      next = s->next;
      if (s->kind == X_STREAM) x_kill(s);
    }
    t->get_state = 0;
  }
  http_x *x = x_new(t, X_POST);
  if (!x) return AG_ERR_NOMEM;
  if (pk.is_request) memcpy(x->id, pk.id, sizeof x->id);
  memcpy(x->method, pk.method, sizeof x->method);
  int rc = x_start(x, json, len);
  if (rc) x_kill(x);
  if (!t->depth) reap(t);
  return rc;
}

static void on_delete_done(void *ud, int err, long status, int timed_out, const char *errmsg) {
  (void)ud, (void)err, (void)status, (void)timed_out, (void)errmsg;
}
static void on_delete_response(void *ud, long status, const char *headers) { (void)ud, (void)status, (void)headers; }
static void on_delete_body(void *ud, const char *data, size_t len) { (void)ud, (void)data, (void)len; }
static const net_fetch_sink delete_sink = {on_delete_response, on_delete_body, on_delete_done};

static void http_close(mcp_transport *base) {
  mcp_http *t = (mcp_http *)base;
  if (t->closed) return;
  t->closed = 1;
  while (t->xs) x_kill(t->xs);
  if (t->session[0]) { /* fire and forget: it goes out while the loop runs, or with the client */
    req_headers h;
    headers_for(t, NULL, 1, &h);
    net_fetch_request req = {.method = "DELETE", .url = t->url, .headers = h.v, .n_headers = h.n,
                             .timeout_ms = HTTP_DELETE_MS, .connect_timeout_ms = HTTP_DELETE_MS,
                             .max_body = 1u << 16, .net = &t->opts};
    net_fetch_start(t->net, &req, &delete_sink, NULL, NULL);
  }
  if (!t->depth) http_free(t);
}

static const mcp_transport_ops http_ops = {http_send, http_close};

static int header_ok(const mcp_http_header *h) {
  if (!h->name || !h->value || !h->name[0] || strpbrk(h->name, ":\r\n \t")) return 0;
  return strpbrk(h->value, "\r\n") == NULL;
}

/* "https://user:pw@host:8443/mcp?key=k" → "https://host:8443". */
static void set_origin(mcp_http *t) {
  const char *scheme_end = strstr(t->url, "://") + 3;
  const char *host = scheme_end, *end = scheme_end + strcspn(scheme_end, "/?#");
  const char *at = memchr(host, '@', (size_t)(end - host));
  if (at) host = at + 1;
  snprintf(t->origin, sizeof t->origin, "%.*s%.*s", (int)(scheme_end - t->url), t->url, (int)(end - host), host);
}

static int copy_options(mcp_http *t, const mcp_http_options *opt) {
  if (!opt->url || (strncasecmp(opt->url, "http://", 7) != 0 && strncasecmp(opt->url, "https://", 8) != 0))
    return AG_ERR_INVALID;
  if (opt->n_headers > HTTP_MAX_HEADERS) return AG_ERR_INVALID;
  for (size_t i = 0; i < opt->n_headers; i++)
    if (!header_ok(&opt->headers[i])) return AG_ERR_INVALID;
  if (!(t->url = strdup(opt->url))) return AG_ERR_NOMEM;
  set_origin(t);
  for (size_t i = 0; i < opt->n_headers; i++) {
    size_t n = strlen(opt->headers[i].name) + strlen(opt->headers[i].value) + 3;
    if (!(t->lines[i] = malloc(n))) return AG_ERR_NOMEM;
    t->n_lines++;
    snprintf(t->lines[i], n, "%s: %s", opt->headers[i].name, opt->headers[i].value);
  }
  if (opt->net && net_opts_copy(&t->opts, opt->net)) return AG_ERR_NOMEM;
  t->timeout_ms = opt->timeout_ms > 0 ? opt->timeout_ms : HTTP_TIMEOUT_MS;
  t->max_message = opt->max_message ? opt->max_message : HTTP_MAX_MESSAGE;
  t->max_response = opt->max_response ? opt->max_response : HTTP_MAX_RESPONSE;
  return AG_OK;
}

int mcp_http_open(net_client *net, const mcp_http_options *opt, const mcp_transport_sink *sink, void *ud,
                  mcp_transport **out) {
  mcp_http *t = calloc(1, sizeof *t);
  if (!t) return AG_ERR_NOMEM;
  t->base.ops = &http_ops;
  t->net = net;
  t->sink = *sink;
  t->ud = ud;
  int rc = copy_options(t, opt);
  if (rc) {
    http_free(t);
    return rc;
  }
  *out = &t->base;
  return AG_OK;
}

const char *mcp_http_session(const mcp_transport *t) { return ((const mcp_http *)t)->session; }

const char *mcp_http_protocol_version(const mcp_transport *t) { return ((const mcp_http *)t)->version; }

int mcp_http_get_stream(const mcp_transport *t) { return ((const mcp_http *)t)->get_state; }
