/* Checked JSON numbers and NUL escapes (see jsonnum.h). Every comparison is done in double before the one cast, and
 * only on values already known to be in range, so the cast is always defined. */
#include "common/jsonnum.h"

#include "common/error.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

int ag_json_int(const cJSON *v, int64_t min, int64_t max, int64_t *out) {
  if (!cJSON_IsNumber(v)) return AG_ERR_INVALID;
  double d = v->valuedouble;
  if (!isfinite(d) || d != floor(d)) return AG_ERR_INVALID;
  if (min < -AG_JSON_INT_MAX) min = -AG_JSON_INT_MAX;
  if (max > AG_JSON_INT_MAX) max = AG_JSON_INT_MAX;
  /* Both bounds are exact in double (|bound| <= 2^53), so these comparisons are exact too. */
  if (d < (double)min || d > (double)max) return AG_ERR_TOO_BIG;
  *out = (int64_t)d;
  return AG_OK;
}

int ag_json_int_member(const cJSON *obj, const char *key, int64_t min, int64_t max, int64_t *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) return AG_ERR_NOT_FOUND;
  return ag_json_int(v, min, max, out);
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
