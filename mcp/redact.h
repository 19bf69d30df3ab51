/* The values of an MCP server's ${VAR} settings (env values, HTTP headers), kept so that they can be
 * scrubbed from what the server sends back: a server that echoes its token in a result or an error
 * ("denied for header Bearer mcpTOKEN-...") must not get it stored in a thread, exported or sent to
 * the model. Pure: no I/O. */
#ifndef AG_MCP_REDACT_H
#define AG_MCP_REDACT_H

#include <stddef.h>

#define MCP_REDACT_MARK "[redacted]"
/* Values shorter than this are not scrubbed: replacing every "1" or "ab" in a result would destroy it,
 * and a value that short is no secret. */
#define MCP_REDACT_MIN 4

typedef struct mcp_secrets {
  char **v;
  size_t n;
} mcp_secrets;

/* Adds the current value of each ${NAME} in tmpl (an env value or header template; unset names and
 * values under MCP_REDACT_MIN bytes are skipped). AG_OK or AG_ERR_NOMEM. tmpl is borrowed. */
int mcp_secrets_add_vars(mcp_secrets *s, const char *tmpl);
/* Wipes and frees the values; s is empty afterwards. */
void mcp_secrets_clear(mcp_secrets *s);
/* text with every occurrence of every value replaced by MCP_REDACT_MARK, the longest value first:
 * a new string (caller frees), or NULL when out of memory. text is borrowed. */
char *mcp_secrets_redact(const mcp_secrets *s, const char *text);

#endif
