/* Epoch milliseconds and RFC 3339 (see clock.h). */
#include "common/clock.h"
#include "common/error.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

int64_t ag_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void ag_deadline_in(long ms, struct timespec *ts) {
  clock_gettime(CLOCK_REALTIME, ts);
  ts->tv_sec += ms / 1000;
  ts->tv_nsec += (ms % 1000) * 1000000L;
  if (ts->tv_nsec >= 1000000000L) ts->tv_sec++, ts->tv_nsec -= 1000000000L;
}

void ag_time_format(int64_t ms, char *out, size_t cap) {
  time_t sec = (time_t)(ms / 1000);
  struct tm tm;
  gmtime_r(&sec, &tm);
  char base[32];
  strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(out, cap, "%s.%03dZ", base, (int)(ms % 1000));
}

int64_t ag_time_parse(const char *s) {
  int y, mo, d, h, mi, sec, ms = 0, n = 0;
  if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6) return -1;
  const char *p = s + n;
  if (*p == '.') {
    int digits = 0;
    p++;
    while (*p >= '0' && *p <= '9') {
      if (digits < 3) ms = ms * 10 + (*p - '0');
      digits++;
      p++;
    }
    if (!digits) return -1;
    while (digits < 3) {
      ms *= 10;
      digits++;
    }
  }
  if (strcmp(p, "Z") != 0) return -1;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return -1;
  struct tm tm = {0};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  return (int64_t)timegm(&tm) * 1000 + ms;
}

/* Howard Hinnant's days_from_civil: eras of 400 years keep it exact and branch-light. */
int64_t ag_days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void ag_civil_from_days(int64_t days, int64_t *y, int *m, int *d) {
  days += 719468;
  int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  int64_t doe = days - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  *d = (int)(doy - (153 * mp + 2) / 5 + 1);
  *m = (int)(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2);
}

int ag_days_in_month(int64_t y, int m) {
  static const int len[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m == 2) return (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)) ? 29 : 28;
  return len[m - 1];
}

int ag_weekday_from_days(int64_t days) {
  int64_t w = (days + 4) % 7; /* 1970-01-01 was a Thursday */
  return (int)(w < 0 ? w + 7 : w);
}

/* Reads exactly n digits at *p into *v and moves *p past them; 0 when they are not all digits. */
static int clock_digits(const char **p, int n, int *v) {
  *v = 0;
  for (int i = 0; i < n; i++) {
    char c = (*p)[i];
    if (c < '0' || c > '9') return 0;
    *v = *v * 10 + (c - '0');
  }
  *p += n;
  return 1;
}

int ag_time_parse_rfc3339(const char *s, int64_t *ms) {
  const char *p = s;
  int y, mo, d, h, mi, sec, frac = 0, off = 0;
  if (!clock_digits(&p, 4, &y) || *p++ != '-' || !clock_digits(&p, 2, &mo) || *p++ != '-' ||
      !clock_digits(&p, 2, &d) || (*p != 'T' && *p != 't'))
    return AG_ERR_INVALID;
  p++;
  if (!clock_digits(&p, 2, &h) || *p++ != ':' || !clock_digits(&p, 2, &mi) || *p++ != ':' ||
      !clock_digits(&p, 2, &sec))
    return AG_ERR_INVALID;
  if (*p == '.') {
    int digits = 0;
    for (p++; *p >= '0' && *p <= '9'; p++, digits++)
      if (digits < 3) frac = frac * 10 + (*p - '0');
    if (!digits) return AG_ERR_INVALID;
    for (; digits < 3; digits++) frac *= 10;
  }
  if (*p == 'Z' || *p == 'z') {
    p++;
  } else if (*p == '+' || *p == '-') {
    int sign = *p++ == '-' ? -1 : 1, oh, om;
    if (!clock_digits(&p, 2, &oh) || *p++ != ':' || !clock_digits(&p, 2, &om) || oh > 23 || om > 59)
      return AG_ERR_INVALID;
    off = sign * (oh * 60 + om);
  } else {
    return AG_ERR_INVALID;
  }
  if (*p || mo < 1 || mo > 12 || d < 1 || d > ag_days_in_month(y, mo) || h > 23 || mi > 59 || sec > 60)
    return AG_ERR_INVALID;
  int64_t secs = ag_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - (int64_t)off * 60;
  *ms = secs * 1000 + frac;
  return AG_OK;
}
