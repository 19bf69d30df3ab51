/* A world's MCP servers as a door shows them (which were started, each one's state, tools and last
 * error) and a restart of one with its checks: one code path for `agora serve` (GET and POST
 * /api/worlds/{id}/mcp…) and libagora (agora_mcp_servers, agora_mcp_restart, API 11), so they cannot
 * disagree. */
#ifndef AG_RT_MCP_STATUS_H
#define AG_RT_MCP_STATUS_H

#include "common/error.h"
#include "runtime/runtime.h"

#include <cjson/cJSON.h>

/* {"started","reason" (why not, or null),"servers":[{"name","transport" ("stdio"|"http"),"state"
 * ("not started"|"starting"|"ready"|"failed"),"tools":[names],"error" (or null)}]} for the servers of
 * spec, live from rt when it is the open world (rt NULL: a stored world's spec, never started). The
 * caller owns the result; NULL when out of memory. */
cJSON *rt_mcp_status_json(const runtime *rt, const world_spec *spec);

/* Starts server name of rt's world again (world_mcp_restart): its agents get its tools again once it is
 * ready, a failure is an mcp-error event. label names the world in em. AG_ERR_NOT_FOUND (no such
 * server), AG_ERR_STATE (its servers were not started, replies are in flight, or it could not be set up
 * at the start). On success, when row is not NULL, *row is the server's row of rt_mcp_status_json
 * (the caller's). */
int rt_mcp_restart(runtime *rt, const char *label, const char *name, cJSON **row, ag_errmsg *em);

#endif
