/* agora serve's admission of connections: how many are open (a cap, past which a request gets 503),
 * how long a connection may take to send its first request (silent and trickling clients are cut), and
 * what happens when the process runs out of descriptors (accepting pauses instead of spinning, and says
 * so once a second). evhttp 2.1 has no connection cap nor a hook for each new connection, so each is
 * seen through the bufferevent evhttp asks us to make for it (evhttp_set_bevcb) and adopted later in the
 * same loop turn, once evhttp has made it its connection. */
#include "serve/serve_int.h"

#include <errno.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define CONN_SWEEP_MS 250 /* how often connections past their request deadline are looked for */

typedef struct conn_rec {
  struct evhttp_connection *evcon;
  double born_ms;
  int requested; /* its first request arrived whole */
  int over;      /* accepted past the cap: its request gets 503 */
} conn_rec;

struct serve_conns {
  serve *s;
  conn_rec *recs;
  size_t n, cap;
  size_t admitted; /* records not over the cap */
  struct bufferevent **born; /* made for connections evhttp has not finished setting up */
  size_t n_born, cap_born;
  struct event *adopt, *sweep, *resume;
  int paused;
  double last_log_ms;
  uint64_t accept_errors; /* since the last log line */
};

/* The listener's error callback gets evhttp's argument (the listener has one for both callbacks): it
 * finds the server's connections here. One server per process. */
static serve_conns *the_conns;

static double mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static conn_rec *rec_find(serve_conns *c, const struct evhttp_connection *evcon) {
  for (size_t i = 0; i < c->n; i++)
    if (c->recs[i].evcon == evcon) return &c->recs[i];
  return NULL;
}

void serve_conn_closed(struct evhttp_connection *evcon, void *arg) {
  serve_conns *c = ((serve *)arg)->conns;
  conn_rec *r = c ? rec_find(c, evcon) : NULL;
  if (!r) return;
  if (!r->over) c->admitted--;
  *r = c->recs[--c->n];
}

/* Adopts the connections made since the last turn: counted, and watched for their close. */
static void on_adopt(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  serve_conns *c = arg;
  for (size_t i = 0; i < c->n_born; i++) {
    struct bufferevent *bev = c->born[i];
    void *evcon = NULL;
    bufferevent_getcb(bev, NULL, NULL, NULL, &evcon);
    /* NULL: evhttp gave the connection up already (it freed the bufferevent, which our reference keeps). */
    if (evcon && evhttp_connection_get_bufferevent(evcon) == bev && c->n < c->cap) {
      int over = c->admitted >= c->s->max_conns;
      c->recs[c->n++] = (conn_rec){.evcon = evcon, .born_ms = mono_ms(), .over = over};
      c->admitted += !over;
      evhttp_connection_set_closecb(evcon, serve_conn_closed, c->s);
    }
    bufferevent_decref(bev);
  }
  c->n_born = 0;
}

/* evhttp's bufferevent for each connection accepted: made here so that the connection is seen. */
static struct bufferevent *on_new_bev(struct event_base *base, void *arg) {
  serve_conns *c = arg;
  struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
  if (!bev) return NULL;
  if (c->n_born == c->cap_born) {
    size_t ncap = c->cap_born ? c->cap_born * 2 : 64;
    struct bufferevent **p = realloc(c->born, ncap * sizeof *p);
    if (!p) return bev; /* not counted: the sweep and the timeouts still bound it */
    c->born = p, c->cap_born = ncap;
  }
  bufferevent_incref(bev);
  c->born[c->n_born++] = bev;
  event_active(c->adopt, EV_TIMEOUT, 0);
  return bev;
}

/* Cuts the connections whose first request has not arrived whole within the request timeout (1 s for
 * those past the cap). */
static void on_sweep(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  serve_conns *c = arg;
  double now = mono_ms();
  for (size_t i = 0; i < c->n;) {
    conn_rec *r = &c->recs[i];
    /* One past the cap has a second to ask (and hear 503): its descriptor is wanted. */
    double limit = (double)c->s->request_timeout_ms;
    if (r->over && limit > 1000) limit = 1000;
    if (r->requested || now - r->born_ms < limit) {
      i++;
      continue;
    }
    struct evhttp_connection *evcon = r->evcon;
    evhttp_connection_free(evcon); /* its closecb removes the record: i then names the next */
    if (i < c->n && c->recs[i].evcon == evcon) serve_conn_closed(evcon, c->s); /* (it did not run) */
  }
}

static void log_accept_errors(serve_conns *c, int err) {
  c->accept_errors++;
  double now = mono_ms();
  if (now - c->last_log_ms < 1000) return;
  fprintf(stderr, "agora: serve: cannot accept connections (%s): %zu open; %llu refusal(s) this second, "
                  "accepting again as descriptors are freed\n",
          strerror(err), c->n, (unsigned long long)c->accept_errors);
  c->last_log_ms = now;
  c->accept_errors = 0;
}

static void on_resume(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  serve_conns *c = arg;
  struct evconnlistener *l = c->s->bound ? evhttp_bound_socket_get_listener(c->s->bound) : NULL;
  c->paused = 0;
  if (l && !c->s->stopping) evconnlistener_enable(l);
}

/* accept() failed with something other than "try again": out of descriptors, most likely. Without
 * this, libevent logs it and retries at once, forever (a busy loop, megabytes of log a second). */
static void on_accept_error(struct evconnlistener *l, void *arg) {
  (void)arg; /* evhttp's, shared with its accept callback */
  serve_conns *c = the_conns;
  int err = EVUTIL_SOCKET_ERROR();
  log_accept_errors(c, err);
  if (c->paused) return;
  evconnlistener_disable(l);
  c->paused = 1;
  struct timeval again = {0, 100 * 1000};
  event_add(c->resume, &again);
}

int serve_conns_start(serve *s, ag_errmsg *em) {
  serve_conns *c = calloc(1, sizeof *c);
  if (!c) return ag_fail(em, AG_ERR_NOMEM, "serve: out of memory");
  s->conns = c;
  c->s = s;
  /* Over-cap connections are recorded too (they get their 503): room for all the descriptors. */
  struct rlimit rl;
  size_t fds = !getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY ? (size_t)rl.rlim_cur : 65536;
  c->cap = fds + 16;
  struct timeval sweep = {0, CONN_SWEEP_MS * 1000};
  if (!(c->recs = calloc(c->cap, sizeof *c->recs)) || !(c->adopt = event_new(s->base, -1, 0, on_adopt, c)) ||
      !(c->sweep = event_new(s->base, -1, EV_PERSIST, on_sweep, c)) || event_add(c->sweep, &sweep) ||
      !(c->resume = event_new(s->base, -1, 0, on_resume, c)))
    return ag_fail(em, AG_ERR_NOMEM, "serve: out of memory");
  evhttp_set_bevcb(s->http, on_new_bev, c);
  return AG_OK;
}

void serve_conns_listen(serve *s) {
  struct evconnlistener *l = s->bound ? evhttp_bound_socket_get_listener(s->bound) : NULL;
  the_conns = s->conns;
  if (l && s->conns) evconnlistener_set_error_cb(l, on_accept_error);
}

int serve_conn_request(serve *s, struct evhttp_request *req) {
  serve_conns *c = s->conns;
  conn_rec *r = c ? rec_find(c, evhttp_request_get_connection(req)) : NULL;
  if (!r) return 0;
  r->requested = 1;
  return r->over;
}

size_t serve_conns_open(const serve *s) { return s->conns ? s->conns->n : 0; }

void serve_conns_free(serve *s) {
  serve_conns *c = s->conns;
  if (!c) return;
  on_adopt(-1, 0, c); /* drops the references still held */
  if (c->adopt) event_free(c->adopt);
  if (c->sweep) event_free(c->sweep);
  if (c->resume) event_free(c->resume);
  free(c->born);
  free(c->recs);
  free(c);
  s->conns = NULL;
  the_conns = NULL;
}
