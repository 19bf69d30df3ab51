/* Summary mode's rolling summary (see summary.h). */
#include "agents/summary.h"

#include "common/buf.h"
#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a fold or a request may hold: the entries RAM keeps are at most AGENT_MEM_BYTES and slack. */
#define SUMMARY_BUF_CAP ((size_t)64 << 20)

size_t summary_max_bytes(int tokens) { return tokens > 0 ? (size_t)tokens * 4 : 0; }

/* The first byte at or after p that starts a UTF-8 character (a cut never splits one). */
static const char *char_start(const char *p) {
  while (((unsigned char)*p & 0xC0) == 0x80) p++;
  return p;
}

/* Appends "<sender>: <text>\n" for each entry, newlines inside a text made spaces so a line is an entry. */
static int append_entries(ag_buf *b, ag_msg *const *entries, size_t n) {
  int rc = AG_OK;
  for (size_t i = 0; !rc && i < n; i++) {
    size_t at = b->len;
    rc = ag_buf_printf(b, "%s: %s\n", entries[i]->sender, entries[i]->text);
    for (char *p = b->data + at; !rc && p < b->data + b->len - 1; p++)
      if (*p == '\n' || *p == '\r') *p = ' ';
  }
  return rc;
}

char *summary_fold(const char *summary, ag_msg *const *entries, size_t n, int tokens) {
  ag_buf b;
  ag_buf_init(&b, SUMMARY_BUF_CAP);
  int rc = ag_buf_appends(&b, summary ? summary : "");
  if (!rc && b.len && b.data[b.len - 1] != '\n') rc = ag_buf_appends(&b, "\n");
  if (!rc) rc = append_entries(&b, entries, n);
  char *out = NULL;
  size_t max = summary_max_bytes(tokens);
  if (!rc) {
    const char *s = ag_buf_str(&b), *end = s + b.len, *from = s;
    if (b.len > max) {
      from = char_start(end - max);
      const char *nl = from > s && from[-1] != '\n' ? memchr(from, '\n', (size_t)(end - from)) : NULL;
      if (nl && nl + 1 < end) from = nl + 1; /* whole lines, unless the last alone is too long */
    }
    out = strdup(from);
  }
  ag_buf_free(&b);
  return out;
}

char *summary_bound(const char *text, int tokens) {
  size_t max = summary_max_bytes(tokens), len = strlen(text);
  if (len <= max) return strdup(text);
  const char *cut = text + max;
  while (cut > text && ((unsigned char)*cut & 0xC0) == 0x80) cut--; /* back to a character's start */
  return strndup(text, (size_t)(cut - text));
}

int summary_request(const char *name, const char *summary, ag_msg *const *entries, size_t n, int tokens,
                    char **system, char **user) {
  ag_buf sys, b;
  ag_buf_init(&sys, SUMMARY_BUF_CAP);
  ag_buf_init(&b, SUMMARY_BUF_CAP);
  int rc = ag_buf_printf(&sys, "You keep the running summary of a conversation that %s takes part in. Rewrite "
                         "the summary so that it also covers the new messages: keep names, facts, decisions, "
                         "promises and open questions; drop small talk. Answer with the summary only, in at "
                         "most %d tokens (about %zu characters).", name, tokens, summary_max_bytes(tokens));
  if (!rc) rc = ag_buf_printf(&b, "Summary so far:\n%s\n\nNew messages:\n", summary && summary[0] ? summary : "(none)");
  if (!rc) rc = append_entries(&b, entries, n);
  *system = rc ? NULL : ag_buf_take(&sys);
  *user = rc ? NULL : ag_buf_take(&b);
  ag_buf_free(&sys);
  ag_buf_free(&b);
  return rc;
}
