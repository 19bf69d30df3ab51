/* agora serve: the worlds of the command line and of the database behind an HTTP API, live event
 * streams (SSE) and a web page, all on one libevent loop with the worlds (no thread per client).
 * This file holds the command: its arguments, the token, start-up and the graceful stop. */
#include "cli/cli.h"
#include "cli/db.h"
#include "cli/nats_args.h"
#include "cli/serve_int.h"
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

static const char serve_usage[] =
  "usage: agora serve [WORLD.json ...] [--db DIR] [--listen HOST:PORT] [--token-file FILE]\n"
  "                   [--max-connections N] [--max-streams N]\n"
  "                   [--nats URL [--nats-creds FILE] [--nats-ca FILE] [--nats-replicas N]]\n"
  "\n"
  "Serve worlds over HTTP: a JSON API, live event streams (Server-Sent Events) and a web page at /.\n"
  "The worlds named are loaded (and stored, as console does); every other world in the database is\n"
  "loaded when first used. Stop with Ctrl-C or SIGTERM: replies in flight are cancelled, everything is\n"
  "saved, the streams end, exit 0 (1 when messages accepted could not be saved, e.g. on a full disk).\n"
  "\n"
  "  --db DIR           the database directory (default: $AGORA_HOME, $XDG_DATA_HOME/agora,\n"
  "                     ~/.local/share/agora)\n"
  "  --listen HOST:PORT the address to listen on (default 127.0.0.1:8080; port 0 picks a free one,\n"
  "                     the first line printed says which)\n"
  "  --token-file FILE  every request must carry 'Authorization: Bearer TOKEN' with the token in FILE\n"
  "                     (else $AGORA_TOKEN when set); required to listen on a non-loopback address\n"
  "  --allow-env NAME   let api_key_env name NAME although it does not end in _API_KEY, _TOKEN or _KEY\n"
  "  --nats URL         the worlds named join their world on NATS JetStream: the streams show what\n"
  "                     anyone publishes, messages posted go to the world's stream and `agora host`\n"
  "                     processes answer (docs/distributed.md); with --nats-creds FILE, --nats-ca FILE,\n"
  "                     --nats-replicas N; AGORA_NATS_TOKEN or AGORA_NATS_USER and AGORA_NATS_PASSWORD\n"
  "                     from the environment. Worlds loaded from the database stay in this process\n"
  "  --max-connections N\n"
  "                     connections open at once (default: 3/4 of the descriptor limit, at most 8192);\n"
  "                     a request on one past it gets 503\n"
  "  --max-streams N    event streams open at once (default: 7/8 of --max-connections); past it 503\n"
  "\n"
  "The API is described in docs/serve.md.\n";

typedef struct serve_args {
  const char *files[64];
  int n_files;
  const char *db, *listen, *token_file;
  cli_allow_env allow;
  cluster_opts nats;
  long max_conns, max_streams; /* 0: the default */
} serve_args;

/* A whole number from 1 to 1,000,000 for option name (argv[++*i]); 0, or the usage error's status. */
static int count_arg(int argc, char **argv, int *i, long *out) {
  const char *name = argv[*i];
  if (*i + 1 >= argc) return cli_error(AG_ERR_INVALID, "serve: %s needs a value", name);
  const char *v = argv[++*i];
  char *end;
  long n = strtol(v, &end, 10);
  if (end == v || *end || n < 1 || n > 1000000)
    return cli_error(AG_ERR_INVALID, "serve: %s: expected a whole number from 1 to 1000000, got '%s'", name, v);
  *out = n;
  return 0;
}

static int parse_args(int argc, char **argv, serve_args *a) {
  memset(a, 0, sizeof *a);
  a->listen = "127.0.0.1:8080";
  cli_nats_defaults(&a->nats);
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    int taken = cli_nats_arg(&a->nats, "serve", 0, argc, argv, &i);
    if (taken > 1) return taken;
    if (taken) continue;
    if (!strcmp(s, "--db") || !strcmp(s, "--listen") || !strcmp(s, "--token-file")) {
      if (i + 1 >= argc) return cli_error(AG_ERR_INVALID, "serve: %s needs a value", s);
      const char **dst = !strcmp(s, "--db") ? &a->db : !strcmp(s, "--listen") ? &a->listen : &a->token_file;
      *dst = argv[++i];
    } else if (!strcmp(s, "--max-connections") || !strcmp(s, "--max-streams")) {
      int st = count_arg(argc, argv, &i, !strcmp(s, "--max-streams") ? &a->max_streams : &a->max_conns);
      if (st) return st;
    } else if (!strcmp(s, "--allow-env")) {
      int st = cli_allow_env_arg(&a->allow, "serve", argc, argv, &i);
      if (st) return st;
    } else if (s[0] == '-' && s[1]) {
      return cli_error(AG_ERR_INVALID, "serve: unknown option '%s' (see agora serve --help)", s);
    } else if (a->n_files < (int)(sizeof a->files / sizeof *a->files)) {
      a->files[a->n_files++] = s;
    } else {
      return cli_error(AG_ERR_INVALID, "serve: too many world files");
    }
  }
  if (a->nats.url && !a->n_files)
    return cli_error(AG_ERR_INVALID, "serve: --nats needs the world file(s) to join (agora serve WORLD.json --nats URL)");
  return 0;
}

/* The token from --token-file (its first line, without surrounding white space), else $AGORA_TOKEN. */
static int read_token(const serve_args *a, char **out) {
  *out = NULL;
  char *text = NULL;
  if (a->token_file) {
    ag_errmsg em = {""};
    size_t len;
    int rc = ag_file_read(a->token_file, 4096, &text, &len, &em);
    if (rc) return cli_error(AG_ERR_INVALID, "serve: --token-file %s", em.text);
  } else {
    const char *env = getenv("AGORA_TOKEN");
    if (!env || !env[0]) return 0;
    if (!(text = strdup(env))) return cli_error(AG_ERR_NOMEM, "serve: out of memory");
  }
  char *p = text + strspn(text, " \t\r\n");
  size_t n = strcspn(p, "\r\n");
  while (n && (p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
  if (n < 8) {
    free(text);
    return cli_error(AG_ERR_INVALID, "serve: the token (%s) must be at least 8 characters",
                     a->token_file ? a->token_file : "AGORA_TOKEN");
  }
  memmove(text, p, n);
  text[n] = '\0';
  *out = text;
  return 0;
}

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
static void set_limits(serve *s, const serve_args *a) {
  struct rlimit rl;
  size_t fds = !getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY ? (size_t)rl.rlim_cur : 65536;
  size_t def = fds - fds / 4;
  s->max_conns = a->max_conns ? (size_t)a->max_conns : def < 8192 ? def : 8192;
  s->max_streams = a->max_streams ? (size_t)a->max_streams : s->max_conns - s->max_conns / 8;
  const char *env = getenv("AGORA_SERVE_REQUEST_TIMEOUT_MS");
  s->request_timeout_ms = env && atol(env) > 0 ? atol(env) : 15000;
}

static int start(serve *s, const serve_args *a) {
  ag_errmsg em = {""};
  int rc;
  /* The NATS client library is opened once, before any connection is made. */
  if (a->nats.url && cluster_init()) return cli_error(AG_ERR_NOMEM, "serve: cannot start the NATS client");
  set_limits(s, a);
  if (!(s->base = event_base_new())) return cli_error(AG_ERR_NOMEM, "serve: cannot create the event loop");
  /* The disk syncs run on a storage thread: the loop (and every stream) never waits for the disk. */
  if ((rc = cli_store_open_background(a->db, &s->st, &em))) return cli_error(rc, "serve: %s", em.text);
  if (!(s->synced = event_new(s->base, store_sync_fd(s->st), EV_READ | EV_PERSIST, on_synced, s)) ||
      event_add(s->synced, NULL))
    return cli_error(AG_ERR_NOMEM, "serve: cannot watch the storage thread");
  for (int i = 0; i < a->n_files; i++)
    if ((rc = serve_world_add_file(s, a->files[i], &em))) return cli_error(rc, "%s", em.text);
  static const int sigs[2] = {SIGINT, SIGTERM};
  for (int i = 0; i < 2; i++)
    if (!(s->sig[i] = evsignal_new(s->base, sigs[i], on_stop_signal, s)) || event_add(s->sig[i], NULL))
      return cli_error(AG_ERR_NOMEM, "serve: cannot watch signals");
  /* Every 15 s; AGORA_SERVE_HEARTBEAT_MS shortens it for tests. */
  const char *hb_env = getenv("AGORA_SERVE_HEARTBEAT_MS");
  long hb_ms = hb_env && atol(hb_env) > 0 ? atol(hb_env) : 15000;
  struct timeval hb = {hb_ms / 1000, (hb_ms % 1000) * 1000};
  if (!(s->heartbeat = event_new(s->base, -1, EV_PERSIST, on_heartbeat, s)) || event_add(s->heartbeat, &hb))
    return cli_error(AG_ERR_NOMEM, "serve: cannot start the heartbeat");
  signal(SIGPIPE, SIG_IGN); /* a client gone mid-write is an error on its connection, not the end */
  if ((rc = serve_http_start(s, a->listen, &em))) return cli_error(rc, "%s", em.text);
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

int cli_serve(int argc, char **argv) {
  if (argc > 0 && cli_is_help(argv[0])) {
    fputs(serve_usage, stdout);
    return 0;
  }
  serve_args a;
  int status = parse_args(argc, argv, &a);
  if (status) return status;
  serve s;
  memset(&s, 0, sizeof s);
  s.allow = a.allow;
  s.nats = a.nats;
  s.boot = (uint64_t)ag_now_ms();
  if ((status = read_token(&a, &s.token))) return status;
  if (!s.token && !serve_listen_is_loopback(a.listen)) {
    fprintf(stderr, "agora: serve: --listen %s is not a loopback address: pass --token-file FILE (or set "
                    "AGORA_TOKEN) so that every request needs the token\n", a.listen);
    free(s.token);
    return 2;
  }
  status = start(&s, &a);
  if (!status && event_base_dispatch(s.base) < 0) status = cli_error(AG_ERR_IO, "serve: the event loop failed");
  if (stop(&s) && !status) status = 1;
  return status;
}
