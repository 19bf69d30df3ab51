/* Wall-clock time as Agora stores and prints it: milliseconds since the Unix epoch, and RFC 3339 UTC
 * with milliseconds ("2026-11-22T10:00:00.123Z") in transcripts, snapshots and listings. */
#ifndef AG_CLOCK_H
#define AG_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define AG_TIME_LEN 32 /* a buffer for ag_time_format */

int64_t ag_now_ms(void);
/* *ts = now + ms on CLOCK_REALTIME: the deadline pthread_cond_timedwait takes. */
void ag_deadline_in(long ms, struct timespec *ts);
/* Writes ms as RFC 3339 UTC with milliseconds into out (cap ≥ AG_TIME_LEN). */
void ag_time_format(int64_t ms, char *out, size_t cap);
/* Parses "YYYY-MM-DDTHH:MM:SS[.fff]Z"; -1 when s is not such a time. */
int64_t ag_time_parse(const char *s);

/* Civil (proleptic Gregorian, UTC) dates as day numbers: days since 1970-01-01 for year-month-day
 * (month 1-12, day 1-31; not range-checked), and back. Exact for years -1000000..1000000. */
int64_t ag_days_from_civil(int64_t y, int m, int d);
void ag_civil_from_days(int64_t days, int64_t *y, int *m, int *d);
/* Days in month m (1-12) of year y, leap years included. */
int ag_days_in_month(int64_t y, int m);
/* Day of the week of a day number: 0 = Sunday ... 6 = Saturday. */
int ag_weekday_from_days(int64_t days);

/* Parses one RFC 3339 instant ("2026-03-01T08:00:00Z", "2026-03-01t09:30:00.25+01:30") into epoch ms:
 * 'T' or 't', 'Z'/'z' or a +hh:mm / -hh:mm offset, fractional seconds of any length (cut to
 * milliseconds), days checked against the month, years 0000-9999. A leap second (:60) counts as the
 * next second. AG_OK, or AG_ERR_INVALID when s is not such an instant (*ms untouched). */
int ag_time_parse_rfc3339(const char *s, int64_t *ms);

#endif
