/* ${VAR} in an MCP server's env values and HTTP headers, read from the environment when the server
 * starts: the world file and the store keep only the variable names, never the values. */
#ifndef AG_MCP_EXPAND_H
#define AG_MCP_EXPAND_H

#include "common/error.h"

/* tmpl with each ${NAME} replaced by getenv(NAME); other text (a lone $ included) is kept. *out is new
 * (caller frees, and should clear it: it may hold a secret). AG_ERR_INVALID with em naming the variable
 * (never a value) when one is unset or the ${ is not closed; what names the field, e.g. "env.TOKEN". */
int mcp_expand(const char *tmpl, const char *what, char **out, ag_errmsg *em);

/* Calls fn(ud, value) with the current value of each ${NAME} in tmpl that is set (an unset or malformed
 * one is skipped: mcp_expand reports those). Stops at fn's first non-zero return, which it returns.
 * value is borrowed from the environment for the call. */
int mcp_expand_values(const char *tmpl, int (*fn)(void *ud, const char *value), void *ud);

#endif
