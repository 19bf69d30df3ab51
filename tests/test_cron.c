/* Five-field cron (issue 13): parsing, errors that name the field and token, and next-fire times in UTC
 * (month ends, leap years, the day-of-month / day-of-week OR rule, steps, year rollover), checked
 * against tables and against a minute-by-minute scan that uses libc's calendar. */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "common/clock.h"
#include "common/error.h"
#include "support/suite.h"
#include "support/unit.h"
#include "world/cron.h"

/* Epoch ms of an RFC 3339 instant written in a test. */
static int64_t at(const char *s) {
  int64_t ms = 0;
  if (ag_time_parse_rfc3339(s, &ms) != AG_OK) unit_fail_(__FILE__, __LINE__, "bad test time '%s'", s);
  return ms;
}

/* "YYYY-MM-DDTHH:MM" of ms. */
static void minute_str(int64_t ms, char out[32]) {
  char full[AG_TIME_LEN];
  ag_time_format(ms, full, sizeof full);
  snprintf(out, 32, "%.16s", full);
}

static cron parse_ok(int line, const char *text) {
  cron c = {0};
  ag_errmsg em = {{0}};
  if (cron_parse(text, &c, &em) != AG_OK) unit_fail_(__FILE__, line, "cron_parse(\"%s\") failed: %s", text, em.text);
  return c;
}

/* cron_next(text, after) must be want ("YYYY-MM-DDTHH:MM"), or fail when want is NULL. */
static void check_next(int line, const char *text, const char *after, const char *want) {
  cron c = parse_ok(line, text);
  int64_t next = -1;
  int rc = cron_next(&c, at(after), &next);
  char got[32] = "(none)";
  if (rc == AG_OK) minute_str(next, got);
  if (want && (rc != AG_OK || strcmp(got, want) != 0))
    unit_fail_(__FILE__, line, "next of '%s' after %s == %s (rc %d), expected %s", text, after, got, rc, want);
  if (!want && rc != AG_ERR_NOT_FOUND)
    unit_fail_(__FILE__, line, "next of '%s' after %s == %s, expected none", text, after, got);
  if (rc == AG_OK && (!cron_matches(&c, next) || next <= at(after) || next % 60000 != 0))
    unit_fail_(__FILE__, line, "next of '%s' after %s: %s does not match or is not after", text, after, got);
}

#define NEXT(text, after, want) check_next(__LINE__, text, after, want)

/* The first n fire times after start, space-separated. */
static void check_seq(int line, const char *text, const char *start, int n, const char *want) {
  cron c = parse_ok(line, text);
  char got[1024] = "";
  int64_t t = at(start);
  for (int i = 0; i < n; i++) {
    char one[32];
    if (cron_next(&c, t, &t) != AG_OK) break;
    minute_str(t, one);
    snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? " " : "", one);
  }
  if (strcmp(got, want) != 0) unit_fail_(__FILE__, line, "'%s' from %s:\n  got  %s\n  want %s", text, start, got, want);
}

#define SEQ(text, start, n, want) check_seq(__LINE__, text, start, n, want)

/* cron_parse(text) must fail with exactly message want. */
static void check_bad(int line, const char *text, const char *want) {
  cron c = {0};
  ag_errmsg em = {{0}};
  int rc = cron_parse(text, &c, &em);
  if (rc != AG_ERR_INVALID) unit_fail_(__FILE__, line, "cron_parse(\"%s\") == %d, expected AG_ERR_INVALID", text, rc);
  else if (strcmp(em.text, want) != 0)
    unit_fail_(__FILE__, line, "cron_parse(\"%s\") said\n  \"%s\", expected\n  \"%s\"", text, em.text, want);
}

#define BAD(text, want) check_bad(__LINE__, text, want)

static uint64_t bits(const int *v, int n) {
  uint64_t b = 0;
  for (int i = 0; i < n; i++) b |= (uint64_t)1 << v[i];
  return b;
}

static void parse_lists_ranges_steps(void) {
  cron c = parse_ok(__LINE__, "*/15 1-5/2 1,15,31 * *");
  CHECK_INT(c.minutes, bits((int[]){0, 15, 30, 45}, 4));
  CHECK_INT(c.hours, bits((int[]){1, 3, 5}, 3));
  CHECK_INT(c.days, bits((int[]){1, 15, 31}, 3));
  CHECK_INT(c.months, 0x1FFE);
  CHECK_INT(c.weekdays, 0x7F);
  c = parse_ok(__LINE__, "5/20 0-23/12 */10 */5 */3");
  CHECK_INT(c.minutes, bits((int[]){5, 25, 45}, 3));
  CHECK_INT(c.hours, bits((int[]){0, 12}, 2));
  CHECK_INT(c.days, bits((int[]){1, 11, 21, 31}, 4));
  CHECK_INT(c.months, bits((int[]){1, 6, 11}, 3));
  CHECK_INT(c.weekdays, bits((int[]){0, 3, 6}, 3));
  c = parse_ok(__LINE__, "59 23 31 12 0,7");
  CHECK_INT(c.weekdays, 1);
  c = parse_ok(__LINE__, "*/60 * * * *");
  CHECK_INT(c.minutes, 1);
}

static void parse_names_any_case(void) {
  cron c = parse_ok(__LINE__, "0 0 * jan,JUL,Dec mon-FRI");
  CHECK_INT(c.months, bits((int[]){1, 7, 12}, 3));
  CHECK_INT(c.weekdays, bits((int[]){1, 2, 3, 4, 5}, 5));
  c = parse_ok(__LINE__, "0 0 * * FRI-SUN");
  CHECK_INT(c.weekdays, bits((int[]){0, 5, 6}, 3));
  c = parse_ok(__LINE__, "0 0 * * sun");
  CHECK_INT(c.weekdays, 1);
  CHECK(!c.weekdays_all);
  c = parse_ok(__LINE__, "0 0 * * SUN-SAT/2");
  CHECK_INT(c.weekdays, bits((int[]){0, 2, 4, 6}, 4));
  c = parse_ok(__LINE__, "0 0 * FEB/3 *");
  CHECK_INT(c.months, bits((int[]){2, 5, 8, 11}, 4));
}

static void parse_white_space(void) {
  cron a = parse_ok(__LINE__, "  0\t9   * *\t* ");
  cron b = parse_ok(__LINE__, "0 9 * * *");
  CHECK(memcmp(&a, &b, sizeof a) == 0);
}

static void unrestricted_means_whole_range(void) {
  const char *all_days[] = {"*", "1-31", "*/1", "1-31/1", "1-15,16-31"};
  for (size_t i = 0; i < sizeof all_days / sizeof *all_days; i++) {
    char text[64];
    snprintf(text, sizeof text, "0 0 %s * *", all_days[i]);
    CHECK(parse_ok(__LINE__, text).days_all);
  }
  const char *all_weekdays[] = {"*", "0-6", "1-7", "0-7", "MON-SUN", "sun-sat", "*/1"};
  for (size_t i = 0; i < sizeof all_weekdays / sizeof *all_weekdays; i++) {
    char text[64];
    snprintf(text, sizeof text, "0 0 * * %s", all_weekdays[i]);
    CHECK(parse_ok(__LINE__, text).weekdays_all);
  }
  CHECK(!parse_ok(__LINE__, "0 0 */2 * *").days_all);
  CHECK(!parse_ok(__LINE__, "0 0 2-31 * *").days_all);
  CHECK(!parse_ok(__LINE__, "0 0 * * 1-6").weekdays_all);
}

static void bad_field_count(void) {
  BAD("", "'': expected 5 fields (minute hour day-of-month month day-of-week), got none");
  BAD("   ", "'   ': expected 5 fields (minute hour day-of-month month day-of-week), got none");
  BAD("* * * *", "'* * * *': expected 5 fields (minute hour day-of-month month day-of-week), got fewer");
  BAD("0 * * * * *", "'0 * * * * *': expected 5 fields (minute hour day-of-month month day-of-week), got more");
  BAD("@daily", "'@daily': macros are not supported; write five fields, e.g. '0 0 * * *'");
  CHECK_INT(cron_parse(NULL, &(cron){0}, NULL), AG_ERR_INVALID);
}

static void bad_values_name_field_and_token(void) {
  BAD("60 * * * *", "minute field '60': '60' is out of range 0-59");
  BAD("* 9,24 * * *", "hour field '9,24': '24' is out of range 0-23");
  BAD("* * 0 * *", "day-of-month field '0': '0' is out of range 1-31");
  BAD("* * 32 * *", "day-of-month field '32': '32' is out of range 1-31");
  BAD("* * * 0 *", "month field '0': '0' is out of range 1-12");
  BAD("* * * 13 *", "month field '13': '13' is out of range 1-12");
  BAD("* * * * 8", "day-of-week field '8': '8' is out of range 0-7");
  BAD("99999999999999999999 * * * *",
      "minute field '99999999999999999999': '99999999999999999999' is out of range 0-59");
  BAD("a * * * *", "minute field 'a': 'a' is not a number");
  BAD("* * * FOO *", "month field 'FOO': 'FOO' is not a number or a three-letter name");
  BAD("* * * * MONDAY", "day-of-week field 'MONDAY': 'MONDAY' is not a number or a three-letter name");
  BAD("* * * * MON-XYZ", "day-of-week field 'MON-XYZ': 'XYZ' is not a number or a three-letter name");
  BAD("? * * * *", "minute field '?': '?' is not a number");
  BAD("* * L * *", "day-of-month field 'L': 'L' is not a number");
  BAD("* * * * 1#2", "day-of-week field '1#2': unexpected '#2' in '1#2'");
  BAD("* * 15W * *", "day-of-month field '15W': unexpected 'W' in '15W'");
  BAD("1-2-3 * * * *", "minute field '1-2-3': unexpected '-3' in '1-2-3'");
  BAD("1- * * * *", "minute field '1-': a value is missing");
  BAD("-1 * * * *", "minute field '-1': a value is missing");
}

static void bad_lists_ranges_steps(void) {
  BAD("5-1 * * * *", "minute field '5-1': range '5-1' goes backwards");
  BAD("* * * * 5-0", "day-of-week field '5-0': range '5-0' goes backwards");
  BAD("1,,2 * * * *", "minute field '1,,2': empty item in list");
  BAD("1, * * * *", "minute field '1,': empty item in list");
  BAD(",1 * * * *", "minute field ',1': empty item in list");
  BAD("*/0 * * * *", "minute field '*/0': step in '*/0' must be between 1 and 60");
  BAD("*/61 * * * *", "minute field '*/61': step in '*/61' must be between 1 and 60");
  BAD("* */25 * * *", "hour field '*/25': step in '*/25' must be between 1 and 24");
  BAD("*/ * * * *", "minute field '*/': bad step in '*/'");
  BAD("*/x * * * *", "minute field '*/x': bad step in '*/x'");
  BAD("*/5/2 * * * *", "minute field '*/5/2': bad step in '*/5/2'");
  BAD("** * * * *", "minute field '**': unexpected '*' in '**'");
}

static void bad_never_fires(void) {
  BAD("0 0 30 2 *", "'0 0 30 2 *': never fires (no month allowed has the day of month asked for)");
  BAD("0 0 31 4,6,9,11 *", "'0 0 31 4,6,9,11 *': never fires (no month allowed has the day of month asked for)");
  BAD("0 0 31 2,4 *", "'0 0 31 2,4 *': never fires (no month allowed has the day of month asked for)");
  BAD("0 0 30,31 FEB *", "'0 0 30,31 FEB *': never fires (no month allowed has the day of month asked for)");
  /* Possible: Feb 29 exists in leap years; with a weekday the OR rule makes any month possible. */
  parse_ok(__LINE__, "0 0 29 2 *");
  parse_ok(__LINE__, "0 0 30 2 MON");
}

static void long_field_is_cut_in_message(void) {
  char text[256], want[256];
  snprintf(text, sizeof text, "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,99 * * * *");
  ag_errmsg em = {{0}};
  CHECK_INT(cron_parse(text, &(cron){0}, &em), AG_ERR_INVALID);
  snprintf(want, sizeof want, "minute field '%.40s...': '99' is out of range 0-59", text);
  CHECK_STR(em.text, want);
}

static void next_is_strictly_after(void) {
  NEXT("0 9 * * *", "2026-03-01T08:00:00Z", "2026-03-01T09:00");
  NEXT("0 9 * * *", "2026-03-01T08:59:59.999Z", "2026-03-01T09:00");
  NEXT("0 9 * * *", "2026-03-01T09:00:00Z", "2026-03-02T09:00");
  NEXT("0 9 * * *", "2026-03-01T09:00:00.001Z", "2026-03-02T09:00");
  NEXT("* * * * *", "2026-03-01T10:00:00Z", "2026-03-01T10:01");
  NEXT("* * * * *", "2026-03-01T10:00:30Z", "2026-03-01T10:01");
  NEXT("* * * * *", "2026-03-01T23:59:00Z", "2026-03-02T00:00");
}

static void next_with_steps(void) {
  NEXT("*/15 * * * *", "2026-03-01T10:07:00Z", "2026-03-01T10:15");
  NEXT("*/15 * * * *", "2026-03-01T10:45:00Z", "2026-03-01T11:00");
  NEXT("*/15 * * * *", "2026-03-01T23:50:00Z", "2026-03-02T00:00");
  NEXT("1-5/2 * * * *", "2026-03-01T10:01:00Z", "2026-03-01T10:03");
  NEXT("1-5/2 * * * *", "2026-03-01T10:05:00Z", "2026-03-01T11:01");
  SEQ("30 */6 * * *", "2026-03-01T00:00:00Z", 5,
      "2026-03-01T00:30 2026-03-01T06:30 2026-03-01T12:30 2026-03-01T18:30 2026-03-02T00:30");
  SEQ("0 0 */10 * *", "2026-01-25T00:00:00Z", 5,
      "2026-01-31T00:00 2026-02-01T00:00 2026-02-11T00:00 2026-02-21T00:00 2026-03-01T00:00");
}

static void next_over_month_ends(void) {
  NEXT("0 12 31 * *", "2026-01-31T13:00:00Z", "2026-03-31T12:00");
  NEXT("0 12 31 * *", "2026-04-01T00:00:00Z", "2026-05-31T12:00");
  NEXT("0 0 30 * *", "2026-02-01T00:00:00Z", "2026-03-30T00:00");
  SEQ("0 0 31 * *", "2026-01-01T00:00:00Z", 7,
      "2026-01-31T00:00 2026-03-31T00:00 2026-05-31T00:00 2026-07-31T00:00 2026-08-31T00:00 2026-10-31T00:00 "
      "2026-12-31T00:00");
  SEQ("0 0 28-31 2 *", "2027-01-01T00:00:00Z", 3, "2027-02-28T00:00 2028-02-28T00:00 2028-02-29T00:00");
  NEXT("0 0 1 * *", "2026-01-31T23:59:00Z", "2026-02-01T00:00");
}

static void next_over_leap_years(void) {
  NEXT("0 0 29 2 *", "2026-03-01T00:00:00Z", "2028-02-29T00:00");
  NEXT("0 0 29 2 *", "2024-02-28T12:00:00Z", "2024-02-29T00:00");
  NEXT("0 0 29 2 *", "2096-03-01T00:00:00Z", "2104-02-29T00:00"); /* 2100 is not a leap year */
  NEXT("0 0 29 2 *", "1999-12-31T00:00:00Z", "2000-02-29T00:00"); /* 2000 is */
  NEXT("0 0 * * *", "2028-02-28T00:00:00Z", "2028-02-29T00:00");
  NEXT("0 0 * * *", "2027-02-28T00:00:00Z", "2027-03-01T00:00");
  NEXT("0 0 29 2 *", "9996-03-01T00:00:00Z", NULL); /* the next is 10000-02-29 */
}

static void next_over_year_end(void) {
  NEXT("0 0 1 1 *", "2026-12-31T23:59:00Z", "2027-01-01T00:00");
  NEXT("59 23 31 12 *", "2026-12-31T23:59:00Z", "2027-12-31T23:59");
  NEXT("0 0 1 1 *", "1969-06-01T00:00:00Z", "1970-01-01T00:00");
  NEXT("0 0 * * *", "1969-12-31T23:59:59.999Z", "1970-01-01T00:00");
  NEXT("0 0 1 jun *", "2026-06-01T00:00:00Z", "2027-06-01T00:00");
}

static void next_by_weekday(void) {
  NEXT("0 9 * * 1", "2026-03-01T00:00:00Z", "2026-03-02T09:00"); /* 2026-03-01 is a Sunday */
  NEXT("0 9 * * 0", "2026-03-01T09:00:00Z", "2026-03-08T09:00");
  NEXT("0 9 * * 7", "2026-03-01T09:00:00Z", "2026-03-08T09:00");
  NEXT("0 9 * * SUN", "2026-02-28T09:00:00Z", "2026-03-01T09:00");
  NEXT("0 0 * 1 7/7", "2026-03-01T00:00:00Z", "2027-01-03T00:00"); /* 7/7 is Sunday (found by fuzz_cron) */
  SEQ("0 9 * * MON-FRI", "2026-03-05T10:00:00Z", 4,
      "2026-03-06T09:00 2026-03-09T09:00 2026-03-10T09:00 2026-03-11T09:00");
  SEQ("0 0 * * FRI-SUN", "2026-03-01T00:00:00Z", 4,
      "2026-03-06T00:00 2026-03-07T00:00 2026-03-08T00:00 2026-03-13T00:00");
}

static void day_fields_or_rule(void) {
  /* Both restricted: the 13th OR a Friday. 2026-03-06 and 2026-03-13 are Fridays. */
  SEQ("0 0 13 * 5", "2026-03-01T00:00:00Z", 5,
      "2026-03-06T00:00 2026-03-13T00:00 2026-03-20T00:00 2026-03-27T00:00 2026-04-03T00:00");
  SEQ("0 0 13 * 5", "2026-04-03T00:00:00Z", 2, "2026-04-10T00:00 2026-04-13T00:00");
  /* Only one restricted: only it counts. */
  SEQ("0 0 13 * *", "2026-03-01T00:00:00Z", 2, "2026-03-13T00:00 2026-04-13T00:00");
  SEQ("0 0 * * 5", "2026-03-01T00:00:00Z", 2, "2026-03-06T00:00 2026-03-13T00:00");
  SEQ("0 0 1-31 * MON", "2026-03-01T00:00:00Z", 2, "2026-03-02T00:00 2026-03-09T00:00");
  /* A stepped day-of-month is restricted: odd days or Mondays. */
  SEQ("0 0 */2 * MON", "2026-03-01T00:00:00Z", 4, "2026-03-02T00:00 2026-03-03T00:00 2026-03-05T00:00 2026-03-07T00:00");
  /* Feb 30 never exists, but Mondays in February do. */
  SEQ("0 0 30 2 MON", "2026-01-01T00:00:00Z", 2, "2026-02-02T00:00 2026-02-09T00:00");
  /* Month restricts both: the 1st or a Sunday, in June only. */
  SEQ("0 0 1 6 0", "2026-05-30T00:00:00Z", 3, "2026-06-01T00:00 2026-06-07T00:00 2026-06-14T00:00");
}

static void next_is_bounded(void) {
  cron never = {0}; /* not from cron_parse: no minute allowed */
  int64_t t = 0;
  CHECK_INT(cron_next(&never, 0, &t), AG_ERR_NOT_FOUND);
  cron feb30 = parse_ok(__LINE__, "0 0 * * *");
  feb30.days = 1u << 30;
  feb30.days_all = 0;
  feb30.months = 1u << 2;
  CHECK_INT(cron_next(&feb30, 0, &t), AG_ERR_NOT_FOUND);
  cron any = parse_ok(__LINE__, "* * * * *");
  CHECK_INT(cron_next(&any, INT64_MAX, &t), AG_ERR_NOT_FOUND);
  CHECK_INT(cron_next(&any, INT64_MIN, &t), AG_ERR_NOT_FOUND);
  CHECK_INT(cron_next(&any, at("9999-12-31T23:58:00Z"), &t), AG_OK);
  CHECK_INT(t, at("9999-12-31T23:59:00Z"));
  CHECK_INT(cron_next(&any, t, &t), AG_ERR_NOT_FOUND);
}

/* Independent oracle: libc's calendar and the classic rule, minute by minute. */
static int oracle_matches(const cron *c, int64_t ms) {
  time_t s = (time_t)(ms / 1000);
  struct tm tm;
  gmtime_r(&s, &tm);
  int dm = c->days >> tm.tm_mday & 1, wm = c->weekdays >> tm.tm_wday & 1, day;
  if (c->days_all && c->weekdays_all) day = 1;
  else if (c->days_all) day = wm;
  else if (c->weekdays_all) day = dm;
  else day = dm || wm;
  return day && (c->months >> (tm.tm_mon + 1) & 1) && (c->hours >> tm.tm_hour & 1) && (c->minutes >> tm.tm_min & 1);
}

static void next_agrees_with_minute_scan(void) {
  const char *exprs[] = {"*/7 */5 * * *", "0 0 13 * FRI", "15 10 31 * *", "0 12 29-31 * MON,WED",
                         "5 4 * 2 *", "0 0 1,15 * 3", "0-10/5 23 28-31 * *"};
  int64_t start = at("2027-12-20T00:00:00Z"); /* over a year end and into a leap February */
  for (size_t i = 0; i < sizeof exprs / sizeof *exprs; i++) {
    cron c;
    if (cron_parse(exprs[i], &c, NULL) != AG_OK) {
      unit_fail_(__FILE__, __LINE__, "'%s' does not parse", exprs[i]);
      continue;
    }
    int64_t t = start, want = start, end = start + (int64_t)120 * 86400000;
    for (int k = 0; k < 12; k++) {
      do want += 60000;
      while (!oracle_matches(&c, want) && want < end);
      if (want >= end) break;
      int64_t got = 0;
      CHECK_INT(cron_next(&c, t, &got), AG_OK);
      if (got != want) {
        char g[32], w[32];
        minute_str(got, g);
        minute_str(want, w);
        unit_fail_(__FILE__, __LINE__, "'%s': cron_next gave %s, the scan %s", exprs[i], g, w);
        break;
      }
      CHECK(cron_matches(&c, got));
      t = got + 30000 * (k % 2); /* sometimes from the middle of the fire minute */
    }
  }
}

SUITE_RUN((UNIT(parse_lists_ranges_steps), UNIT(parse_names_any_case), UNIT(parse_white_space),
  UNIT(unrestricted_means_whole_range), UNIT(bad_field_count), UNIT(bad_values_name_field_and_token),
  UNIT(bad_lists_ranges_steps), UNIT(bad_never_fires), UNIT(long_field_is_cut_in_message), UNIT(next_is_strictly_after),
  UNIT(next_with_steps), UNIT(next_over_month_ends), UNIT(next_over_leap_years), UNIT(next_over_year_end),
  UNIT(next_by_weekday), UNIT(day_fields_or_rule), UNIT(next_is_bounded), UNIT(next_agrees_with_minute_scan)))
