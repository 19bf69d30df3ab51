/* Whether a libevent loop is running, without asking it to run (see loop_running.h). */
#include "common/loop_running.h"

#include <event2/event.h>
#include <sys/time.h>

static int same_tv(const struct timeval *a, const struct timeval *b) {
  return a->tv_sec == b->tv_sec && a->tv_usec == b->tv_usec;
}

/* A running loop answers event_base_gettimeofday_cached with the time its current round of callbacks
 * began, which stays put; a stopped one answers with gettimeofday, which moves. So: read it, wait until
 * the real clock reads something else (a microsecond), and read it again. */
int ag_loop_running(struct event_base *base) {
  struct timeval first, real, second;
  if (event_base_gettimeofday_cached(base, &first)) return 0;
  do
    gettimeofday(&real, NULL);
  while (same_tv(&real, &first));
  if (event_base_gettimeofday_cached(base, &second)) return 0;
  return same_tv(&first, &second);
}
