/* agora serve: the worlds of the command line and of the database behind an HTTP API, live event
 * streams (SSE) and a web page, all on one libevent loop with the worlds (no thread per client).
 * This file holds start-up and the graceful stop (the arguments and the token are read by cli/). */
#include "runtime/db.h"
#include "runtime/report.h"
#include "serve/serve.h"
#include "serve/serve_int.h"
#include "cluster/cluster.h"

#include "common/buf.h"
#include "common/clock.h"
#include "storage/store.h"

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

/* The storage thread synced more commits (or failed to): their state-saved events are now due. */
static void on_synced(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  serve *s = arg;
  ag_errmsg em = {""};
  int rc = store_sync_ack(s->st, &em);
  for (size_t i = 0; i < s->n_worlds; i++) {
    if (rc) serve_world_announce(s->worlds[i], &(world_event){EV_STORAGE_ERROR, .u.storage = {em.text}});
    chat_session_synced(s->worlds[i]->cs);
  }
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
  if (!(s->base = event_base_new())) return rt_report(AG_ERR_NOMEM, "serve: cannot create the event loop");
  /* The disk syncs run on a storage thread: the loop (and every stream) never waits for the disk. */
  if ((rc = rt_store_open_background(a->db, &s->st, &em))) return rt_report(rc, "serve: %s", em.text);
  if (!(s->synced = event_new(s->base, store_sync_fd(s->st), EV_READ | EV_PERSIST, on_synced, s)) ||
      event_add(s->synced, NULL))
    return rt_report(AG_ERR_NOMEM, "serve: cannot watch the storage thread");
  for (int i = 0; i < a->n_files; i++)
    if ((rc = serve_world_add_file(s, a->files[i], &em))) return rt_report(rc, "%s", em.text);
  static const int sigs[2] = {SIGINT, SIGTERM};
  for (int i = 0; i < 2; i++)
    if (!(s->sig[i] = evsignal_new(s->base, sigs[i], on_stop_signal, s)) || event_add(s->sig[i], NULL))
      return rt_report(AG_ERR_NOMEM, "serve: cannot watch signals");
  /* Every 15 s; AGORA_SERVE_HEARTBEAT_MS shortens it for tests. */
  const char *hb_env = getenv("AGORA_SERVE_HEARTBEAT_MS");
  long hb_ms = hb_env && atol(hb_env) > 0 ? atol(hb_env) : 15000;
  struct timeval hb = {hb_ms / 1000, (hb_ms % 1000) * 1000};
  if (!(s->heartbeat = event_new(s->base, -1, EV_PERSIST, on_heartbeat, s)) || event_add(s->heartbeat, &hb))
    return rt_report(AG_ERR_NOMEM, "serve: cannot start the heartbeat");
  signal(SIGPIPE, SIG_IGN); /* a client gone mid-write is an error on its connection, not the end */
  if ((rc = serve_http_start(s, a->listen, &em))) return rt_report(rc, "%s", em.text);
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
  if (s->synced) event_free(s->synced);
  chat_store_close(s->st); /* syncs what the storage thread had not */
  if (s->base) event_base_free(s->base);
  free(s->token);
  if (!s->unsaved) return 0;
  fprintf(stderr, "agora: serve: %zu message(s) could not be saved%s%s\n", s->unsaved,
          s->storage_error[0] ? ": " : "", s->storage_error);
  return 1;
}

/* The library's options of the command line in the runtime's records, which serve's worlds still open
 * with (until serve opens them with agora_world_open: docs/library.md "What is left, file by file"). */
static void core_options(serve *s, const agora_options *o) {
  for (size_t i = 0; i < o->n_allow_env && i < RT_ALLOW_ENV_MAX; i++) s->allow.names[s->allow.n++] = o->allow_env[i];
  for (size_t i = 0; i < o->n_allow_key_to && i < RT_ALLOW_ENV_MAX; i++)
    s->allow.key_urls[s->allow.n_key_urls++] = o->allow_key_to[i];
  s->over = (rt_overrides){.llm_cache = o->llm_cache, .cache_db = o->cache_db};
  s->nats = (cluster_opts){.url = o->nats_url, .creds = o->nats_creds, .ca_file = o->nats_ca,
                           .replicas = o->nats_replicas ? o->nats_replicas : 1,
                           .lease_ms = o->nats_lease_ms ? o->nats_lease_ms : 3000};
}

int serve_run(const serve_opts *a) {
  serve s;
  memset(&s, 0, sizeof s);
  core_options(&s, &a->open);
  s.token = a->token; /* taken */
  s.boot = (uint64_t)ag_now_ms();
  int status = start(&s, a);
  if (!status && event_base_dispatch(s.base) < 0) status = rt_report(AG_ERR_IO, "serve: the event loop failed");
  if (stop(&s) && !status) status = 1;
  return status;
}
