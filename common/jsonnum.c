/* Checked JSON numbers and NUL escapes (see jsonnum.h). Every comparison is done in double before the one cast, and
 * only on values already known to be in range, so the cast is always defined. */
#include "common/jsonnum.h"

#include "common/error.h"
#include "common/utf8.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* An item of ag_json_create_int: raw text that is an optional '-' and 1-19 digits, nothing else. */
static int raw_int(const cJSON *v, double *d) {
  const char *s = cJSON_IsRaw(v) ? v->valuestring : NULL;
  if (!s) return 0;
  size_t i = s[0] == '-', n = strspn(s + i, "0123456789");
  if (n == 0 || n > 19 || s[i + n]) return 0;
  *d = v->valuedouble; /* set by ag_json_create_int to the same value */
  return 1;
}

int ag_json_int(const cJSON *v, int64_t min, int64_t max, int64_t *out) {
  double d;
  if (cJSON_IsNumber(v)) d = v->valuedouble;
  else if (!raw_int(v, &d)) return AG_ERR_INVALID;
  if (!isfinite(d) || d != floor(d)) return AG_ERR_INVALID;
  if (min < -AG_JSON_INT_MAX) min = -AG_JSON_INT_MAX;
  if (max > AG_JSON_INT_MAX) max = AG_JSON_INT_MAX;
  /* Both bounds are exact in double (|bound| < 2^53), so these comparisons are exact too. */
  if (d < (double)min || d > (double)max) return AG_ERR_TOO_BIG;
  *out = (int64_t)d;
  return AG_OK;
}

int ag_json_int_member(const cJSON *obj, const char *key, int64_t min, int64_t max, int64_t *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) return AG_ERR_NOT_FOUND;
  return ag_json_int(v, min, max, out);
}

/* cJSON prints a whole number below 10^15 in magnitude exactly (%d, or %1.15g with at most 15 digits and
 * no exponent); from 10^15 on it may drop the 16th digit. */
#define PRINTS_EXACT 1e15

cJSON *ag_json_create_int(int64_t v) {
  if (v > -PRINTS_EXACT && v < PRINTS_EXACT) return cJSON_CreateNumber((double)v);
  char s[24];
  snprintf(s, sizeof s, "%" PRId64, v);
  cJSON *j = cJSON_CreateRaw(s);
  if (j) {
    j->valuedouble = (double)v; /* what the text reads as, for ag_json_int and readers of valuedouble */
    j->valueint = v > 0 ? INT32_MAX : INT32_MIN;
  }
  return j;
}

cJSON *ag_json_add_int(cJSON *obj, const char *key, int64_t v) {
  cJSON *j = ag_json_create_int(v);
  if (j && !cJSON_AddItemToObject(obj, key, j)) {
    cJSON_Delete(j);
    j = NULL;
  }
  return j;
}

int ag_json_exact_ints(cJSON *tree) {
  for (cJSON *c = tree ? tree->child : NULL; c; c = c->next) {
    if (c->child && ag_json_exact_ints(c)) return AG_ERR_NOMEM;
    int64_t n;
    if (!cJSON_IsNumber(c) || fabs(c->valuedouble) < PRINTS_EXACT ||
        ag_json_int(c, -AG_JSON_INT_MAX, AG_JSON_INT_MAX, &n))
      continue;
    char s[24];
    snprintf(s, sizeof s, "%" PRId64, n);
    char *text = cJSON_malloc(strlen(s) + 1);
    if (!text) return AG_ERR_NOMEM;
    strcpy(text, s);
    /* A raw value as ag_json_create_int makes (valuedouble and valueint kept); the key's flag kept. */
    c->type = cJSON_Raw | (c->type & cJSON_StringIsConst);
    c->valuestring = text;
  }
  return AG_OK;
}

char *ag_json_print_exact(const cJSON *item) {
  cJSON *copy = cJSON_Duplicate(item, 1);
  char *s = copy && !ag_json_exact_ints(copy) ? cJSON_PrintUnformatted(copy) : NULL;
  cJSON_Delete(copy);
  return s;
}

long ag_json_find_nul(const char *json, size_t len) {
  int in_string = 0;
  for (size_t i = 0; i < len; i++) {
    char c = json[i];
    if (!in_string) {
      in_string = c == '"';
    } else if (c == '"') {
      in_string = 0;
    } else if (c == '\0') {
      return (long)i; /* a raw NUL byte, which cJSON takes into the string as well */
    } else if (c == '\\' && i + 1 < len) {
      if (json[i + 1] == 'u' && i + 5 < len && !memcmp(json + i + 2, "0000", 4)) return (long)i;
      i++; /* the escaped character, so that \" does not end the string */
    }
  }
  return -1;
}

int ag_json_check_nul(const char *json, size_t len, const char *label, ag_errmsg *em) {
  long at = ag_json_find_nul(json, len);
  if (at < 0) return AG_OK;
  /* A C string ends at the NUL: the rest of the text would be lost without a word. */
  size_t line, col;
  ag_json_line_col(json, (size_t)at, &line, &col);
  return ag_fail(em, AG_ERR_INVALID,
                 "%s: line %zu, column %zu: a string holds \\u0000 (a NUL character), which Agora cannot keep",
                 label, line, col);
}

void ag_json_line_col(const char *text, size_t off, size_t *line, size_t *col) {
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < off; i++) {
    if (text[i] == '\n') {
      ++*line;
      *col = 1;
    } else {
      ++*col;
    }
  }
}

char *ag_json_print_line(const cJSON *j) {
  char *s = cJSON_PrintUnformatted(j);
  int nomem = 0;
  char *fixed = s ? ag_utf8_fix(s, &nomem) : NULL; /* NULL: already valid (or out of memory: as it is) */
  if (fixed) free(s), s = fixed;
  return s;
}
