/* ${VAR} expansion for MCP server settings (see expand.h). */
#include "mcp/expand.h"

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

#define EXPAND_CAP (1u << 20)

int mcp_expand(const char *tmpl, const char *what, char **out, ag_errmsg *em) {
  ag_buf b;
  ag_buf_init(&b, EXPAND_CAP);
  int rc = AG_OK;
  *out = NULL;
  for (const char *p = tmpl; *p && !rc;) {
    const char *var = strstr(p, "${");
    if (!var) {
      rc = ag_buf_appends(&b, p);
      break;
    }
    rc = ag_buf_append(&b, p, (size_t)(var - p));
    const char *end = strchr(var + 2, '}');
    if (!rc && !end) rc = ag_fail(em, AG_ERR_INVALID, "%s: '${' without a closing '}'", what);
    if (rc) break;
    char name[256];
    size_t n = (size_t)(end - var - 2);
    if (!n || n >= sizeof name) {
      rc = ag_fail(em, AG_ERR_INVALID, "%s: a ${} with no variable name or one too long", what);
      break;
    }
    memcpy(name, var + 2, n);
    name[n] = '\0';
    const char *val = getenv(name);
    if (!val) rc = ag_fail(em, AG_ERR_INVALID, "%s: environment variable %s is not set", what, name);
    else rc = ag_buf_appends(&b, val);
    p = end + 1;
  }
  if (!rc) *out = ag_buf_take(&b);
  if (b.data) memset(b.data, 0, b.alloc);
  ag_buf_free(&b);
  return rc;
}

int mcp_expand_values(const char *tmpl, int (*fn)(void *ud, const char *value), void *ud) {
  int rc = AG_OK;
  for (const char *p = tmpl; !rc && (p = strstr(p, "${"));) {
    const char *end = strchr(p + 2, '}');
    if (!end) break;
    char name[256];
    size_t n = (size_t)(end - p - 2);
    const char *val = NULL;
    if (n && n < sizeof name) {
      memcpy(name, p + 2, n);
      name[n] = '\0';
      val = getenv(name);
    }
    if (val) rc = fn(ud, val);
    p = end + 1;
  }
  return rc;
}
