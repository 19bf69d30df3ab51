/* An MCP client over any mcp_transport: the handshake (initialize, notifications/initialized,
 * tools/list with pagination), the server's tool list (refreshed on notifications/tools/list_changed),
 * and tool calls — many in flight, matched by id, each with a timeout and cancellable
 * (notifications/cancelled). A server that ends fails the calls it had with error results and is
 * started again, with backoff, for the next call. Everything runs on the libevent loop; no callback
 * ever runs from inside the call that caused it. */
#ifndef AG_MCP_CLIENT_H
#define AG_MCP_CLIENT_H

#include <stddef.h>

#include "common/error.h"
#include "mcp/transport.h"

struct event_base;

typedef struct mcp_client mcp_client;
typedef struct mcp_call mcp_call;

#define MCP_PROTOCOL_VERSION "2025-06-18" /* the version offered; older ones a server answers are accepted */
#define MCP_TIMEOUT_MS 30000L             /* per call and per handshake step, unless configured */
#define MCP_BACKOFF_MIN_MS 250L
#define MCP_BACKOFF_MAX_MS 30000L
/* A transport's on_closed why for an HTTP session the server no longer knows (mcp/http.h's
 * MCP_HTTP_SESSION_EXPIRED): the client initializes again at once, once. */
#define MCP_SESSION_EXPIRED "session expired"

/* One tool of the server, as listed. Strings owned by the client; valid until the list changes
 * (on_tools) or the client is freed. */
typedef struct mcp_tool {
  char *name;
  char *description;  /* "" when none */
  char *input_schema; /* JSON object text */
  int read_only;      /* annotations.readOnlyHint is true */
} mcp_tool;

/* Opens a new transport for the client: at the start and at each restart. */
typedef int (*mcp_connect_fn)(void *ud, struct event_base *base, const mcp_transport_sink *sink,
                              void *sink_ud, mcp_transport **out, ag_errmsg *em);

typedef struct mcp_client_config {
  const char *name;      /* the server's name in the world file (copied) */
  long timeout_ms;       /* 0: MCP_TIMEOUT_MS */
  size_t result_cap;     /* 0: MCP_RESULT_CAP */
  const char *version;   /* Agora's version for clientInfo (copied) */
  mcp_connect_fn connect;
  void *connect_ud;      /* borrowed for the client's life */
} mcp_client_config;

/* What the client tells its owner; ud and the functions borrowed for the client's life; may be NULL. */
typedef struct mcp_client_events {
  void *ud;
  /* A start (the first or a restart) ended: ready (err 0) or failed (why says how, e.g. "the server
   * exited with status 1", borrowed). */
  void (*on_start)(void *ud, mcp_client *c, int err, const char *why);
  /* The tool list changed after notifications/tools/list_changed. */
  void (*on_tools)(void *ud, mcp_client *c);
} mcp_client_events;

int mcp_client_new(struct event_base *base, const mcp_client_config *cfg, const mcp_client_events *ev,
                   mcp_client **out);
/* Starts the server and its handshake; on_start reports the outcome. */
void mcp_client_start(mcp_client *c);
/* Ends the transport now (a server that is up is told nothing more: calls in flight fail with error
 * results) and starts the server again at once, without the backoff: a person asked for it
 * (POST /api/worlds/{id}/mcp/{server}/restart). on_start reports the outcome. */
void mcp_client_restart(mcp_client *c);
/* Ends the transport; pending calls are dropped without callbacks (their owners cancel them first). */
void mcp_client_free(mcp_client *c);

const char *mcp_client_name(const mcp_client *c);
/* The tools listed (borrowed, see mcp_tool), in the server's order; NULL/0 before the first list. */
const mcp_tool *mcp_client_tools(const mcp_client *c, size_t *n);
const mcp_tool *mcp_client_tool(const mcp_client *c, const char *name);
/* 1 when the handshake is done and the transport up. */
int mcp_client_ready(const mcp_client *c);
/* Why the last start failed or the server ended ("" when it did not); borrowed. */
const char *mcp_client_why(const mcp_client *c);
/* Reads the ${VAR}s in templates (the server's env values and header templates) now, and from then on
 * replaces their values (mcp/redact.h) in every result, error and why the client reports: a server that
 * echoes its token does not get it stored, exported or sent to the model. Called by the connect
 * function at each start (the environment may have changed). templates borrowed. AG_ERR_NOMEM. */
int mcp_client_redact_vars(mcp_client *c, const char *const *templates, size_t n);
/* Calls in flight or waiting for the server (tests, benchmarks). */
size_t mcp_client_pending(const mcp_client *c);
/* The transport in use, or NULL (tests read the stdio child's pid through it). */
mcp_transport *mcp_client_transport(const mcp_client *c);

/* One call's outcome: text the model sees (rendered and capped) and whether it is an error result
 * (isError, a JSON-RPC error, a timeout, the server gone). Borrowed for the callback. */
typedef struct mcp_result {
  const char *text;
  int is_error;
} mcp_result;
typedef void (*mcp_result_fn)(void *ud, const mcp_result *r);

/* Calls tool with args_json (a JSON object text; NULL: {}), waiting for the server to be ready (started
 * again if it ended). fn(ud, result) runs exactly once, from the loop, unless the call is cancelled.
 * timeout_ms 0: the client's. *out (may be NULL) is the call, valid until fn runs or it is cancelled. */
int mcp_client_call(mcp_client *c, const char *tool, const char *args_json, long timeout_ms, mcp_result_fn fn,
                    void *ud, mcp_call **out);
/* Withdraws a call: the server is told (notifications/cancelled) if it had it; fn will not run. */
void mcp_call_cancel(mcp_call *call);

#endif
