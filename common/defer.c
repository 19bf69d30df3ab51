/* Deferred-call FIFO on one libevent event (see defer.h), kept in a ring (common/ring.h) so pushes and
 * pops are O(1) and allocation-free once warm. */
#include "common/defer.h"
#include "common/error.h"
#include "common/ring.h"

#include <event2/event.h>
#include <stdlib.h>

typedef struct defer_item {
  ag_defer_fn fn;
  void *arg;
} defer_item;

struct ag_defer {
  struct event *ev;
  ag_ring ring; /* of defer_item */
  int scheduled;
};

static void defer_run(evutil_socket_t fd, short what, void *ctx) {
  (void)fd;
  (void)what;
  ag_defer *d = ctx;
  d->scheduled = 0;
  /* Only the calls queued before this round run now; later ones get a round of their own. */
  size_t n = ag_ring_len(&d->ring);
  defer_item it;
  while (n-- > 0 && ag_ring_pop(&d->ring, &it))
    if (it.fn) it.fn(it.arg);
  if (ag_ring_len(&d->ring) > 0 && !d->scheduled) {
    d->scheduled = 1;
    event_active(d->ev, EV_TIMEOUT, 0);
  }
}

int ag_defer_new(struct event_base *base, ag_defer **out) {
  ag_defer *d = calloc(1, sizeof *d);
  if (!d) return AG_ERR_NOMEM;
  ag_ring_init(&d->ring, sizeof(defer_item), 64);
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
  ag_ring_free(&d->ring);
  free(d);
}

int ag_defer_push(ag_defer *d, ag_defer_fn fn, void *arg) {
  int rc = ag_ring_push(&d->ring, &(defer_item){fn, arg});
  if (rc) return rc;
  if (!d->scheduled) {
    d->scheduled = 1;
    event_active(d->ev, EV_TIMEOUT, 0);
  }
  return AG_OK;
}

size_t ag_defer_cancel(ag_defer *d, void *arg) {
  size_t n = 0;
  /* Cancelled entries stay in place as no-ops so the order of the others is untouched. */
  defer_item *it;
  for (size_t i = 0; (it = ag_ring_at(&d->ring, i)); i++) {
    if (it->fn && it->arg == arg) {
      it->fn = NULL;
      n++;
    }
  }
  return n;
}

size_t ag_defer_pending(const ag_defer *d) {
  size_t n = 0;
  const defer_item *it;
  for (size_t i = 0; (it = ag_ring_at(&d->ring, i)); i++)
    if (it->fn) n++;
  return n;
}
