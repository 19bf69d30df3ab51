/* What cJSON reads silently wrong, checked: numbers (the one way a JSON number becomes an integer —
 * cJSON keeps every number as a double and valueint saturates, so 1e300, 2^31, 0.5 or Infinity must
 * be refused before any cast, or the cast is undefined behaviour and the value a different one) and
 * strings holding \u0000 (cJSON's C strings end there, cutting the rest off without a word). */
#ifndef AG_JSONNUM_H
#define AG_JSONNUM_H

#include <stddef.h>
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

/* The offset in json[0..len) of the first \u0000 escape (or raw NUL byte) inside a string, or -1 when
 * there is none.
 * Works on the raw text (before or after parsing), so a loader can refuse the input and say where. */
long ag_json_find_nul(const char *json, size_t len);
/* AG_OK when json has no \u0000 in a string, else AG_ERR_INVALID with em saying "<label>: line L,
 * column C: a string holds \u0000 ...". */
struct ag_errmsg;
int ag_json_check_nul(const char *json, size_t len, const char *label, struct ag_errmsg *em);

/* 1-based line and column of offset off in text, for error messages. */
void ag_json_line_col(const char *text, size_t off, size_t *line, size_t *col);

#endif
