/* libagora in a foreign event loop: one epoll descriptor that is readable when any descriptor the
 * world's loop watches is ready, and the time until its next timer. libevent exposes neither its own
 * epoll descriptor nor its next timeout, so both are rebuilt from its public list of events
 * (event_base_foreach_event) after every run of the loop. */
#include "lib/agora_int.h"

#include <errno.h>
#include <event2/event.h>
#include <sys/epoll.h>
#include <unistd.h>

/* What one pass over the loop's events found. */
typedef struct loop_scan {
  agora_world *w;
  long timeout_ms; /* -1: none yet */
  struct timeval now;
} loop_scan;

static short watched(const struct event *ev) {
  short what = event_get_events(ev);
  return (what & EV_SIGNAL) ? 0 : what & (EV_READ | EV_WRITE);
}

/* Adds or updates each watched descriptor in the epoll set (EEXIST: already there, then modified). */
static int add_fd(const struct event_base *base, const struct event *ev, void *arg) {
  (void)base;
  loop_scan *s = arg;
  short what = watched(ev);
  evutil_socket_t fd = event_get_fd(ev);
  if (!what || fd < 0 || !event_pending(ev, EV_READ | EV_WRITE, NULL)) return 0;
  struct epoll_event ee = {.events = (what & EV_READ ? EPOLLIN : 0) | (what & EV_WRITE ? EPOLLOUT : 0),
                           .data.fd = fd};
  if (epoll_ctl(s->w->inner, EPOLL_CTL_ADD, fd, &ee) && errno == EEXIST)
    epoll_ctl(s->w->inner, EPOLL_CTL_MOD, fd, &ee);
  return 0;
}

/* A fresh inner set each time (epoll drops a closed descriptor by itself only when no other copy of
 * it is open), inside the outer set whose number the caller keeps watching. */
void agora__loop_sync(agora_world *w) {
  if (w->epfd < 0) return;
  if (w->inner >= 0) close(w->inner); /* leaves the outer set with it */
  if ((w->inner = epoll_create1(EPOLL_CLOEXEC)) < 0) return;
  struct epoll_event ee = {.events = EPOLLIN, .data.fd = w->inner};
  epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->inner, &ee);
  loop_scan s = {.w = w, .timeout_ms = -1};
  event_base_foreach_event(rt_base(w->rt), add_fd, &s);
}

void agora__loop_free(agora_world *w) {
  if (w->inner >= 0) close(w->inner);
  if (w->epfd >= 0) close(w->epfd);
  w->epfd = w->inner = -1;
}

int agora_fd(agora_world *w) {
  if (w->epfd < 0 && (w->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
    return agora__fail(AG_ERR_IO, &(ag_errmsg){"agora_fd: epoll_create1 failed"});
  agora__loop_sync(w);
  return w->epfd >= 0 ? w->epfd : agora__fail(AG_ERR_IO, &(ag_errmsg){"agora_fd: epoll_create1 failed"});
}

static int earliest(const struct event_base *base, const struct event *ev, void *arg) {
  (void)base;
  loop_scan *s = arg;
  struct timeval tv;
  if (!event_pending(ev, EV_TIMEOUT, &tv)) return 0;
  long ms = (long)(tv.tv_sec - s->now.tv_sec) * 1000 + (long)(tv.tv_usec - s->now.tv_usec + 999) / 1000;
  if (ms < 0) ms = 0;
  if (s->timeout_ms < 0 || ms < s->timeout_ms) s->timeout_ms = ms;
  return 0;
}

long agora_next_timeout(agora_world *w) {
  struct event_base *base = rt_base(w->rt);
  if (event_base_get_num_events(base, EVENT_BASE_COUNT_ACTIVE)) return 0;
  if (!world_is_quiet(w->w) && !world_thinking(w->w)) return 0; /* messages queued: deliver them */
  loop_scan s = {.w = w, .timeout_ms = -1};
  /* event_pending reports the expiry on the loop's clock, the cached time of its last pass */
  event_base_gettimeofday_cached(base, &s.now);
  event_base_foreach_event(base, earliest, &s);
  return s.timeout_ms;
}
