/* `{{name}}` rendering and load-time checking against a two-layer variable table (see template.h). */
#include "world/template.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/error.h"

typedef struct template_var {
  char *name;  /* owned */
  char *value; /* owned; NULL = declared, no value yet */
  int builtin;
} template_var;

struct template_vars {
  template_var *items;
  size_t n, alloc;
  /* The minute date, time and weekday were last set for (has_minute): every prompt sets them, and the
   * same minute is not formatted and copied again. */
  int has_minute;
  int64_t minute;
};

#define TEMPLATE_SHOW 40        /* at most this much of a bad placeholder is quoted */
#define TEMPLATE_KNOWN_LIST 300 /* bytes of "known: ..." in an unknown-variable error */

int template_vars_new(template_vars **out) {
  *out = calloc(1, sizeof **out);
  return *out ? AG_OK : AG_ERR_NOMEM;
}

void template_vars_free(template_vars *v) {
  if (!v) return;
  for (size_t i = 0; i < v->n; i++) {
    free(v->items[i].name);
    free(v->items[i].value);
  }
  free(v->items);
  free(v);
}

int template_name_valid(const char *name) {
  size_t n = 0;
  for (const char *p = name; *p; p++, n++) {
    char c = *p;
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (n > 0 && c >= '0' && c <= '9');
    if (!ok) return 0;
  }
  return n > 0 && n <= TEMPLATE_NAME_MAX;
}

/* The entry for name (len bytes) in one layer, or NULL. */
static template_var *template_find(const template_vars *v, const char *name, size_t len, int builtin) {
  for (size_t i = 0; i < v->n; i++)
    if (v->items[i].builtin == builtin && strlen(v->items[i].name) == len && memcmp(v->items[i].name, name, len) == 0)
      return &v->items[i];
  return NULL;
}

static int template_put(template_vars *v, const char *name, const char *value, int builtin) {
  if (!template_name_valid(name)) return AG_ERR_INVALID;
  if (builtin && (!strcmp(name, "date") || !strcmp(name, "time") || !strcmp(name, "weekday")))
    v->has_minute = 0; /* set by hand: the next template_vars_set_time sets it back */
  char *copy = value ? strdup(value) : NULL;
  if (value && !copy) return AG_ERR_NOMEM;
  template_var *e = template_find(v, name, strlen(name), builtin);
  if (e) {
    free(e->value);
    e->value = copy;
    return AG_OK;
  }
  if (v->n == v->alloc) {
    size_t n = v->alloc ? v->alloc * 2 : 16;
    template_var *items = realloc(v->items, n * sizeof *items);
    if (!items) goto nomem;
    v->items = items;
    v->alloc = n;
  }
  char *name_copy = strdup(name);
  if (!name_copy) goto nomem;
  v->items[v->n++] = (template_var){name_copy, copy, builtin};
  return AG_OK;
nomem:
  free(copy);
  return AG_ERR_NOMEM;
}

int template_vars_set(template_vars *v, const char *name, const char *value) {
  return template_put(v, name, value, 0);
}

int template_vars_set_builtin(template_vars *v, const char *name, const char *value) {
  return template_put(v, name, value, 1);
}

int template_vars_set_time(template_vars *v, int64_t ms) {
  static const char *const weekdays[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                         "Thursday", "Friday", "Saturday"};
  int64_t day = ms / 86400000 - (ms % 86400000 < 0), y;
  int64_t minute = (ms - day * 86400000) / 60000;
  if (v->has_minute && v->minute == day * 1440 + minute) return AG_OK;
  int m, d;
  ag_civil_from_days(day, &y, &m, &d);
  char date[32], hhmm[8];
  snprintf(date, sizeof date, "%04lld-%02d-%02d", (long long)y, m, d);
  snprintf(hhmm, sizeof hhmm, "%02d:%02d", (int)(minute / 60), (int)(minute % 60));
  int rc = template_put(v, "date", date, 1);
  if (!rc) rc = template_put(v, "time", hhmm, 1);
  if (!rc) rc = template_put(v, "weekday", weekdays[ag_weekday_from_days(day)], 1);
  v->has_minute = !rc;
  v->minute = day * 1440 + minute;
  return rc;
}

/* "unknown variable 'x' (known: a, b, c)": world names first, then built-ins not shadowed by them. */
static int template_unknown(const template_vars *v, const char *name, size_t len, ag_errmsg *em) {
  char known[TEMPLATE_KNOWN_LIST + 8] = "";
  size_t used = 0;
  for (int builtin = 0; builtin <= 1; builtin++) {
    for (size_t i = 0; i < v->n; i++) {
      const template_var *e = &v->items[i];
      if (e->builtin != builtin || (builtin && template_find(v, e->name, strlen(e->name), 0))) continue;
      size_t n = strlen(e->name) + (used ? 2 : 0);
      if (used + n > TEMPLATE_KNOWN_LIST) {
        strcpy(known + used, ", ...");
        goto done;
      }
      used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", used ? ", " : "", e->name);
    }
  }
done:
  return ag_fail(em, AG_ERR_INVALID, "unknown variable '%.*s' (known: %s)", (int)len, name, used ? known : "none");
}

/* One placeholder `{{...}}` from open to close (at the `}}`): checked, and its value appended to out
 * when out is not NULL. */
static int template_one(const char *open, const char *close, const template_vars *v, ag_buf *out, ag_errmsg *em) {
  const char *s = open + 2, *e = close;
  while (s < e && (*s == ' ' || *s == '\t')) s++;
  while (e > s && (e[-1] == ' ' || e[-1] == '\t')) e--;
  size_t len = (size_t)(e - s), whole = (size_t)(close + 2 - open);
  int show = whole > TEMPLATE_SHOW ? TEMPLATE_SHOW : (int)whole;
  if (len == 0) return ag_fail(em, AG_ERR_INVALID, "empty variable name in '%.*s'", show, open);
  char name[TEMPLATE_NAME_MAX + 1];
  if (len > TEMPLATE_NAME_MAX) goto bad;
  memcpy(name, s, len);
  name[len] = '\0';
  if (!template_name_valid(name)) goto bad;
  const template_var *var = template_find(v, name, len, 0);
  if (!var) var = template_find(v, name, len, 1);
  if (!var) return template_unknown(v, name, len, em);
  if (!out) return AG_OK;
  if (!var->value) return ag_fail(em, AG_ERR_STATE, "variable '%s' has no value here", name);
  return ag_buf_appends(out, var->value); /* AG_ERR_TOO_BIG is explained by the caller */
bad:
  return ag_fail(em, AG_ERR_INVALID, "bad variable name in '%.*s%s' (a letter or _, then letters, digits, _)", show,
                 open, whole > TEMPLATE_SHOW ? "..." : "");
}

/* Walks text once; out NULL = check only. */
static int template_scan(const char *text, const template_vars *v, ag_buf *out, ag_errmsg *em) {
  const char *p = text;
  int rc = AG_OK;
  for (;;) {
    const char *open = strstr(p, "{{");
    size_t plain = open ? (size_t)(open - p) : strlen(p);
    if (out && (rc = ag_buf_append(out, p, plain))) break;
    if (!open) return AG_OK;
    if (open[2] == '{' && open[3] == '{') {
      if (out && (rc = ag_buf_append(out, "{{", 2))) break;
      p = open + 4;
      continue;
    }
    const char *close = strstr(open + 2, "}}");
    if (!close) {
      size_t rest = strlen(open);
      return ag_fail(em, AG_ERR_INVALID, "'{{' with no '}}' after it at byte %zu: '%.*s%s'", (size_t)(open - text) + 1,
                     rest > TEMPLATE_SHOW ? TEMPLATE_SHOW : (int)rest, open, rest > TEMPLATE_SHOW ? "..." : "");
    }
    if ((rc = template_one(open, close, v, out, em))) break;
    p = close + 2;
  }
  if (rc == AG_ERR_TOO_BIG) return ag_fail(em, rc, "rendered text is longer than %zu bytes", out->cap);
  return rc;
}

int template_check(const char *text, const template_vars *v, ag_errmsg *em) {
  return template_scan(text, v, NULL, em);
}

int template_render(const char *text, const template_vars *v, ag_buf *out, ag_errmsg *em) {
  return template_scan(text, v, out, em);
}
