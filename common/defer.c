/* Deferred-call FIFO on one libevent event (see defer.h). A ring buffer keeps pushes and pops O(1)
 * and allocation-free once warm. */
#include "common/defer.h"
#include "common/error.h"

#include <event2/event.h>
#include <stdlib.h>

typedef struct defer_item {
  ag_defer_fn fn;
  void *arg;
} defer_item;

struct ag_defer {
  struct event *ev;
  defer_item *ring;
  size_t cap, head, len;
  int scheduled;
};

static void defer_run(evutil_socket_t fd, short what, void *ctx) {
  (void)fd;
  (void)what;
  ag_defer *d = ctx;
  d->scheduled = 0;
  /* Only the calls queued before this round run now; later ones get a round of their own. */
  size_t n = d->len;
  while (n-- > 0 && d->len > 0) {
    defer_item it = d->ring[d->head];
    d->head = (d->head + 1) % d->cap;
    d->len--;
    if (it.fn) it.fn(it.arg);
  }
  if (d->len > 0 && !d->scheduled) {
    d->scheduled = 1;
    event_active(d->ev, EV_TIMEOUT, 0);
  }
}

int ag_defer_new(struct event_base *base, ag_defer **out) {
  ag_defer *d = calloc(1, sizeof *d);
  if (!d) return AG_ERR_NOMEM;
  d->ev = event_new(base, -1, 0, defer_run, d);
  if (!d->ev) {
    free(d);
    return AG_ERR_NOMEM;
  }
  *out = d;
  return AG_OK;
}

void ag_defer_free(ag_defer *d) {
  if (!d) return;
  event_free(d->ev);
  free(d->ring);
  free(d);
}

int ag_defer_push(ag_defer *d, ag_defer_fn fn, void *arg) {
  if (d->len == d->cap) {
    size_t ncap = d->cap ? d->cap * 2 : 64;
    defer_item *r = malloc(ncap * sizeof *r);
    if (!r) return AG_ERR_NOMEM;
    for (size_t i = 0; i < d->len; i++) r[i] = d->ring[(d->head + i) % d->cap];
    free(d->ring);
    d->ring = r;
    d->cap = ncap;
    d->head = 0;
  }
  d->ring[(d->head + d->len) % d->cap] = (defer_item){fn, arg};
  d->len++;
  if (!d->scheduled) {
    d->scheduled = 1;
    event_active(d->ev, EV_TIMEOUT, 0);
  }
  return AG_OK;
}

size_t ag_defer_cancel(ag_defer *d, void *arg) {
  size_t n = 0;
  /* Cancelled entries stay in place as no-ops so the order of the others is untouched. */
  for (size_t i = 0; i < d->len; i++) {
    defer_item *it = &d->ring[(d->head + i) % d->cap];
    if (it->fn && it->arg == arg) {
      it->fn = NULL;
      n++;
    }
  }
  return n;
}

size_t ag_defer_pending(const ag_defer *d) {
  size_t n = 0;
  for (size_t i = 0; i < d->len; i++)
    if (d->ring[(d->head + i) % d->cap].fn) n++;
  return n;
}
