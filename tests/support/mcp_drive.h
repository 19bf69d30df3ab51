/* Driving an MCP transport from a test or benchmark without the JSON-RPC client: a loop, a network
 * client (whose curl multi the HTTP transport runs on; no LLM client), the messages received in order,
 * and the real @modelcontextprotocol/server-everything started in Streamable HTTP mode on a free loopback
 * port (from $AGORA_PEERS, installed by the peers fixture), stopped by PID. */
#ifndef AG_TEST_MCP_DRIVE_H
#define AG_TEST_MCP_DRIVE_H

#include <stddef.h>
#include <sys/types.h>

#include "mcp/http.h"

typedef struct mcp_drive {
  struct event_base *base;
  net_client *net;
  mcp_transport *t; /* NULL once closed */
  char **msgs;      /* every message received, NUL-terminated, owned */
  size_t n_msgs, cap;
  int closed;       /* on_closed was called */
  char why[128];    /* its why */
  int close_in_message; /* test hook: close the transport from inside the next on_message */
} mcp_drive;

/* Opens an HTTP transport with opt; 0 or an AG_ERR_* code. */
int mcp_drive_open(mcp_drive *d, const mcp_http_options *opt);
/* Closes the transport (if still open), lets the DELETE go out (at most 3 s), frees everything. */
void mcp_drive_close(mcp_drive *d);
/* Sends printf-formatted JSON; 0 or the transport's error. */
int mcp_drive_send(mcp_drive *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Runs the loop until the answer with numeric id arrives (returned, owned by d) or timeout_ms pass (NULL). */
const char *mcp_drive_answer(mcp_drive *d, long id, long timeout_ms);
/* Runs the loop for ms milliseconds, or until cond(d, arg) (may be NULL) holds; returns whether it held. */
int mcp_drive_run(mcp_drive *d, long ms, int (*cond)(mcp_drive *d, void *arg), void *arg);
/* Messages received with that "method". */
size_t mcp_drive_count_method(const mcp_drive *d, const char *method);
/* initialize + notifications/initialized (ids 1) against a real server; 0 when answered. */
int mcp_drive_handshake(mcp_drive *d, long timeout_ms);

typedef struct mcp_everything {
  pid_t pid;
  int port;
  char url[64];
  char log[4096]; /* its stdout and stderr */
} mcp_everything;

/* Starts server-everything streamableHttp with its log in dir; waits until it accepts connections
 * (at most 30 s). 0, or -1 (a message on stderr says why). */
int mcp_everything_start(mcp_everything *e, const char *dir);
void mcp_everything_stop(mcp_everything *e);

#endif
