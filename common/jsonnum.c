/* Checked JSON numbers (see jsonnum.h). Every comparison is done in double before the one cast, and
 * only on values already known to be in range, so the cast is always defined. */
#include "common/jsonnum.h"

#include "common/error.h"

#include <cjson/cJSON.h>
#include <math.h>

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
