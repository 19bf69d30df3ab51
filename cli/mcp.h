/* The commands' side of MCP servers: starting a world's servers with their log file, and `agora tools`. */
#ifndef AG_CLI_MCP_H
#define AG_CLI_MCP_H

#include "world/world.h"

/* Starts w's MCP servers (world_mcp_start), their stderr appended to a log file of this run in the data
 * directory (db, else the default one; logs/mcp-STAMP-PID.log), or with no_save in $TMPDIR
 * (agora-mcp-STAMP-PID.log). Nothing happens for a world without servers. Errors as world_mcp_start. */
int cli_mcp_start(world *w, const char *db, int no_save, ag_errmsg *em);
/* Waits (on the loop) for the servers' processes to end after the world was freed, then forgets them. */
void cli_mcp_stop(struct event_base *base);

#endif
