/* The MCP parts of a world file: `mcp_servers` (strict, with JSON paths), agents' MCP tool entries
 * ("fs.read_file", "fs.*", {"name", "as", "approve"}) checked against those servers, paths made
 * relative to the world file, and the world-file form back (variable names only, never values). */
#ifndef AG_WORLD_MCP_SPEC_H
#define AG_WORLD_MCP_SPEC_H

#include <cjson/cJSON.h>

#include "world/world_file.h"

/* Reads `mcp_servers` of root (borrowed) into spec. Errors as world_spec_load. */
int world_mcp_read(const cJSON *root, world_spec *spec, const char *label, ag_errmsg *em);
/* One agent tool entry naming an MCP tool (name has a '.'): t is the entry (a string or an object),
 * appended to s->mcp. path names the entry ("agents[0].tools[2]"). */
int world_mcp_read_ref(const cJSON *t, const char *name, agent_settings *s, const char *label, const char *path,
                       ag_errmsg *em);
/* Checks every agent's MCP entries against spec's servers (a server no entry can name is fine), and
 * names given twice among an agent's entries and built-in tools. */
int world_mcp_check(const world_spec *spec, const char *label, ag_errmsg *em);
/* Resolves relative command paths and cwd against the folder of the world file at path. */
int world_mcp_resolve_paths(world_spec *spec, const char *path, ag_errmsg *em);

/* Adds `mcp_servers` to w (a world-file object) when there are any. */
void world_mcp_to_json(const world_spec *spec, cJSON *w);
/* Appends an agent's MCP entries to its "tools" array. */
void world_mcp_refs_to_json(const agent_settings *s, cJSON *tools);
/* Copies the servers of src into dst (whose own are empty). */
int world_mcp_spec_copy(world_spec *dst, const world_spec *src);
void world_mcp_spec_free(world_spec *spec);

#endif
