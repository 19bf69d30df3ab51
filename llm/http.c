/* libcurl's multi interface on a libevent loop (see http.h): curl tells us which sockets to watch
 * and when to wake it; we call curl_multi_socket_action on those events and read finished transfers
 * with curl_multi_info_read. Nothing blocks, nothing sleeps, no threads. Handles are only added and
 * removed outside libcurl's callbacks: when asked from inside one, the work is queued for the loop. */
#include "llm/http.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Generous: a world may run hundreds of agents against one local server. */
#define HTTP_MAX_HOST_CONNECTIONS 1024L
#define HTTP_MAX_TOTAL_CONNECTIONS 4096L
/* Idle connections kept for the next turn (HTTP/1.1 keep-alive): one per agent of a large world.
 * libcurl's default keeps 4 per transfer in flight, which after a turn is none. */
#define HTTP_MAX_IDLE_CONNECTIONS 1024L

typedef enum xfer_state {
  XFER_PENDING, /* waiting for the loop to add it (started from inside a curl callback) */
  XFER_ADDED,   /* in the multi handle */
  XFER_DEAD     /* cancelled from inside a curl callback: waiting for the loop to remove it */
} xfer_state;

struct llm_http_xfer {
  llm_http *http;
  CURL *easy;
  struct curl_slist *headers;
  const llm_http_sink *sink; /* NULL once cancelled or done */
  void *ud;
  xfer_state state;
  llm_http_xfer *prev, *next; /* all transfers, for teardown */
  llm_http_xfer *queue;       /* next in the pending or dead queue */
  char errbuf[CURL_ERROR_SIZE];
};

typedef struct http_sock {
  struct event *ev;
  struct http_sock *prev, *next;
} http_sock;

struct llm_http {
  struct event_base *base;
  CURLM *multi;
  CURLSH *share; /* TLS sessions and DNS answers, shared by every transfer (each has its own easy) */
  struct event *timer; /* curl's timeout */
  struct event *later; /* runs the queues below from the loop */
  int depth;           /* > 0 while inside curl_multi_socket_action: curl callbacks may be running */
  llm_http_xfer *all;
  size_t live;
  llm_http_xfer *pending, *pending_tail;
  llm_http_xfer *dead;
  http_sock *socks;
};

static void wipe_headers(struct curl_slist *l) {
  for (; l; l = l->next) explicit_bzero(l->data, strlen(l->data));
}

static void xfer_free(llm_http_xfer *x) {
  llm_http *h = x->http;
  if (x->state == XFER_ADDED) curl_multi_remove_handle(h->multi, x->easy);
  curl_easy_cleanup(x->easy);
  wipe_headers(x->headers);
  curl_slist_free_all(x->headers);
  if (x->prev) x->prev->next = x->next;
  else h->all = x->next;
  if (x->next) x->next->prev = x->prev;
  h->live--;
  free(x);
}

/* Reports the end of every finished transfer. Runs outside curl callbacks, so a sink's on_done may
 * start or cancel transfers; removing a handle also drops its pending message, so the loop never
 * sees a transfer that on_done cancelled. */
static void http_drain(llm_http *h) {
  CURLMsg *msg;
  int left;
  while ((msg = curl_multi_info_read(h->multi, &left))) {
    if (msg->msg != CURLMSG_DONE) continue;
    CURL *easy = msg->easy_handle;
    CURLcode res = msg->data.result;
    llm_http_xfer *x = NULL;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
    if (!x || !x->sink) continue; /* cancelled: the loop removes it */
    long status = 0, proxy_code = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(easy, CURLINFO_HTTP_CONNECTCODE, &proxy_code);
    const llm_http_sink *sink = x->sink;
    void *ud = x->ud;
    char err[CURL_ERROR_SIZE];
    snprintf(err, sizeof err, "%s", x->errbuf[0] ? x->errbuf : curl_easy_strerror(res));
    xfer_free(x); /* first: the key in its headers is wiped now, and on_done may start the next try */
    sink->on_done(ud, res, status, proxy_code, err);
  }
}

static void http_act(llm_http *h, curl_socket_t fd, int action) {
  int running = 0;
  h->depth++;
  curl_multi_socket_action(h->multi, fd, action, &running);
  h->depth--;
  http_drain(h);
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

static void sock_free(llm_http *h, http_sock *s) {
  event_free(s->ev);
  if (s->prev) s->prev->next = s->next;
  else h->socks = s->next;
  if (s->next) s->next->prev = s->prev;
  free(s);
}

/* CURLMOPT_SOCKETFUNCTION: watch fd for what curl wants, or stop watching it. */
static int on_curl_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp) {
  (void)easy;
  llm_http *h = userp;
  http_sock *s = socketp;
  if (what == CURL_POLL_REMOVE) {
    if (s) {
      sock_free(h, s);
      curl_multi_assign(h->multi, fd, NULL);
    }
    return 0;
  }
  short kind = EV_PERSIST | ((what & CURL_POLL_IN) ? EV_READ : 0) | ((what & CURL_POLL_OUT) ? EV_WRITE : 0);
  if (!s) {
    s = calloc(1, sizeof *s);
    if (!s) return -1;
    s->ev = event_new(h->base, fd, kind, on_sock_event, h);
    if (!s->ev) {
      free(s);
      return -1;
    }
    s->next = h->socks;
    if (h->socks) h->socks->prev = s;
    h->socks = s;
    curl_multi_assign(h->multi, fd, s);
  } else {
    event_del(s->ev);
    event_assign(s->ev, h->base, fd, kind, on_sock_event, h);
  }
  return event_add(s->ev, NULL) == 0 ? 0 : -1;
}

/* CURLMOPT_TIMERFUNCTION: one timer for the whole multi handle. */
static int on_curl_timer(CURLM *multi, long timeout_ms, void *userp) {
  (void)multi;
  llm_http *h = userp;
  if (timeout_ms < 0) return evtimer_del(h->timer) == 0 ? 0 : -1;
  struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  return evtimer_add(h->timer, &tv) == 0 ? 0 : -1;
}

static size_t on_curl_write(char *p, size_t size, size_t n, void *ud) {
  llm_http_xfer *x = ud;
  size_t len = size * n;
  if (!x->sink) return len ? 0 : len;
  return x->sink->on_body(x->ud, p, len) == 0 ? len : 0;
}

static size_t on_curl_header(char *p, size_t size, size_t n, void *ud) {
  llm_http_xfer *x = ud;
  size_t len = size * n;
  if (!x->sink) return len ? 0 : len;
  return x->sink->on_header(x->ud, p, len) == 0 ? len : 0;
}

static int xfer_add(llm_http_xfer *x) {
  if (curl_multi_add_handle(x->http->multi, x->easy) != CURLM_OK) return AG_ERR_IO;
  x->state = XFER_ADDED;
  return AG_OK;
}

/* The loop's half of work asked for inside curl callbacks: removals first, then additions. */
static void on_later(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  llm_http *h = arg;
  llm_http_xfer *q = h->dead;
  h->dead = NULL;
  while (q) {
    llm_http_xfer *next = q->queue;
    xfer_free(q);
    q = next;
  }
  q = h->pending;
  h->pending = h->pending_tail = NULL;
  while (q) {
    llm_http_xfer *next = q->queue;
    if (!q->sink) {
      xfer_free(q); /* cancelled before it was added */
    } else if (xfer_add(q) != AG_OK) {
      const llm_http_sink *sink = q->sink;
      void *ud = q->ud;
      xfer_free(q);
      sink->on_done(ud, CURLE_FAILED_INIT, 0, 0, "could not add the transfer");
    }
    q = next;
  }
}

int llm_http_get(llm_client *c, llm_http **out) {
  static int curl_ready;
  if (c->http) {
    *out = c->http;
    return AG_OK;
  }
  if (!curl_ready) {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return AG_ERR_IO;
    curl_ready = 1;
  }
  llm_http *h = calloc(1, sizeof *h);
  if (!h) return AG_ERR_NOMEM;
  h->base = c->base;
  h->multi = curl_multi_init();
  h->share = curl_share_init();
  h->timer = evtimer_new(c->base, on_timer_event, h);
  h->later = event_new(c->base, -1, 0, on_later, h);
  if (!h->multi || !h->share || !h->timer || !h->later) {
    llm_http_free(h);
    return AG_ERR_NOMEM;
  }
  curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
  curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
  curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
  curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
  curl_multi_setopt(h->multi, CURLMOPT_MAX_HOST_CONNECTIONS, HTTP_MAX_HOST_CONNECTIONS);
  curl_multi_setopt(h->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, HTTP_MAX_TOTAL_CONNECTIONS);
  curl_multi_setopt(h->multi, CURLMOPT_MAXCONNECTS, HTTP_MAX_IDLE_CONNECTIONS);
  curl_multi_setopt(h->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
  /* One thread: no lock functions. Sessions make a second connection to a host a resumed (cheap)
   * handshake; connections themselves are already shared through the multi handle's cache. */
  curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  c->http = h;
  *out = h;
  return AG_OK;
}

int llm_http_start(llm_http *h, CURL *easy, struct curl_slist *headers, const llm_http_sink *sink,
                   void *ud, llm_http_xfer **out) {
  llm_http_xfer *x = calloc(1, sizeof *x);
  if (!x) {
    curl_easy_cleanup(easy);
    wipe_headers(headers);
    curl_slist_free_all(headers);
    return AG_ERR_NOMEM;
  }
  x->http = h;
  x->easy = easy;
  x->headers = headers;
  x->sink = sink;
  x->ud = ud;
  x->state = XFER_PENDING;
  x->next = h->all;
  if (h->all) h->all->prev = x;
  h->all = x;
  h->live++;
  curl_easy_setopt(easy, CURLOPT_PRIVATE, (char *)x);
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_curl_write);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, x);
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_curl_header);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, x);
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, x->errbuf);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_SHARE, h->share);
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

void llm_http_cancel(llm_http_xfer *x) {
  if (!x || !x->sink) return;
  llm_http *h = x->http;
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

size_t llm_http_live(const llm_http *h) { return h->live; }

void llm_http_free(llm_http *h) {
  if (!h) return;
  while (h->all) xfer_free(h->all);
  if (h->multi) curl_multi_cleanup(h->multi);
  if (h->share) curl_share_cleanup(h->share); /* after the easy handles that used it */
  while (h->socks) sock_free(h, h->socks);
  if (h->timer) event_free(h->timer);
  if (h->later) event_free(h->later);
  free(h);
}
