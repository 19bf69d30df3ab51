/* Deferred-call FIFO on one libevent event (see defer.h), kept in a ring (common/ring.h) so pushes and
 * pops are O(1) and allocation-free once warm. A ticket is the call's number in the order of pushes;
 * with the number of calls popped so far it gives the call's place in the ring, so a cancel is O(1). */
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
  ag_ring ring;    /* of defer_item */
  uint64_t popped; /* calls that left the ring: the ticket of the head is popped + 1 */
  size_t live;     /* queued calls not cancelled */
  int scheduled;
  int cut; /* its last round stopped at AG_DEFER_BATCH with calls left (counted in cut_queues) */
};

/* Queues of this thread whose round stopped at its batch (ag_defer_batching): each loop is one thread's. */
static _Thread_local size_t cut_queues;

static void set_cut(ag_defer *d, int cut) {
  if (d->cut == cut) return;
  d->cut = cut;
  if (cut) cut_queues++;
  else cut_queues--;
}

static void defer_run(evutil_socket_t fd, short what, void *ctx) {
  (void)fd;
  (void)what;
  ag_defer *d = ctx;
  d->scheduled = 0;
  /* Only the calls queued before this round run now, and at most a batch of them; later ones get a
   * round of their own. */
  size_t n = ag_ring_len(&d->ring);
  int capped = n > AG_DEFER_BATCH;
  if (capped) n = AG_DEFER_BATCH;
  defer_item it;
  while (n-- > 0 && ag_ring_pop(&d->ring, &it)) {
    d->popped++;
    if (!it.fn) continue;
    d->live--;
    it.fn(it.arg);
  }
  set_cut(d, capped && d->live > 0);
  if (ag_ring_len(&d->ring) > 0 && !d->scheduled) {
    d->scheduled = 1;
    event_active(d->ev, EV_TIMEOUT, 0);
  }
}

int ag_defer_batching(void) { return cut_queues > 0; }

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
  set_cut(d, 0);
  event_free(d->ev);
  ag_ring_free(&d->ring);
  free(d);
}

int ag_defer_push(ag_defer *d, ag_defer_fn fn, void *arg, ag_defer_ticket *ticket) {
  int rc = ag_ring_push(&d->ring, &(defer_item){.fn = fn, .arg = arg});
  if (rc) return rc;
  d->live++;
  if (ticket) *ticket = d->popped + ag_ring_len(&d->ring);
  if (!d->scheduled) {
    d->scheduled = 1;
    event_active(d->ev, EV_TIMEOUT, 0);
  }
  return AG_OK;
}

int ag_defer_cancel(ag_defer *d, ag_defer_ticket ticket) {
  /* A cancelled call stays in place as a no-op so the order of the others is untouched. */
  if (ticket <= d->popped) return 0; /* ran (or was dropped), or no ticket at all */
  defer_item *it = ag_ring_at(&d->ring, (size_t)(ticket - d->popped - 1));
  if (!it || !it->fn) return 0;
  it->fn = NULL;
  d->live--;
  return 1;
}

size_t ag_defer_pending(const ag_defer *d) { return d->live; }
