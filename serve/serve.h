/* agora serve (docs/serve.md): the worlds of the command line and of the database behind an HTTP API,
 * live event streams and a web page, on one libevent loop. Every world is opened with libagora. */
#ifndef AG_SERVE_H
#define AG_SERVE_H

#include "agora.h"

/* What `agora serve` was given (parsed by cli/; strings borrowed from argv). */
typedef struct serve_opts {
  const char *files[64]; /* world files: their MCP servers start, as with run */
  int n_files;
  const char *db, *listen, *token_file;
  char *token; /* owned, taken by serve_run; NULL: no token needed (loopback) */
  /* The library's options the command line gave: allow_env, allow_key_to, llm_cache, cache_db and the
   * nats_ fields (url, creds, ca, replicas) are read; every pointer borrowed until serve_run returns. */
  agora_options open;
  long max_conns, max_streams; /* --max-connections, --max-streams; 0: the default */
} serve_opts;

/* Serves until SIGINT or SIGTERM; returns the process exit status. */
int serve_run(const serve_opts *o);
/* 1 when listen ("HOST:PORT") names a loopback address (127.0.0.0/8, ::1, localhost). */
int serve_listen_is_loopback(const char *listen);

#endif
