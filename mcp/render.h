/* A tools/call result as the text the model sees: text content joined, other content named (an image,
 * a resource link), structuredContent as compact JSON, capped with a "[truncated]" marker. Pure. */
#ifndef AG_MCP_RENDER_H
#define AG_MCP_RENDER_H

#include <stddef.h>

#include <cjson/cJSON.h>

#define MCP_RESULT_CAP (64u * 1024u) /* default bytes of one tool result the model sees */
#define MCP_TRUNCATED "\n[truncated]"

/* result is the JSON-RPC result object (borrowed). *out is new (caller frees), at most cap bytes plus
 * the marker, cut at a UTF-8 boundary; *is_error is the result's isError. AG_ERR_NOMEM only. */
int mcp_render_result(const cJSON *result, size_t cap, char **out, int *is_error);
/* Caps text in place semantics: a new copy of s cut to cap bytes (UTF-8 boundary) plus the marker when
 * longer (caller frees; NULL without memory). */
char *mcp_render_cap(const char *s, size_t len, size_t cap);

#endif
