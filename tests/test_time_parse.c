/* Time text for schedules and the clock (issue 13): RFC 3339 instants with offsets and fractions,
 * the civil-date helpers under them, durations ("90s", "1h30m"), and a wait's deadline. */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "common/clock.h"
#include "common/error.h"
#include "support/suite.h"
#include "support/unit.h"
#include "world/duration.h"

static void check_instant(int line, const char *s, int64_t want) {
  int64_t ms = -12345;
  int rc = ag_time_parse_rfc3339(s, &ms);
  if (rc != AG_OK || ms != want)
    unit_fail_(__FILE__, line, "'%s' -> rc %d, %lld ms; expected %lld", s, rc, (long long)ms, (long long)want);
}

static void check_not_instant(int line, const char *s) {
  int64_t ms = -12345;
  int rc = ag_time_parse_rfc3339(s, &ms);
  if (rc != AG_ERR_INVALID || ms != -12345) unit_fail_(__FILE__, line, "'%s' accepted (%lld ms)", s, (long long)ms);
}

#define INSTANT(s, want) check_instant(__LINE__, s, want)
#define NOT_INSTANT(s) check_not_instant(__LINE__, s)

static const int64_t T0 = 1772352000000; /* 2026-03-01T08:00:00Z */

static void instants_in_utc(void) {
  INSTANT("2026-03-01T08:00:00Z", T0);
  INSTANT("2026-03-01t08:00:00z", T0);
  INSTANT("1970-01-01T00:00:00Z", 0);
  INSTANT("1969-12-31T23:59:59Z", -1000);
  INSTANT("2000-02-29T00:00:00Z", 951782400000);
  INSTANT("9999-12-31T23:59:59.999Z", 253402300799999);
  INSTANT("0000-01-01T00:00:00Z", -62167219200000);
}

static void instants_with_fractions(void) {
  INSTANT("2026-03-01T08:00:00.5Z", T0 + 500);
  INSTANT("2026-03-01T08:00:00.25Z", T0 + 250);
  INSTANT("2026-03-01T08:00:00.123Z", T0 + 123);
  INSTANT("2026-03-01T08:00:00.123999999Z", T0 + 123);
  INSTANT("2026-03-01T08:00:00.000Z", T0);
}

static void instants_with_offsets(void) {
  INSTANT("2026-03-01T09:00:00+01:00", T0);
  INSTANT("2026-03-01T03:00:00-05:00", T0);
  INSTANT("2026-03-01T13:30:00.5+05:30", T0 + 500);
  INSTANT("2026-03-01T08:00:00+00:00", T0);
  INSTANT("2026-03-01T08:00:00-00:00", T0);
  INSTANT("2026-02-28T23:00:00-09:00", T0);    /* across a month end */
  INSTANT("2027-01-01T00:30:00+01:00", 1798759800000); /* across a year end: 2026-12-31T23:30Z */
}

static void leap_second_is_next_second(void) { INSTANT("2016-12-31T23:59:60Z", 1483228800000); }

static void not_instants(void) {
  NOT_INSTANT("");
  NOT_INSTANT("2026-03-01");
  NOT_INSTANT("2026-03-01T08:00Z");
  NOT_INSTANT("2026-03-01T08:00:00");      /* no zone */
  NOT_INSTANT("2026-03-01 08:00:00Z");     /* space for T */
  NOT_INSTANT("2026-3-01T08:00:00Z");
  NOT_INSTANT("26-03-01T08:00:00Z");
  NOT_INSTANT("2026-03-01T08:00:00.Z");
  NOT_INSTANT("2026-03-01T08:00:00+0100");
  NOT_INSTANT("2026-03-01T08:00:00+01");
  NOT_INSTANT("2026-03-01T08:00:00+24:00");
  NOT_INSTANT("2026-03-01T08:00:00+01:60");
  NOT_INSTANT("2026-03-01T08:00:00Zjunk");
  NOT_INSTANT("2026-03-01T08:00:00Z ");
  NOT_INSTANT(" 2026-03-01T08:00:00Z");
  NOT_INSTANT("2026-13-01T08:00:00Z");
  NOT_INSTANT("2026-00-01T08:00:00Z");
  NOT_INSTANT("2026-02-29T08:00:00Z"); /* 2026 is not a leap year */
  NOT_INSTANT("2100-02-29T08:00:00Z");
  NOT_INSTANT("2026-04-31T08:00:00Z");
  NOT_INSTANT("2026-03-00T08:00:00Z");
  NOT_INSTANT("2026-03-01T24:00:00Z");
  NOT_INSTANT("2026-03-01T08:60:00Z");
  NOT_INSTANT("2026-03-01T08:00:61Z");
  NOT_INSTANT("+2026-03-01T08:00:00Z");
}

/* The civil helpers agree with libc's timegm/gmtime over four centuries, a day every 97 days. */
static void civil_days_agree_with_libc(void) {
  for (int64_t days = -40000; days < 110000; days += 97) {
    time_t s = (time_t)(days * 86400);
    struct tm tm;
    gmtime_r(&s, &tm);
    int64_t y;
    int m, d;
    ag_civil_from_days(days, &y, &m, &d);
    if (y != tm.tm_year + 1900 || m != tm.tm_mon + 1 || d != tm.tm_mday || ag_weekday_from_days(days) != tm.tm_wday ||
        ag_days_from_civil(y, m, d) != days) {
      unit_fail_(__FILE__, __LINE__, "day %lld: %lld-%d-%d wd %d", (long long)days, (long long)y, m, d,
                 ag_weekday_from_days(days));
      return;
    }
  }
  CHECK_INT(ag_days_in_month(2024, 2), 29);
  CHECK_INT(ag_days_in_month(2026, 2), 28);
  CHECK_INT(ag_days_in_month(1900, 2), 28);
  CHECK_INT(ag_days_in_month(2000, 2), 29);
  CHECK_INT(ag_days_in_month(2026, 4), 30);
  CHECK_INT(ag_days_in_month(2026, 12), 31);
}

static void check_duration(int line, const char *s, int64_t want) {
  int64_t ms = 0;
  ag_errmsg em = {{0}};
  int rc = duration_parse(s, &ms, &em);
  if (rc != AG_OK || ms != want)
    unit_fail_(__FILE__, line, "'%s' -> rc %d (%s), %lld ms; expected %lld", s, rc, em.text, (long long)ms,
               (long long)want);
}

static void check_bad_duration(int line, const char *s, const char *want) {
  int64_t ms = -7;
  ag_errmsg em = {{0}};
  int rc = duration_parse(s, &ms, &em);
  if (rc != AG_ERR_INVALID || ms != -7) unit_fail_(__FILE__, line, "'%s' accepted: %lld", s, (long long)ms);
  else if (strcmp(em.text, want) != 0) unit_fail_(__FILE__, line, "'%s' said \"%s\", expected \"%s\"", s, em.text, want);
}

#define DURATION(s, want) check_duration(__LINE__, s, want)
#define BAD_DURATION(s, want) check_bad_duration(__LINE__, s, want)

static void durations(void) {
  DURATION("90s", 90000);
  DURATION("1s", 1000);
  DURATION("15m", 900000);
  DURATION("4h", 14400000);
  DURATION("1d", 86400000);
  DURATION("1h30m", 5400000);
  DURATION("2d12h", 216000000);
  DURATION("1d2h3m4s", 93784000);
  DURATION("0h30m", 1800000);
  DURATION("007m", 420000);
  DURATION("36500d", DURATION_MAX_MS);
}

static void bad_durations(void) {
  BAD_DURATION("", "empty duration (expected e.g. \"90s\", \"4h\", \"1h30m\")");
  BAD_DURATION("90", "bad duration '90': missing unit; units are d, h, m, s (e.g. \"1h30m\")");
  BAD_DURATION("4x", "bad duration '4x': unknown unit; units are d, h, m, s (e.g. \"1h30m\")");
  BAD_DURATION("4H", "bad duration '4H': unknown unit; units are d, h, m, s (e.g. \"1h30m\")");
  BAD_DURATION("1w", "bad duration '1w': unknown unit; units are d, h, m, s (e.g. \"1h30m\")");
  BAD_DURATION("4hours", "bad duration '4hours': expected a number at 'ours' (e.g. \"90s\", \"1h30m\")");
  BAD_DURATION("h", "bad duration 'h': expected a number at 'h' (e.g. \"90s\", \"1h30m\")");
  BAD_DURATION("-5m", "bad duration '-5m': expected a number at '-5m' (e.g. \"90s\", \"1h30m\")");
  BAD_DURATION("1.5h", "bad duration '1.5h': no fractions; write e.g. \"1h30m\" for 1.5h");
  BAD_DURATION("1h 30m", "bad duration '1h 30m': expected a number at ' 30m' (e.g. \"90s\", \"1h30m\")");
  BAD_DURATION("30m1h", "bad duration '30m1h': units must come largest first, each once (d, h, m, s)");
  BAD_DURATION("1h1h", "bad duration '1h1h': units must come largest first, each once (d, h, m, s)");
  BAD_DURATION("0s", "duration '0s' must be longer than zero");
  BAD_DURATION("0h0m", "duration '0h0m' must be longer than zero");
  BAD_DURATION("36500d1s", "duration '36500d1s' is too long (at most 36500d)");
  BAD_DURATION("99999999999999999999999s", "duration '99999999999999999999999s' is too long (at most 36500d)");
}

static void durations_formatted(void) {
  char out[DURATION_LEN];
  const struct {
    int64_t ms;
    const char *text;
  } cases[] = {{0, "0s"},           {999, "0s"},         {1000, "1s"},       {90000, "1m30s"},
               {5400000, "1h30m"},  {86400000, "1d"},    {93784000, "1d2h3m4s"}, {DURATION_MAX_MS, "36500d"},
               {-5, "0s"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    duration_format(cases[i].ms, out, sizeof out);
    CHECK_STR(out, cases[i].text);
    int64_t back = 0;
    if (cases[i].ms >= 1000) {
      CHECK_INT(duration_parse(out, &back, NULL), AG_OK);
      CHECK_INT(back, cases[i].ms / 1000 * 1000);
    }
  }
  char tiny[4];
  duration_format(93784000, tiny, sizeof tiny);
  CHECK_STR(tiny, "1d2");
}

/* A wait's deadline on the realtime clock: now plus ms, its nanoseconds carried into seconds. */
static void deadlines(void) {
  static const long waits[] = {0, 50, 999, 1000, 1500, 61999};
  for (size_t i = 0; i < sizeof waits / sizeof *waits; i++) {
    struct timespec before, d, after;
    clock_gettime(CLOCK_REALTIME, &before);
    ag_deadline_in(waits[i], &d);
    clock_gettime(CLOCK_REALTIME, &after);
    int64_t ns = (int64_t)d.tv_sec * 1000000000 + d.tv_nsec, wait_ns = (int64_t)waits[i] * 1000000;
    CHECK(d.tv_nsec >= 0 && d.tv_nsec < 1000000000L);
    CHECK(ns >= (int64_t)before.tv_sec * 1000000000 + before.tv_nsec + wait_ns);
    CHECK(ns <= (int64_t)after.tv_sec * 1000000000 + after.tv_nsec + wait_ns);
  }
}

SUITE_RUN((UNIT(instants_in_utc), UNIT(instants_with_fractions), UNIT(instants_with_offsets),
  UNIT(leap_second_is_next_second), UNIT(not_instants), UNIT(civil_days_agree_with_libc), UNIT(durations),
  UNIT(bad_durations), UNIT(durations_formatted), UNIT(deadlines)))
