/* Epoch milliseconds and RFC 3339 (see clock.h). */
#include "common/clock.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

int64_t ag_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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
