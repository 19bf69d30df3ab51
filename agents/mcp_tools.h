/* An agent's MCP tools: the references a world file gives ("fs.read_file", "fs.*", {"name", "as",
 * "approve"}) and, once the servers have listed their tools, the resolved set the agent offers its
 * model and calls through mcp/client.h. Pure data and lookups; the calls are made in agent_mcp.c. */
#ifndef AG_MCP_TOOLS_H
#define AG_MCP_TOOLS_H

#include <stddef.h>

#include "common/error.h"
#include "llm/llm.h"
#include "mcp/client.h"

/* One "SERVER.TOOL" / "SERVER.*" entry of an agent's tools. Strings owned. */
typedef struct agent_mcp_ref {
  char *server;
  char *tool;  /* NULL: every tool of the server ("*") */
  char *as;    /* the name the model sees instead of the tool's (NULL: the tool's own) */
  int approve; /* -1: by the tool's annotations (readOnlyHint: no question), 0: never ask, 1: always ask */
} agent_mcp_ref;

/* "fs.read_file" → server "fs", tool "read_file"; "fs.*" → tool NULL. AG_ERR_INVALID when name has no
 * '.' with text on both sides. as may be NULL; approve -1/0/1. *out owns copies. */
int agent_mcp_ref_parse(const char *name, const char *as, int approve, agent_mcp_ref *out);
/* Deep copies of n refs (*out NULL when n is 0), and freeing them. */
int agent_mcp_refs_copy(const agent_mcp_ref *src, size_t n, agent_mcp_ref **out);
void agent_mcp_refs_free(agent_mcp_ref *refs, size_t n);

/* One tool an agent may call, resolved against its server's list. Strings owned; client borrowed (the
 * world owns it and outlives the agent's calls). */
typedef struct agent_mcp_tool {
  char *name;        /* as the model sees it */
  char *server;      /* the server's name in the world file */
  char *tool;        /* the tool's name on the server */
  char *description;
  char *schema;      /* JSON object text */
  int approve;       /* ask before each call */
  mcp_client *client;
} agent_mcp_tool;

/* The resolved set (a small owned array). */
typedef struct agent_mcp_set {
  agent_mcp_tool *tools;
  size_t n;
} agent_mcp_set;

void agent_mcp_set_free(agent_mcp_set *s);
int agent_mcp_set_copy(const agent_mcp_set *src, agent_mcp_set *dst);
const agent_mcp_tool *agent_mcp_set_find(const agent_mcp_set *s, const char *name);

/* Adds ref's tools from client's list (name, description, schema, approval) to set. AG_ERR_NOT_FOUND
 * with em when a named tool is not on the server; AG_ERR_EXISTS with em naming both entries when a
 * name is taken already (by a built-in tool, listed in taken, or an earlier entry). */
int agent_mcp_set_add(agent_mcp_set *set, const agent_mcp_ref *ref, mcp_client *client,
                      const char *const *taken, size_t n_taken, ag_errmsg *em);

#endif
