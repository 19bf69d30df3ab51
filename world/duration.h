/* Durations as world files and the console write them: "90s", "4h", "1d", "1h30m" — for a schedule's
 * `every`, a script's `wait` and the console's `/advance`. Pure functions, no clock. */
#ifndef AG_DURATION_H
#define AG_DURATION_H

#include <stddef.h>
#include <stdint.h>

struct ag_errmsg;

#define DURATION_MAX_MS ((int64_t)36500 * 86400 * 1000) /* 100 years: past it is surely a typo */
#define DURATION_LEN 32                                 /* a buffer for duration_format */

/* Parses one or more NUMBER UNIT groups, units d, h, m, s in that order, each at most once, nothing
 * else (no spaces, signs, fractions or upper case): "90s", "1h30m", "2d12h". The total must be above
 * zero and at most DURATION_MAX_MS. AG_OK and *ms, or AG_ERR_INVALID with the reason in em (the
 * caller prefixes the JSON path or argument name). */
int duration_parse(const char *s, int64_t *ms, struct ag_errmsg *em);

/* Writes ms (≥ 0) in the form duration_parse reads, largest units first, whole seconds
 * ("1d2h", "90m" is written "1h30m", 0 is "0s"); cap ≥ DURATION_LEN. */
void duration_format(int64_t ms, char *out, size_t cap);

#endif
