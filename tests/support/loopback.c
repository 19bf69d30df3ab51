/* The loopback server thread of loopback.h. */
#include "support/loopback.h"

#include <arpa/inet.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void on_stop(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  event_base_loopbreak(((loopback *)arg)->base);
}

static void *loop_main(void *arg) {
  event_base_dispatch(((loopback *)arg)->base);
  return NULL;
}

int loopback_start(loopback *lb, evconnlistener_cb on_accept, void *arg) {
  memset(lb, 0, sizeof *lb);
  /* A client that hangs up mid-reply (a cancelled call, a hostile-peer case) must be a write error on that
   * connection, not SIGPIPE for the whole test process: bufferevents write with writev(). */
  signal(SIGPIPE, SIG_IGN);
  lb->stop_pipe[0] = lb->stop_pipe[1] = -1;
  lb->base = event_base_new();
  struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (!lb->base || pipe(lb->stop_pipe) != 0) return -1;
  lb->lis = evconnlistener_new_bind(lb->base, on_accept, arg, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 4096,
                                    (struct sockaddr *)&sin, sizeof sin);
  if (!lb->lis) return -1;
  socklen_t sl = sizeof sin;
  getsockname(evconnlistener_get_fd(lb->lis), (struct sockaddr *)&sin, &sl);
  lb->port = ntohs(sin.sin_port);
  lb->stop_ev = event_new(lb->base, lb->stop_pipe[0], EV_READ, on_stop, lb);
  if (!lb->stop_ev || event_add(lb->stop_ev, NULL) != 0) return -1;
  if (pthread_create(&lb->thread, NULL, loop_main, lb) != 0) return -1;
  lb->thread_started = 1;
  return 0;
}

void loopback_join(loopback *lb) {
  if (!lb->thread_started) return;
  char b = 1;
  if (write(lb->stop_pipe[1], &b, 1) != 1) perror("loopback_join");
  pthread_join(lb->thread, NULL);
  lb->thread_started = 0;
}

void loopback_free(loopback *lb) {
  if (lb->stop_ev) event_free(lb->stop_ev);
  if (lb->lis) evconnlistener_free(lb->lis);
  if (lb->base) event_base_free(lb->base);
  if (lb->stop_pipe[0] >= 0) close(lb->stop_pipe[0]);
  if (lb->stop_pipe[1] >= 0) close(lb->stop_pipe[1]);
  memset(lb, 0, sizeof *lb);
  lb->stop_pipe[0] = lb->stop_pipe[1] = -1;
}

size_t loopback_count(pthread_mutex_t *mu, const size_t *count) {
  pthread_mutex_lock(mu);
  size_t n = *count;
  pthread_mutex_unlock(mu);
  return n;
}
