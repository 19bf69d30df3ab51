/* The hand-over from other threads to the loop (see relay.h). */
#include "cluster/relay.h"

#include "common/error.h"
#include "common/ring.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

struct relay {
  pthread_mutex_t mu;
  ag_ring q; /* of relay_item */
  int fds[2];
  int woken;  /* a byte is in the pipe */
  int closed; /* relay_close: items are dropped as they are posted */
  struct event *ev;
  relay_fn fn, drop;
  void *ud;
};

static void relay_run(evutil_socket_t fd, short what, void *arg) {
  (void)what;
  relay *r = arg;
  char buf[64];
  while (read(fd, buf, sizeof buf) > 0) {}
  pthread_mutex_lock(&r->mu);
  r->woken = 0;
  pthread_mutex_unlock(&r->mu);
  /* One item at a time, unlocked while it runs: fn may post (never re-entered: the pipe wakes us later). */
  for (;;) {
    relay_item it;
    pthread_mutex_lock(&r->mu);
    int got = ag_ring_pop(&r->q, &it);
    pthread_mutex_unlock(&r->mu);
    if (!got) break;
    r->fn(r->ud, &it);
  }
}

int relay_new(struct event_base *base, relay_fn fn, relay_fn drop, void *ud, relay **out) {
  relay *r = calloc(1, sizeof *r);
  if (!r) return AG_ERR_NOMEM;
  r->fn = fn, r->drop = drop, r->ud = ud;
  pthread_mutex_init(&r->mu, NULL);
  ag_ring_init(&r->q, sizeof(relay_item), 256);
  if (pipe2(r->fds, O_NONBLOCK | O_CLOEXEC)) {
    r->fds[0] = r->fds[1] = -1;
    relay_free(r);
    return AG_ERR_IO;
  }
  if (!(r->ev = event_new(base, r->fds[0], EV_READ | EV_PERSIST, relay_run, r)) || event_add(r->ev, NULL)) {
    relay_free(r);
    return AG_ERR_NOMEM;
  }
  *out = r;
  return AG_OK;
}

void relay_close(relay *r) {
  if (!r) return;
  if (r->ev) event_free(r->ev);
  r->ev = NULL;
  pthread_mutex_lock(&r->mu);
  r->closed = 1;
  pthread_mutex_unlock(&r->mu);
  /* Nothing is pushed any more: the queue is the loop's alone. */
  relay_item it;
  while (ag_ring_pop(&r->q, &it)) r->drop(r->ud, &it);
}

void relay_free(relay *r) {
  if (!r) return;
  relay_close(r);
  ag_ring_free(&r->q);
  if (r->fds[0] >= 0) close(r->fds[0]), close(r->fds[1]);
  pthread_mutex_destroy(&r->mu);
  free(r);
}

size_t relay_pending(relay *r) {
  pthread_mutex_lock(&r->mu);
  size_t n = ag_ring_len(&r->q);
  pthread_mutex_unlock(&r->mu);
  return n;
}

int relay_post(relay *r, const relay_item *it) {
  pthread_mutex_lock(&r->mu);
  int rc = r->closed ? AG_ERR_STATE : ag_ring_push(&r->q, it), wake = !rc && !r->woken;
  if (wake) r->woken = 1;
  pthread_mutex_unlock(&r->mu);
  if (rc) {
    relay_item copy = *it;
    r->drop(r->ud, &copy);
    return rc;
  }
  if (wake) {
    ssize_t n;
    do n = write(r->fds[1], "x", 1);
    while (n < 0 && errno == EINTR);
  }
  return AG_OK;
}
