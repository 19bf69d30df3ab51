/* What cJSON reads silently wrong, checked: numbers (the one way a JSON number becomes an integer —
 * cJSON keeps every number as a double and valueint saturates, so 1e300, 2^31, 0.5 or Infinity must
 * be refused before any cast, or the cast is undefined behaviour and the value a different one) and
 * strings holding \u0000 (cJSON's C strings end there, cutting the rest off without a word). */
#ifndef AG_JSONNUM_H
#define AG_JSONNUM_H

#include <stddef.h>
#include <stdint.h>

struct cJSON;

/* Largest exact JSON integer, 2^53 - 1 (JavaScript's MAX_SAFE_INTEGER): 2^53 is also what 2^53 + 1 reads
 * as, so from 2^53 on two JSON numbers may read as one. */
#define AG_JSON_INT_MAX INT64_C(9007199254740991)

/* When v is a JSON number that is whole, finite and within [min, max], writes it to *out and returns
 * AG_OK (an integer made by ag_json_create_int counts as a number here). Otherwise returns AG_ERR_INVALID (not a number, not whole, not finite) or AG_ERR_TOO_BIG
 * (whole but outside the range) and leaves *out alone. v is borrowed; min and max are clamped to
 * ±AG_JSON_INT_MAX. */
int ag_json_int(const struct cJSON *v, int64_t min, int64_t max, int64_t *out);

/* Like ag_json_int for a member of obj; AG_ERR_NOT_FOUND when obj has no member key. */
int ag_json_int_member(const struct cJSON *obj, const char *key, int64_t min, int64_t max, int64_t *out);

/* Writing integers exactly. cJSON prints a number with 15 significant digits whenever that reads back
 * within a relative epsilon, so 9000000001999981 goes out as 9.00000000199998e+15 (1 off), and
 * +-Infinity as null. ag_json_create_int makes a plain number below 10^15 in magnitude (which cJSON
 * prints exactly) and from there a cJSON raw value holding the exact decimal text (valid JSON that reads
 * back as the same number), with valuedouble set: cJSON_IsNumber is false for it, ag_json_int reads it.
 * Returns a new item (caller owns; NULL when out of memory). Readers take only +-AG_JSON_INT_MAX. */
struct cJSON *ag_json_create_int(int64_t v);
/* Adds ag_json_create_int(v) to obj under key; returns the item (owned by obj) or NULL. */
struct cJSON *ag_json_add_int(struct cJSON *obj, const char *key, int64_t v);
/* Before printing a tree parsed from text: every number below tree that is whole and within
 * +-AG_JSON_INT_MAX becomes what ag_json_create_int makes of it, so the tree prints back what it read.
 * Other numbers are left to cJSON. AG_OK or AG_ERR_NOMEM (the tree is then partly converted). */
int ag_json_exact_ints(struct cJSON *tree);
/* cJSON_PrintUnformatted of a copy of item after ag_json_exact_ints (caller frees; NULL without memory). */
char *ag_json_print_exact(const struct cJSON *item);
/* cJSON_PrintUnformatted of j (borrowed) as valid UTF-8, a stray byte made U+FFFD (cJSON copies bytes as
 * they are): the one-line JSON every door prints (caller frees; NULL without memory). */
char *ag_json_print_line(const struct cJSON *j);

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
