/* agora serve: the worlds of the command line and of the database behind an HTTP API, live event
 * streams (SSE) and a web page, all on one libevent loop with the worlds (no thread per client).
 * This file holds start-up and the graceful stop (the arguments and the token are read by cli/). */
#include "serve/serve.h"
#include "serve/serve_int.h"

#include "common/clock.h"

#include <event2/event.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void on_stop_signal(evutil_socket_t sig, short what, void *arg) {
  (void)sig, (void)what;
  serve *s = arg;
  s->stopping = 1;
  event_base_loopbreak(s->base);
}

static void on_heartbeat(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  serve *s = arg;
  for (size_t i = 0; i < s->n_worlds; i++) sse_hub_heartbeat(s->worlds[i]->hub);
}

/* The caps and the request timeout: from the options, else from the descriptor limit (the rest of the
 * descriptors are for the LLM connections, the database and NATS; a connection past the cap still
 * holds one until its 503 is sent). AGORA_SERVE_REQUEST_TIMEOUT_MS shortens the timeout for tests. */
static void set_limits(serve *s, const serve_opts *a) {
  struct rlimit rl;
  size_t fds = !getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY ? (size_t)rl.rlim_cur : 65536;
  size_t def = fds - fds / 4;
  s->max_conns = a->max_conns ? (size_t)a->max_conns : def < 8192 ? def : 8192;
  s->max_streams = a->max_streams ? (size_t)a->max_streams : s->max_conns - s->max_conns / 8;
  const char *env = getenv("AGORA_SERVE_REQUEST_TIMEOUT_MS");
  s->request_timeout_ms = env && atol(env) > 0 ? atol(env) : 15000;
}

static int start(serve *s, const serve_opts *a) {
  ag_errmsg em = {""};
  int rc;
  set_limits(s, a);
  if (!(s->base = event_base_new())) return ag_report(AG_ERR_NOMEM, "serve: cannot create the event loop");
  /* The database the worlds share; their commits are synced by the library's storage thread
   * (AGORA_SYNC_BACKGROUND), so the loop and every stream never wait for the disk. */
  if ((rc = agora_loop_db(s->base, a->db, &s->db))) return ag_report(rc, "serve: %s", agora_errmsg());
  for (int i = 0; i < a->n_files; i++)
    if ((rc = serve_world_add_file(s, a->files[i]))) return ag_report(rc, "%s", agora_errmsg());
  static const int sigs[2] = {SIGINT, SIGTERM};
  for (int i = 0; i < 2; i++)
    if (!(s->sig[i] = evsignal_new(s->base, sigs[i], on_stop_signal, s)) || event_add(s->sig[i], NULL))
      return ag_report(AG_ERR_NOMEM, "serve: cannot watch signals");
  /* Every 15 s; AGORA_SERVE_HEARTBEAT_MS shortens it for tests. */
  const char *hb_env = getenv("AGORA_SERVE_HEARTBEAT_MS");
  long hb_ms = hb_env && atol(hb_env) > 0 ? atol(hb_env) : 15000;
  struct timeval hb = {hb_ms / 1000, (hb_ms % 1000) * 1000};
  if (!(s->heartbeat = event_new(s->base, -1, EV_PERSIST, on_heartbeat, s)) || event_add(s->heartbeat, &hb))
    return ag_report(AG_ERR_NOMEM, "serve: cannot start the heartbeat");
  signal(SIGPIPE, SIG_IGN); /* a client gone mid-write is an error on its connection, not the end */
  if ((rc = serve_http_start(s, a->listen, &em))) return ag_report(rc, "%s", em.text);
  return 0;
}

/* Stop accepting, cancel replies in flight and let what was published be saved, end the streams
 * (their last frames still go out), then free everything. Returns 1 when messages accepted could not be
 * saved (said on stderr, as `run` and the console do), else 0. */
static int stop(serve *s) {
  if (s->http) {
    s->stopping = 1;
    serve_http_stop_accepting(s);
    serve_worlds_settle(s);
  }
  serve_worlds_close(s); /* their chats let go and synced; their last events still reach the streams */
  if (s->http) {
    for (size_t i = 0; i < s->n_worlds; i++) sse_hub_close_all(s->worlds[i]->hub);
    struct timeval flush = {0, 300 * 1000};
    event_base_loopexit(s->base, &flush);
    event_base_dispatch(s->base);
    evhttp_free(s->http);
  }
  serve_conns_free(s); /* after evhttp_free: its connections' close callbacks count down */
  serve_worlds_free(s);
  for (int i = 0; i < 2; i++)
    if (s->sig[i]) event_free(s->sig[i]);
  if (s->heartbeat) event_free(s->heartbeat);
  agora_db_close(s->db); /* the last of its users: syncs what the storage thread had not */
  if (s->base) event_base_free(s->base);
  free(s->token);
  if (!s->unsaved && !s->close_failed) return 0;
  if (s->unsaved) fprintf(stderr, "agora: serve: %zu message(s) could not be saved", s->unsaved);
  else fputs("agora: serve: messages could not be saved", stderr);
  fprintf(stderr, "%s%s\n", s->storage_error[0] ? ": " : "", s->storage_error);
  return 1;
}

int serve_run(const serve_opts *a) {
  serve s;
  memset(&s, 0, sizeof s);
  s.open = a->open;
  s.db_dir = a->db;
  s.token = a->token; /* taken */
  s.boot = (uint64_t)ag_now_ms();
  int status = start(&s, a);
  if (!status && event_base_dispatch(s.base) < 0) status = ag_report(AG_ERR_IO, "serve: the event loop failed");
  if (stop(&s) && !status) status = 1;
  return status;
}
