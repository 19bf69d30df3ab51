/* The stdio MCP transport: a child process speaking newline-delimited JSON-RPC on its stdin/stdout,
 * both non-blocking pipes driven by the libevent loop. Its stderr is appended to a log file (never the
 * transcript). Lines that are not JSON are skipped with a note in that log; a run of them ends the
 * transport ("protocol garbage"), as does the child's exit or its closing stdout. */
#ifndef AG_MCP_STDIO_H
#define AG_MCP_STDIO_H

#include <stddef.h>

#include "common/error.h"
#include "mcp/transport.h"

struct event_base;

#define MCP_STDIO_GARBAGE_MAX 64 /* lines in a row that are not JSON-RPC before the transport ends */
#define MCP_STDIO_GRACE_MS 500   /* after stdin closes: SIGTERM after this, SIGKILL after twice it */

/* How to start a server. Everything borrowed for the call. env values may hold ${VAR}, read from the
 * environment now and not kept. */
typedef struct mcp_stdio_config {
  const char *command;       /* a path, or a name looked up in PATH */
  const char *const *args;   /* n_args arguments after the command */
  size_t n_args;
  const char *const *env_names;  /* n_env variables set for the child on top of Agora's environment */
  const char *const *env_values;
  size_t n_env;
  const char *cwd;      /* NULL: Agora's */
  const char *log_path; /* the child's stderr and Agora's notes are appended here; NULL: /dev/null */
  const char *name;     /* the server's name, for the notes */
} mcp_stdio_config;

/* Starts the child. sink and ud are borrowed until close; callbacks come from the loop, never from
 * inside this call. AG_ERR_NOT_FOUND (no such command), AG_ERR_INVALID (an unset ${VAR}) or AG_ERR_IO,
 * with em naming the problem. */
int mcp_stdio_open(struct event_base *base, const mcp_stdio_config *cfg, const mcp_transport_sink *sink,
                   void *ud, mcp_transport **out, ag_errmsg *em);
/* The child's process id (tests check that one server serves everyone). */
int mcp_stdio_pid(const mcp_transport *t);

#endif
