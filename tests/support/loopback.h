/* The thread of a loopback test server: its own event loop, a listener on 127.0.0.1 at an ephemeral
 * port (deep backlog: benchmarks open a thousand connections at once), and a stop pipe that ends the
 * loop from the test's thread. Shared by the loopback LLM server and the MCP fault server. */
#ifndef AG_TEST_LOOPBACK_H
#define AG_TEST_LOOPBACK_H

#include <event2/listener.h>
#include <pthread.h>

typedef struct loopback {
  struct event_base *base;
  struct evconnlistener *lis;
  struct event *stop_ev;
  int stop_pipe[2];
  pthread_t thread;
  int thread_started;
  int port;
} loopback;

/* Binds, then runs the loop on a new thread; on_accept(arg) gets each connection there. 0 or -1 (then
 * call loopback_free). */
int loopback_start(loopback *lb, evconnlistener_cb on_accept, void *arg);
/* Ends the loop and joins the thread: the caller may then free what the thread used. */
void loopback_join(loopback *lb);
/* Frees the listener, the loop and the pipe (after loopback_join). */
void loopback_free(loopback *lb);

/* *count read under mu: a number the server's thread moves, read from the test's. */
size_t loopback_count(pthread_mutex_t *mu, const size_t *count);

#endif
