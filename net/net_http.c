/* libcurl's multi interface on a libevent loop (see net_http.h): curl tells us which sockets to watch
 * and when to wake it; we call curl_multi_socket_action on those events and read finished transfers
 * with curl_multi_info_read. Nothing blocks, nothing sleeps, no threads. Handles are only added and
 * removed outside libcurl's callbacks: when asked from inside one, the work is queued for the loop.
 *
 * Two multi handles: "serial" for plain HTTP and HTTPS servers known to speak only HTTP/1.1 (one
 * connection per call in flight, kept alive between turns), "mux" for the other HTTPS servers,
 * where calls share HTTP/2 connections. libcurl 7.88 opens a new connection for every call that
 * finds the connections full (CURLOPT_PIPEWAIT only waits for a connection still being set up),
 * so on "mux" the connections per host are capped at what the calls in flight need at
 * HTTP_STREAMS_GUESS streams each; calls past the cap wait inside libcurl for a free stream. An
 * HTTPS server that answers with HTTP/1.x moves to "serial", with its calls not yet sent. */
#include "net/net_http.h"

#include "common/error.h"
#include "net/net_int.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Generous: a world may run hundreds of agents against one local server. */
#define HTTP_MAX_HOST_CONNECTIONS 1024L
#define HTTP_MAX_TOTAL_CONNECTIONS 4096L
/* Idle connections kept for the next turn (HTTP/1.1 keep-alive): one per agent of a large world.
 * libcurl's default keeps 4 per transfer in flight, which after a turn is none. */
#define HTTP_MAX_IDLE_CONNECTIONS 1024L
/* Streams an HTTP/2 server allows on a connection: 100 is the usual SETTINGS value (nghttpx, Go,
 * Google front ends; nginx 128). libcurl honours the real one; this only sizes the cap above. */
#define HTTP_STREAMS_GUESS 100
#define HTTP_ORIGIN_MAX 256

enum { HTTP_MUX = 0, HTTP_SERIAL = 1 };

typedef struct net_http net_http;

typedef struct http_multi {
  struct net_http *h;
  CURLM *m;
  struct event *timer; /* curl's timeout */
  int kind;            /* HTTP_MUX or HTTP_SERIAL */
} http_multi;

/* What is known of a server (scheme://host:port): whether it multiplexes, and calls on it. */
typedef struct http_origin {
  char name[HTTP_ORIGIN_MAX];
  int serial;    /* answered with HTTP/1.x: its calls go to the serial multi */
  size_t on_mux; /* its transfers in the mux multi */
  struct http_origin *next;
} http_origin;

typedef enum xfer_state {
  XFER_PENDING, /* waiting for the loop to add it (started from inside a curl callback) */
  XFER_ADDED,   /* in a multi handle */
  XFER_DEAD     /* cancelled from inside a curl callback: waiting for the loop to remove it */
} xfer_state;

struct net_http_xfer {
  net_http *http;
  CURL *easy;
  struct curl_slist *headers;
  const net_http_sink *sink; /* NULL once cancelled or done */
  void *ud;
  xfer_state state;
  http_origin *origin;
  http_multi *mx;             /* where it is (or goes) */
  net_http_xfer *prev, *next; /* all transfers, for teardown */
  net_http_xfer *queue;       /* next in the pending or dead queue */
  char errbuf[CURL_ERROR_SIZE];
};

typedef struct http_sock {
  struct event *ev;
  http_multi *mx;
  struct http_sock *prev, *next;
} http_sock;

struct net_http {
  struct event_base *base;
  http_multi mx[2];    /* HTTP_MUX, HTTP_SERIAL */
  CURLSH *share;       /* TLS sessions and DNS answers, shared by every transfer (each has its own easy) */
  struct event *later; /* runs the queues below from the loop */
  int depth;           /* > 0 while inside curl_multi_socket_action: curl callbacks may be running */
  int moves;           /* an origin turned serial: move its unsent transfers (from the loop) */
  net_http_xfer *all;
  size_t live;
  net_http_xfer *pending, *pending_tail;
  net_http_xfer *dead;
  http_sock *socks;
  http_origin *origins;
  long mux_cap; /* CURLMOPT_MAX_HOST_CONNECTIONS of the mux multi */
};

static void wipe_headers(struct curl_slist *l) {
  for (; l; l = l->next) explicit_bzero(l->data, strlen(l->data));
}

/* "https://host:port/path" → its origin record, created on first sight (NULL: out of memory). */
static http_origin *origin_for(net_http *h, const char *url) {
  const char *p = strstr(url, "://");
  p = p ? strchr(p + 3, '/') : NULL;
  size_t n = p ? (size_t)(p - url) : strlen(url);
  if (n >= HTTP_ORIGIN_MAX) n = HTTP_ORIGIN_MAX - 1;
  for (http_origin *o = h->origins; o; o = o->next)
    if (strlen(o->name) == n && strncasecmp(o->name, url, n) == 0) return o;
  http_origin *o = calloc(1, sizeof *o);
  if (!o) return NULL;
  memcpy(o->name, url, n);
  o->serial = strncasecmp(url, "https://", 8) != 0; /* plain HTTP is HTTP/1.1 */
  o->next = h->origins;
  h->origins = o;
  return o;
}

/* Caps the mux multi's connections per host at what its busiest origin needs. */
static void mux_resize(net_http *h) {
  size_t most = 0;
  for (http_origin *o = h->origins; o; o = o->next)
    if (o->on_mux > most) most = o->on_mux;
  long cap = (long)((most + HTTP_STREAMS_GUESS - 1) / HTTP_STREAMS_GUESS);
  if (cap < 2) cap = 2;
  if (cap < h->mux_cap) return; /* never shrink while busy: calls may be waiting on the larger cap */
  h->mux_cap = cap;
  curl_multi_setopt(h->mx[HTTP_MUX].m, CURLMOPT_MAX_HOST_CONNECTIONS, cap);
}

static void xfer_detach(net_http_xfer *x) {
  if (x->state != XFER_PENDING) { /* added, or dead: still in its multi */
    curl_multi_remove_handle(x->mx->m, x->easy);
    if (x->mx->kind == HTTP_MUX && x->origin->on_mux) x->origin->on_mux--;
  }
  x->state = XFER_PENDING;
}

static void xfer_free(net_http_xfer *x) {
  net_http *h = x->http;
  xfer_detach(x);
  curl_easy_cleanup(x->easy);
  wipe_headers(x->headers);
  curl_slist_free_all(x->headers);
  if (x->prev) x->prev->next = x->next;
  else h->all = x->next;
  if (x->next) x->next->prev = x->prev;
  h->live--;
  if (!h->live) h->mux_cap = 0; /* quiet: the next turn sizes the cap afresh */
  free(x);
}

static int xfer_add(net_http_xfer *x) {
  net_http *h = x->http;
  x->mx = &h->mx[x->origin->serial ? HTTP_SERIAL : HTTP_MUX];
  if (x->mx->kind == HTTP_MUX) {
    x->origin->on_mux++;
    mux_resize(h);
  }
  if (curl_multi_add_handle(x->mx->m, x->easy) != CURLM_OK) {
    if (x->mx->kind == HTTP_MUX) x->origin->on_mux--;
    return AG_ERR_IO;
  }
  x->state = XFER_ADDED;
  return AG_OK;
}

/* Reports the end of every finished transfer. Runs outside curl callbacks, so a sink's on_done may
 * start or cancel transfers; removing a handle also drops its pending message, so the loop never
 * sees a transfer that on_done cancelled. */
static void http_drain(http_multi *mx) {
  CURLMsg *msg;
  int left;
  while ((msg = curl_multi_info_read(mx->m, &left))) {
    if (msg->msg != CURLMSG_DONE) continue;
    CURL *easy = msg->easy_handle;
    CURLcode res = msg->data.result;
    net_http_xfer *x = NULL;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
    if (!x || !x->sink) continue; /* cancelled: the loop removes it */
    long status = 0, proxy_code = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(easy, CURLINFO_HTTP_CONNECTCODE, &proxy_code);
    const net_http_sink *sink = x->sink;
    void *ud = x->ud;
    char err[CURL_ERROR_SIZE];
    snprintf(err, sizeof err, "%s", x->errbuf[0] ? x->errbuf : curl_easy_strerror(res));
    xfer_free(x); /* first: the key in its headers is wiped now, and on_done may start the next try */
    sink->on_done(ud, res, status, proxy_code, err);
  }
}

static void http_act(http_multi *mx, curl_socket_t fd, int action) {
  int running = 0;
  mx->h->depth++;
  curl_multi_socket_action(mx->m, fd, action, &running);
  mx->h->depth--;
  http_drain(mx);
}

static void on_sock_event(evutil_socket_t fd, short what, void *arg) {
  int action = ((what & EV_READ) ? CURL_CSELECT_IN : 0) | ((what & EV_WRITE) ? CURL_CSELECT_OUT : 0);
  http_act(arg, fd, action);
}

static void on_timer_event(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  http_act(arg, CURL_SOCKET_TIMEOUT, 0);
}

static void sock_free(net_http *h, http_sock *s) {
  event_free(s->ev);
  if (s->prev) s->prev->next = s->next;
  else h->socks = s->next;
  if (s->next) s->next->prev = s->prev;
  free(s);
}

/* CURLMOPT_SOCKETFUNCTION: watch fd for what curl wants, or stop watching it. */
static int on_curl_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp) {
  (void)easy;
  http_multi *mx = userp;
  net_http *h = mx->h;
  http_sock *s = socketp;
  if (what == CURL_POLL_REMOVE) {
    if (s) {
      sock_free(h, s);
      curl_multi_assign(mx->m, fd, NULL);
    }
    return 0;
  }
  short kind = EV_PERSIST | ((what & CURL_POLL_IN) ? EV_READ : 0) | ((what & CURL_POLL_OUT) ? EV_WRITE : 0);
  if (!s) {
    s = calloc(1, sizeof *s);
    if (!s) return -1;
    s->mx = mx;
    s->ev = event_new(h->base, fd, kind, on_sock_event, mx);
    if (!s->ev) {
      free(s);
      return -1;
    }
    s->next = h->socks;
    if (h->socks) h->socks->prev = s;
    h->socks = s;
    curl_multi_assign(mx->m, fd, s);
  } else {
    event_del(s->ev);
    event_assign(s->ev, h->base, fd, kind, on_sock_event, mx);
  }
  return event_add(s->ev, NULL) == 0 ? 0 : -1;
}

/* CURLMOPT_TIMERFUNCTION: one timer per multi handle. */
static int on_curl_timer(CURLM *multi, long timeout_ms, void *userp) {
  (void)multi;
  http_multi *mx = userp;
  if (timeout_ms < 0) return evtimer_del(mx->timer) == 0 ? 0 : -1;
  struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  return evtimer_add(mx->timer, &tv) == 0 ? 0 : -1;
}

static size_t on_curl_write(char *p, size_t size, size_t n, void *ud) {
  net_http_xfer *x = ud;
  size_t len = size * n;
  if (!x->sink) return len ? 0 : len;
  return x->sink->on_body(x->ud, p, len) == 0 ? len : 0;
}

static int on_curl_prereq(void *ud, char *ip, char *local_ip, int port, int local_port) {
  (void)ip;
  (void)local_ip;
  (void)port;
  (void)local_port;
  net_http_xfer *x = ud;
  if (x->sink && x->sink->on_sent) x->sink->on_sent(x->ud);
  return CURL_PREREQFUNC_OK;
}

static size_t on_curl_header(char *p, size_t size, size_t n, void *ud) {
  net_http_xfer *x = ud;
  net_http *h = x->http;
  size_t len = size * n;
  if (!x->sink) return len ? 0 : len;
  if (x->mx->kind == HTTP_MUX && !x->origin->serial && len > 7 && memcmp(p, "HTTP/1.", 7) == 0) {
    x->origin->serial = 1; /* no HTTP/2 here: its calls not yet sent get connections of their own */
    h->moves = 1;
    event_active(h->later, EV_TIMEOUT, 0);
  }
  return x->sink->on_header(x->ud, p, len) == 0 ? len : 0;
}

/* Moves the transfers of origins found serial that have sent nothing yet to the serial multi. */
static void move_serial(net_http *h) {
  h->moves = 0;
  for (net_http_xfer *x = h->all; x; x = x->next) {
    curl_off_t sent = 0;
    if (x->state != XFER_ADDED || x->mx->kind != HTTP_MUX || !x->origin->serial || !x->sink) continue;
    if (curl_easy_getinfo(x->easy, CURLINFO_PRETRANSFER_TIME_T, &sent) != CURLE_OK || sent > 0) continue;
    xfer_detach(x);
    if (xfer_add(x) == AG_OK) continue;
    x->queue = NULL; /* tried once more, and reported, with the pending ones */
    if (h->pending_tail) h->pending_tail->queue = x;
    else h->pending = x;
    h->pending_tail = x;
  }
}

/* The loop's half of work asked for inside curl callbacks: removals first, then additions. */
static void on_later(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  net_http *h = arg;
  if (h->moves) move_serial(h);
  net_http_xfer *q = h->dead;
  h->dead = NULL;
  while (q) {
    net_http_xfer *next = q->queue;
    xfer_free(q);
    q = next;
  }
  q = h->pending;
  h->pending = h->pending_tail = NULL;
  while (q) {
    net_http_xfer *next = q->queue;
    if (!q->sink) {
      xfer_free(q); /* cancelled before it was added */
    } else if (xfer_add(q) != AG_OK) {
      const net_http_sink *sink = q->sink;
      void *ud = q->ud;
      xfer_free(q);
      sink->on_done(ud, CURLE_FAILED_INIT, 0, 0, "could not add the transfer");
    }
    q = next;
  }
}

static int multi_init(net_http *h, int kind) {
  http_multi *mx = &h->mx[kind];
  mx->h = h;
  mx->kind = kind;
  mx->m = curl_multi_init();
  mx->timer = evtimer_new(h->base, on_timer_event, mx);
  if (!mx->m || !mx->timer) return AG_ERR_NOMEM;
  curl_multi_setopt(mx->m, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
  curl_multi_setopt(mx->m, CURLMOPT_SOCKETDATA, mx);
  curl_multi_setopt(mx->m, CURLMOPT_TIMERFUNCTION, on_curl_timer);
  curl_multi_setopt(mx->m, CURLMOPT_TIMERDATA, mx);
  curl_multi_setopt(mx->m, CURLMOPT_MAX_HOST_CONNECTIONS, HTTP_MAX_HOST_CONNECTIONS);
  curl_multi_setopt(mx->m, CURLMOPT_MAX_TOTAL_CONNECTIONS, HTTP_MAX_TOTAL_CONNECTIONS);
  curl_multi_setopt(mx->m, CURLMOPT_MAXCONNECTS, HTTP_MAX_IDLE_CONNECTIONS);
  curl_multi_setopt(mx->m, CURLMOPT_PIPELINING, (long)(kind == HTTP_MUX ? CURLPIPE_MULTIPLEX : CURLPIPE_NOTHING));
  return AG_OK;
}

/* The client's transport, created on first use. */
static int http_get(net_client *c, net_http **out) {
  static int curl_ready;
  if (c->http) {
    *out = c->http;
    return AG_OK;
  }
  if (!curl_ready) {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return AG_ERR_IO;
    curl_ready = 1;
  }
  net_http *h = calloc(1, sizeof *h);
  if (!h) return AG_ERR_NOMEM;
  h->base = c->base;
  h->share = curl_share_init();
  h->later = event_new(c->base, -1, 0, on_later, h);
  if (!h->share || !h->later || multi_init(h, HTTP_MUX) || multi_init(h, HTTP_SERIAL)) {
    net_http_free(h);
    return AG_ERR_NOMEM;
  }
  /* One thread: no lock functions. Sessions make a second connection to a host a resumed (cheap)
   * handshake; connections themselves are shared through each multi handle's cache. */
  curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  c->http = h;
  *out = h;
  return AG_OK;
}

int net_http_start(net_client *c, CURL *easy, const char *url, struct curl_slist *headers,
                   const net_http_sink *sink, void *ud, net_http_xfer **out) {
  net_http *h = NULL;
  int rc = http_get(c, &h);
  net_http_xfer *x = rc ? NULL : calloc(1, sizeof *x);
  http_origin *o = x ? origin_for(h, url) : NULL;
  if (!o) {
    free(x);
    curl_easy_cleanup(easy);
    wipe_headers(headers);
    curl_slist_free_all(headers);
    return rc ? rc : AG_ERR_NOMEM;
  }
  x->http = h;
  x->easy = easy;
  x->headers = headers;
  x->sink = sink;
  x->ud = ud;
  x->origin = o;
  x->mx = &h->mx[o->serial ? HTTP_SERIAL : HTTP_MUX];
  x->state = XFER_PENDING;
  x->next = h->all;
  if (h->all) h->all->prev = x;
  h->all = x;
  h->live++;
  curl_easy_setopt(easy, CURLOPT_URL, url);
  curl_easy_setopt(easy, CURLOPT_PRIVATE, (char *)x);
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_curl_write);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, x);
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_curl_header);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, x);
  curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, on_curl_prereq);
  curl_easy_setopt(easy, CURLOPT_PREREQDATA, x);
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, x->errbuf);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_SHARE, h->share);
  /* A proxy's "HTTP/1.1 200 Connection established" is not the server's answer. */
  curl_easy_setopt(easy, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
  if (h->depth > 0) {
    /* libcurl refuses multi calls from its own callbacks. */
    if (h->pending_tail) h->pending_tail->queue = x;
    else h->pending = x;
    h->pending_tail = x;
    event_active(h->later, EV_TIMEOUT, 0);
  } else if (xfer_add(x) != AG_OK) {
    xfer_free(x);
    return AG_ERR_IO;
  }
  *out = x;
  return AG_OK;
}

void net_http_cancel(net_http_xfer *x) {
  if (!x || !x->sink) return;
  net_http *h = x->http;
  x->sink = NULL;
  if (x->state == XFER_PENDING) return; /* still queued: the loop frees it instead of adding it */
  if (h->depth > 0) {
    x->state = XFER_DEAD;
    x->queue = h->dead;
    h->dead = x;
    event_active(h->later, EV_TIMEOUT, 0);
    return;
  }
  xfer_free(x);
}

size_t net_http_live(const net_client *c) { return c->http ? c->http->live : 0; }

void net_http_free(net_http *h) {
  if (!h) return;
  while (h->all) xfer_free(h->all);
  for (int k = 0; k < 2; k++) {
    if (h->mx[k].m) curl_multi_cleanup(h->mx[k].m);
    if (h->mx[k].timer) event_free(h->mx[k].timer);
  }
  if (h->share) curl_share_cleanup(h->share); /* after the easy handles that used it */
  while (h->socks) sock_free(h, h->socks);
  if (h->later) event_free(h->later);
  while (h->origins) {
    http_origin *next = h->origins->next;
    free(h->origins);
    h->origins = next;
  }
  free(h);
}
