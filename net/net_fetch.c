/* Plain HTTP requests on a network client's curl transport (see net_fetch.h). libcurl hands over headers and
 * body bytes inside its callbacks, where nothing may call curl; they are kept here and handed to the
 * sink from the loop by a per-request event, so the sink may start and cancel requests freely. */
#include "net/net_fetch.h"

#include "common/buf.h"
#include "net/net_http.h"
#include "net/net_int.h"
#include "net/net_opts.h"

#include <ctype.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FETCH_HEAD_MAX (64u << 10) /* one response's header block */

struct net_fetch {
  net_client *client;
  net_http_xfer *xfer; /* NULL once it ended or was cancelled */
  const net_fetch_sink *sink;
  void *ud;
  struct event *deliver; /* hands what libcurl gave to the sink, from the loop */
  ag_buf head;           /* the header block of the latest response (a 1xx one is replaced) */
  ag_buf pending;        /* body bytes not yet handed over */
  size_t body_total, max_body;
  long status;           /* from the latest status line */
  int head_ready, head_sent;
  int too_big;
  int in_cb; /* inside a sink callback */
  int dead;  /* cancelled from inside a callback: freed when it returns */
  int done, done_err, timed_out;
  char errmsg[CURL_ERROR_SIZE];
  net_fetch *prev, *next;
};

static void fetch_free(net_fetch *f) {
  net_client *c = f->client;
  if (f->xfer) net_http_cancel(f->xfer);
  if (f->deliver) event_free(f->deliver);
  ag_buf_free(&f->head);
  ag_buf_free(&f->pending);
  if (f->prev) f->prev->next = f->next;
  else c->fetches = f->next;
  if (f->next) f->next->prev = f->prev;
  c->n_fetches--;
  free(f);
}

/* Hands over, in order, what has arrived: the head, the body so far, the end. Each sink call may
 * cancel the request (dead) or not; nothing of f is touched after a cancel but its free. */
static void fetch_run(net_fetch *f) {
  const net_fetch_sink *sink = f->sink;
  if (f->head_ready && !f->head_sent) {
    f->head_sent = 1;
    f->in_cb = 1;
    sink->on_response(f->ud, f->status, ag_buf_str(&f->head));
    f->in_cb = 0;
    if (f->dead) goto freed;
  }
  if (f->pending.len) {
    ag_buf b = f->pending;
    ag_buf_init(&f->pending, f->max_body);
    f->in_cb = 1;
    sink->on_body(f->ud, b.data, b.len);
    f->in_cb = 0;
    ag_buf_free(&b);
    if (f->dead) goto freed;
  }
  if (f->done) {
    f->in_cb = 1;
    sink->on_done(f->ud, f->done_err, f->status, f->timed_out, f->errmsg);
    goto freed;
  }
  return;
freed:
  fetch_free(f);
}

static void on_deliver(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  fetch_run(arg);
}

/* Inside libcurl from here to on_xfer_done: only buffering. */
static int on_xfer_header(void *ud, const char *line, size_t len) {
  net_fetch *f = ud;
  if (len >= 5 && memcmp(line, "HTTP/", 5) == 0) {
    const char *sp = memchr(line, ' ', len);
    f->status = sp ? strtol(sp + 1, NULL, 10) : 0;
    ag_buf_reset(&f->head);
    return AG_OK;
  }
  ag_buf_append(&f->head, line, len); /* past the cap the rest is dropped, not fatal */
  return AG_OK;
}

static int on_xfer_body(void *ud, const char *data, size_t len) {
  net_fetch *f = ud;
  if (len > f->max_body - f->body_total) {
    f->too_big = 1;
    return 1;
  }
  f->body_total += len;
  f->head_ready = 1;
  if (ag_buf_append(&f->pending, data, len)) return 1;
  event_active(f->deliver, EV_TIMEOUT, 0);
  return 0;
}

/* From the loop; the transfer is already freed. */
static void on_xfer_done(void *ud, CURLcode res, long status, long proxy_code, const char *errmsg) {
  (void)proxy_code;
  net_fetch *f = ud;
  f->xfer = NULL;
  f->done = 1;
  f->status = status;
  f->head_ready = status > 0;
  f->timed_out = res == CURLE_OPERATION_TIMEDOUT;
  f->done_err = res == CURLE_OK ? AG_OK : f->too_big ? AG_ERR_TOO_BIG : AG_ERR_IO;
  snprintf(f->errmsg, sizeof f->errmsg, "%s", res == CURLE_OK ? "" : f->too_big ? "response too large" : errmsg);
  event_del(f->deliver);
  fetch_run(f);
}

static const net_http_sink fetch_http_sink = {on_xfer_header, on_xfer_body, on_xfer_done, NULL};

static CURL *fetch_easy(const net_fetch_request *req) {
  CURL *easy = curl_easy_init();
  if (!easy) return NULL;
  if (strcmp(req->method, "GET") == 0) {
    curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
  } else {
    if (strcmp(req->method, "POST") != 0) curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, req->method);
    if (req->body || strcmp(req->method, "POST") == 0) {
      curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, (long)req->body_len);
      curl_easy_setopt(easy, CURLOPT_COPYPOSTFIELDS, req->body ? req->body : "");
    }
  }
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
  if (req->timeout_ms > 0) curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, req->timeout_ms);
  if (req->connect_timeout_ms > 0) curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, req->connect_timeout_ms);
  curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
  net_opts_setup(easy, req->net, req->url);
  return easy;
}

static struct curl_slist *fetch_headers(const net_fetch_request *req) {
  struct curl_slist *l = curl_slist_append(NULL, "Expect:"); /* no 100-continue round trip */
  for (size_t i = 0; l && i < req->n_headers; i++) {
    struct curl_slist *n = curl_slist_append(l, req->headers[i]);
    if (!n) {
      curl_slist_free_all(l);
      return NULL;
    }
    l = n;
  }
  return l;
}

int net_fetch_start(net_client *c, const net_fetch_request *req, const net_fetch_sink *sink, void *ud,
                    net_fetch **out) {
  int rc = AG_OK;
  net_fetch *f = calloc(1, sizeof *f);
  if (!f) return AG_ERR_NOMEM;
  f->client = c;
  f->sink = sink;
  f->ud = ud;
  f->max_body = req->max_body;
  ag_buf_init(&f->head, FETCH_HEAD_MAX);
  ag_buf_init(&f->pending, req->max_body);
  f->next = c->fetches;
  if (c->fetches) c->fetches->prev = f;
  c->fetches = f;
  c->n_fetches++;
  f->deliver = event_new(c->base, -1, 0, on_deliver, f);
  CURL *easy = f->deliver ? fetch_easy(req) : NULL;
  struct curl_slist *headers = easy ? fetch_headers(req) : NULL;
  if (!headers) {
    if (easy) curl_easy_cleanup(easy);
    fetch_free(f);
    return AG_ERR_NOMEM;
  }
  /* Consumes easy and headers even on failure. */
  rc = net_http_start(c, easy, req->url, headers, &fetch_http_sink, f, &f->xfer);
  if (rc) {
    f->xfer = NULL;
    fetch_free(f);
    return rc;
  }
  if (out) *out = f;
  return AG_OK;
}

void net_fetch_cancel(net_fetch *f) {
  if (!f || f->dead) return;
  if (f->in_cb) {
    f->dead = 1;
    if (f->xfer) net_http_cancel(f->xfer);
    f->xfer = NULL;
    return;
  }
  fetch_free(f);
}

void net_fetch_free_all(net_client *c) {
  while (c->fetches) fetch_free(c->fetches);
}

int net_fetch_header(const char *headers, const char *name, char *out, size_t cap) {
  size_t n = strlen(name);
  if (cap) out[0] = '\0';
  for (const char *p = headers; p && *p;) {
    const char *end = strpbrk(p, "\r\n");
    if (!end) end = p + strlen(p);
    if ((size_t)(end - p) > n && strncasecmp(p, name, n) == 0 && p[n] == ':') {
      const char *v = p + n + 1;
      while (v < end && isspace((unsigned char)*v)) v++;
      const char *e = end;
      while (e > v && isspace((unsigned char)e[-1])) e--;
      size_t len = (size_t)(e - v) < cap ? (size_t)(e - v) : cap ? cap - 1 : 0;
      if (cap) {
        memcpy(out, v, len);
        out[len] = '\0';
      }
      return 1;
    }
    p = end;
    while (*p == '\r' || *p == '\n') p++;
  }
  return 0;
}

size_t net_fetch_live(const net_client *c) { return c->n_fetches; }
