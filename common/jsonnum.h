/* Checked JSON numbers: the one way a JSON number becomes an integer. cJSON keeps every number as a
 * double (valueint saturates silently), so 1e300, 2^31, 0.5, NaN or Infinity must be refused before
 * any cast, or the cast is undefined behaviour and the value a different one. */
#ifndef AG_JSONNUM_H
#define AG_JSONNUM_H

#include <stdint.h>

struct cJSON;

/* Largest integer a double holds exactly (2^53): past it two JSON numbers may read as one. */
#define AG_JSON_INT_MAX INT64_C(9007199254740992)

/* When v is a JSON number that is whole, finite and within [min, max], writes it to *out and returns
 * AG_OK. Otherwise returns AG_ERR_INVALID (not a number, not whole, not finite) or AG_ERR_TOO_BIG
 * (whole but outside the range) and leaves *out alone. v is borrowed; min and max are clamped to
 * ±AG_JSON_INT_MAX. */
int ag_json_int(const struct cJSON *v, int64_t min, int64_t max, int64_t *out);

/* Like ag_json_int for a member of obj; AG_ERR_NOT_FOUND when obj has no member key. */
int ag_json_int_member(const struct cJSON *obj, const char *key, int64_t min, int64_t max, int64_t *out);

#endif
