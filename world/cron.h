/* Cron schedules for a world's `schedule` (issue 13): strict five-field cron, parsed once at load,
 * and the next fire time after an instant, in UTC. Pure functions: no clock, no allocation.
 *
 * SYNTAX. Exactly five fields separated by spaces or tabs: minute (0-59), hour (0-23), day-of-month
 * (1-31), month (1-12 or JAN-DEC), day-of-week (0-7 or SUN-SAT; 0 and 7 are Sunday). Each field is a
 * comma list of items; an item is `*`, a value `5` or a range `1-5`, each optionally followed by a
 * step `/N`: `1-30/2`, `*` + `/15` (every 15th value from the first), `5/15` (= `5-<last>/15`).
 * Names are three letters in any case, usable wherever a number is (`MON-FRI`, `jan,jul`); SUN ending
 * a range is 7 (`FRI-SUN`). Rejected: macros (`@daily`), `?`, `L`, `W`, `#`, backward ranges (`5-1`),
 * step 0 or longer than the field, six-field (seconds) cron.
 *
 * DAYS. A field is "unrestricted" when it covers its whole range (`*`, `1-31`, `0-6`, `MON-SUN`, `*` +
 * `/1`). When both day fields are restricted a day matches if EITHER does (classic cron); when one is
 * unrestricted only the other counts. Unlike Vixie cron, `*` + `/2` in day-of-month is restricted
 * (odd days), so with `MON` it means odd days or Mondays. A schedule that can never fire
 * (`0 0 30 2 *`) is rejected by cron_parse. */
#ifndef AG_CRON_H
#define AG_CRON_H

#include <stdint.h>

struct ag_errmsg;

/* A parsed schedule: bit i set = value i allowed. A value type (copy it freely); read-only for callers. */
typedef struct cron {
  uint64_t minutes;    /* bits 0-59 */
  uint32_t hours;      /* bits 0-23 */
  uint32_t days;       /* bits 1-31, day of month */
  uint16_t months;     /* bits 1-12 */
  uint8_t weekdays;    /* bits 0-6, 0 = Sunday (7 is folded onto 0) */
  uint8_t days_all;    /* day-of-month unrestricted */
  uint8_t weekdays_all;/* day-of-week unrestricted */
} cron;

/* Parses text into *out. AG_OK, or AG_ERR_INVALID with em naming the field and the offending token
 * ("hour field '9,25': 25 is out of range 0-23"); the caller prefixes the JSON path. */
int cron_parse(const char *text, cron *out, struct ag_errmsg *em);

/* The first minute that matches c strictly after after_ms (epoch ms, UTC) into *next_ms. AG_OK, or
 * AG_ERR_NOT_FOUND when c never fires again before the year 10000 (a schedule that passed cron_parse
 * always fires within 8 years) or after_ms is before the year 0. The search is bounded (401 years). */
int cron_next(const cron *c, int64_t after_ms, int64_t *next_ms);

/* 1 when the minute holding ms matches c. */
int cron_matches(const cron *c, int64_t ms);

#endif
