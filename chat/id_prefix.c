/* Chat ids by a unique prefix (see id_prefix.h). */
#include "chat/id_prefix.h"

#include <stdio.h>
#include <string.h>

typedef struct prefix_scan {
  const char *prefix;
  size_t len, n;
  char first[CHAT_ID_MAX];
  char listed[CHAT_PREFIX_LIST * (CHAT_ID_MAX + 32)]; /* "id (title), ..." */
  size_t used;
} prefix_scan;

static int prefix_row(const chat_info *c, void *arg) {
  prefix_scan *ps = arg;
  if (strncmp(c->id, ps->prefix, ps->len)) return 0;
  if (ps->n++ == 0) snprintf(ps->first, sizeof ps->first, "%s", c->id);
  if (ps->n <= CHAT_PREFIX_LIST && ps->used < sizeof ps->listed) {
    int k = snprintf(ps->listed + ps->used, sizeof ps->listed - ps->used, "%s%s (%.24s)", ps->n > 1 ? ", " : "",
                     c->id, c->title); /* short titles: the list fits one error message */
    if (k > 0) ps->used += (size_t)k;
  }
  return 0;
}

int chat_id_resolve(store *st, const char *arg, char out[CHAT_ID_MAX], ag_errmsg *em) {
  ag_errmsg local = {""};
  if (!em) em = &local;
  chat_info c;
  int rc = chat_info_get(st, arg, &c, em);
  if (rc != AG_ERR_NOT_FOUND || !arg[0]) {
    if (!rc) snprintf(out, CHAT_ID_MAX, "%s", c.id);
    return rc;
  }
  ag_errmsg none = *em; /* chat_info_get's "no chat 'ID'", kept for when nothing matches */
  prefix_scan ps = {.prefix = arg, .len = strlen(arg)};
  int lr = chat_list(st, NULL, prefix_row, &ps, em);
  if (lr) return lr;
  if (ps.n == 0) {
    *em = none;
    return rc;
  }
  if (ps.n > 1)
    return ag_fail(em, AG_ERR_INVALID, "chat id prefix '%s' is ambiguous: %s%s", arg, ps.listed,
                   ps.n > CHAT_PREFIX_LIST ? ", ..." : "");
  snprintf(out, CHAT_ID_MAX, "%s", ps.first);
  return AG_OK;
}
