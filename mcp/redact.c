/* Scrubbing an MCP server's ${VAR} values from its answers (see redact.h). */
#include "mcp/redact.h"

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/error.h"
#include "mcp/expand.h"

#define REDACT_TEXT_CAP (64u << 20) /* a result is capped long before this */

static int secrets_add(void *ud, const char *value) {
  mcp_secrets *s = ud;
  size_t len = strlen(value);
  if (len < MCP_REDACT_MIN) return AG_OK;
  for (size_t i = 0; i < s->n; i++)
    if (!strcmp(s->v[i], value)) return AG_OK;
  char **grown = realloc(s->v, (s->n + 1) * sizeof *grown);
  if (!grown) return AG_ERR_NOMEM;
  s->v = grown;
  if (!(s->v[s->n] = strdup(value))) return AG_ERR_NOMEM;
  /* Longest first, so a value that holds another is replaced whole. */
  size_t i = s->n++;
  for (; i > 0 && strlen(s->v[i - 1]) < len; i--) {
    char *t = s->v[i - 1];
    s->v[i - 1] = s->v[i];
    s->v[i] = t;
  }
  return AG_OK;
}

int mcp_secrets_add_vars(mcp_secrets *s, const char *tmpl) { return mcp_expand_values(tmpl, secrets_add, s); }

void mcp_secrets_clear(mcp_secrets *s) {
  for (size_t i = 0; i < s->n; i++) {
    memset(s->v[i], 0, strlen(s->v[i]));
    free(s->v[i]);
  }
  free(s->v);
  *s = (mcp_secrets){0};
}

/* The length of the (longest) value at p, 0 when none starts there. */
static size_t secret_at(const mcp_secrets *s, const char *p) {
  for (size_t i = 0; i < s->n; i++) {
    size_t n = strlen(s->v[i]);
    if (!strncmp(p, s->v[i], n)) return n;
  }
  return 0;
}

char *mcp_secrets_redact(const mcp_secrets *s, const char *text) {
  if (!s->n) return strdup(text);
  ag_buf b;
  ag_buf_init(&b, REDACT_TEXT_CAP);
  int rc = AG_OK;
  for (const char *p = text, *run = text;; p++) {
    size_t n = *p ? secret_at(s, p) : 0;
    if (!*p || n) rc = ag_buf_append(&b, run, (size_t)(p - run));
    if (!rc && n) rc = ag_buf_appends(&b, MCP_REDACT_MARK);
    if (rc || !*p) break;
    if (n) {
      p += n - 1;
      run = p + 1;
    }
  }
  char *out = rc ? NULL : ag_buf_take(&b);
  ag_buf_free(&b);
  return out;
}
