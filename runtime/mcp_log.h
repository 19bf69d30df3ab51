/* Starting a world's MCP servers with a log file of this run (the runtime's part of MCP). */
#ifndef AG_RT_MCP_LOG_H
#define AG_RT_MCP_LOG_H

#include "world/world.h"

/* Starts w's MCP servers (world_mcp_start), their stderr appended to a log file of this run in the data
 * directory (db, else the default one; logs/mcp-STAMP-PID.log), or with no_save in $TMPDIR
 * (agora-mcp-STAMP-PID.log). Nothing happens for a world without servers. Errors as world_mcp_start. */
int rt_mcp_start(world *w, const char *db, int no_save, ag_errmsg *em);

#endif
