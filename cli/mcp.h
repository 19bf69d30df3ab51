/* The commands' side of MCP servers: starting a world's servers with their log file, and `agora tools`. */
#ifndef AG_CLI_MCP_H
#define AG_CLI_MCP_H

#include "world/world.h"

/* Starts w's MCP servers (world_mcp_start), their stderr appended to a log file of this run in the data
 * directory (db, else the default one; logs/mcp-STAMP-PID.log), or with no_save in $TMPDIR
 * (agora-mcp-STAMP-PID.log). Nothing happens for a world without servers. Errors as world_mcp_start. */
int cli_mcp_start(world *w, const char *db, int no_save, ag_errmsg *em);
/* Stops w's MCP servers before the world is freed (world_mcp_stop, at most 4 s); w may be NULL. */
void cli_mcp_stop(world *w);

#endif
