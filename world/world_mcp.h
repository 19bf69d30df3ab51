/* A world's MCP servers (world file `mcp_servers`, docs/mcp.md): started together when the
 * world starts, each an mcp_client over stdio (mcp/stdio.c) or Streamable HTTP (mcp/http.c); a server
 * that fails to start is an `mcp-error` event; each agent then gets the tools its references name
 * (agent_set_mcp_tools), again when a server says its list changed. Stopped with the world. */
#ifndef AG_WORLD_MCP_H
#define AG_WORLD_MCP_H

#include <stddef.h>

#include "mcp/client.h"
#include "world/world.h"

typedef struct world_mcp world_mcp;

/* How the servers start. Strings borrowed for the call. */
typedef struct world_mcp_opts {
  const char *log_path; /* the servers' stderr, appended (NULL: discarded) */
  const char *version;  /* Agora's version, sent as clientInfo */
  long wait_ms;         /* longest wait for every server's first start (0: 120000) */
} world_mcp_opts;

/* Starts every server of w's spec and runs the loop until each is ready or failed. Then gives the
 * agents their tools. AG_OK when every agent has every tool it names; AG_ERR_IO when a server an
 * agent needs failed (em names each such server, why, and who needs it); AG_ERR_INVALID when a name
 * is given twice after SERVER.* was expanded or a named tool is not on its server (em names both).
 * A world without servers: AG_OK at once. AG_ERR_STATE, nothing started, when w's loop is running
 * (called from one of its callbacks: libevent runs a loop once at a time, so there is no waiting here). */
int world_mcp_start(world *w, const world_mcp_opts *o, ag_errmsg *em);

/* The servers, in world-file order (count 0 before world_mcp_start). *client may be NULL when the
 * server could not be set up at all. */
size_t world_mcp_count(const world *w);
int world_mcp_server_at(const world *w, size_t i, const char **name, int *ready, const char **why,
                        mcp_client **client);

/* Starts server name again at once (mcp_client_restart); its agents get its tools again once it is
 * ready, and a failure is an mcp-error event, as at the first start. AG_ERR_NOT_FOUND when the world has
 * no such server, AG_ERR_STATE when it was never set up (its servers were not started). */
int world_mcp_restart(world *w, const char *name);

/* Stops the servers while the world is still whole: cancels every turn (no call outlives its client),
 * takes the tools away, ends each transport (stdio: stdin closed; HTTP: session DELETEd) and runs the
 * loop until the processes are reaped and the requests ended, at most ms (SIGTERM half-way, SIGKILL at
 * the end). The commands call it before world_free. Nothing happens for a world without servers. When the
 * loop is running (called from one of its callbacks) it returns without waiting: the children end by
 * their own timers as that loop goes on, and are reaped there. */
void world_mcp_stop(world *w, long ms);
/* world_mcp_stop's first half, which never runs the loop: the turns cancelled, the tools taken away and
 * each transport ended; the children end by their own timers (SIGTERM, then SIGKILL) as the loop goes on.
 * world_mcp_ending says when they are reaped (and an HTTP server's session ended): for a close that waits
 * on the loop instead of running it (agora_world_close_later). */
void world_mcp_release(world *w);
int world_mcp_ending(world *w);

/* world.c: the world's slot for its servers, and freeing them (before the agents' host goes). */
world_mcp **world__mcp_slot(world *w);
void world_mcp_free(world_mcp *m);

#endif
