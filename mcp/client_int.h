/* Inside the MCP client: the structs shared by client.c (lifecycle, handshake, messages) and call.c
 * (the calls: ids, timers, results). Not for other modules. */
#ifndef AG_MCP_CLIENT_INT_H
#define AG_MCP_CLIENT_INT_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "mcp/client.h"
#include "mcp/redact.h"

#define MCP_CALL_BUCKETS 1024 /* calls in flight by id; a power of two */
#define MCP_TOOLS_MAX 10000   /* tools one server may list */
#define MCP_LIST_PAGES_MAX 1000

typedef enum call_kind { CALL_TOOL, CALL_INIT, CALL_LIST } call_kind;
typedef enum call_state { CALL_QUEUED, CALL_SENT } call_state;

struct mcp_call {
  mcp_client *c;
  call_kind kind;
  call_state state;
  long long id;          /* once sent */
  char *tool, *args;     /* CALL_TOOL */
  long timeout_ms;
  struct event *timer;
  mcp_result_fn fn;
  void *ud;
  const char *fail;      /* static text: fail from the loop with it (timer at 0) */
  unsigned epoch;        /* the client's epoch when made: a failure ends the calls of its epoch */
  mcp_call *prev, *next; /* the client's calls, oldest first */
  mcp_call *hnext;       /* the id bucket, once sent */
};

typedef enum client_state {
  MC_IDLE,     /* not started, or down and waiting for a call to start it again */
  MC_STARTING, /* initialize sent */
  MC_LISTING,  /* first tools/list in progress */
  MC_READY
} client_state;

struct mcp_client {
  struct event_base *base;
  char *name, *version;
  long timeout_ms;
  size_t result_cap;
  mcp_connect_fn connect;
  void *connect_ud;
  mcp_client_events ev;
  mcp_transport *t;
  mcp_transport_sink sink;
  client_state state;
  long long next_id;
  unsigned epoch;            /* counts failures of all calls (mcp__calls_fail) */
  mcp_call *head, *tail;
  size_t n_calls;
  mcp_call *buckets[MCP_CALL_BUCKETS];
  mcp_tool *tools, *listing; /* the list, and the one being collected */
  size_t n_tools, n_listing, list_pages;
  int relist;                /* list_changed came while listing */
  int reinitialized;         /* an expired session was initialized again (once until ready) */
  long backoff_ms;
  int64_t failed_at_ms;      /* when it last went down; 0: never */
  struct event *restart;
  mcp_secrets secrets;        /* the server's ${VAR} values, scrubbed from what it sends back */
  char why[256];
};

/* call.c */
mcp_call *mcp__call_new(mcp_client *c, call_kind kind, long timeout_ms);
void mcp__call_free(mcp_call *call);
/* Sends call (a request built from method and params, consumed); AG_ERR_* when the transport refused. */
int mcp__call_send(mcp_call *call, const char *method, cJSON *params);
mcp_call *mcp__call_find(mcp_client *c, long long id);
/* Ends a tool call with text (fn runs) and frees it. */
void mcp__call_finish(mcp_call *call, const char *text, int is_error);
/* A result or error for a tool call arrived. */
void mcp__call_answered(mcp_call *call, const cJSON *result, long long code, const char *error_text);
/* Sends every queued tool call (the server is ready). */
void mcp__calls_flush(mcp_client *c);
/* The server is gone: every tool call fails with why, handshake calls are dropped. */
void mcp__calls_fail(mcp_client *c, const char *why);
/* progress for a call: its timeout starts again. */
void mcp__call_progress(mcp_client *c, const cJSON *params);

/* client.c */
void mcp__client_down(mcp_client *c, const char *why);
void mcp__client_wake(mcp_client *c);
int64_t mcp__now_ms(void);

#endif
