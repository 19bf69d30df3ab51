/* Duration strings ("1h30m") to milliseconds and back (see duration.h). */
#include "world/duration.h"

#include <stdio.h>

#include "common/error.h"

static const struct {
  char unit;
  int64_t ms;
} duration_units[] = {{'d', 86400000}, {'h', 3600000}, {'m', 60000}, {'s', 1000}};

#define DURATION_N_UNITS (sizeof duration_units / sizeof *duration_units)

int duration_parse(const char *s, int64_t *ms, ag_errmsg *em) {
  const char *p = s;
  size_t next_unit = 0; /* units must come in decreasing order, each once */
  int64_t total = 0;
  if (!*p) return ag_fail(em, AG_ERR_INVALID, "empty duration (expected e.g. \"90s\", \"4h\", \"1h30m\")");
  while (*p) {
    if (*p < '0' || *p > '9')
      return ag_fail(em, AG_ERR_INVALID, "bad duration '%s': expected a number at '%s' (e.g. \"90s\", \"1h30m\")",
                     s, p);
    int64_t n = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
      n = n * 10 + (*p - '0');
      if (n > DURATION_MAX_MS) return ag_fail(em, AG_ERR_INVALID, "duration '%s' is too long (at most 36500d)", s);
    }
    size_t u = next_unit;
    while (u < DURATION_N_UNITS && duration_units[u].unit != *p) u++;
    if (u == DURATION_N_UNITS) {
      if (*p == '.')
        return ag_fail(em, AG_ERR_INVALID, "bad duration '%s': no fractions; write e.g. \"1h30m\" for 1.5h", s);
      if (*p == 'd' || *p == 'h' || *p == 'm' || *p == 's')
        return ag_fail(em, AG_ERR_INVALID, "bad duration '%s': units must come largest first, each once (d, h, m, s)",
                       s);
      return ag_fail(em, AG_ERR_INVALID, "bad duration '%s': %s; units are d, h, m, s (e.g. \"1h30m\")", s,
                     *p ? "unknown unit" : "missing unit");
    }
    if (n > DURATION_MAX_MS / duration_units[u].ms || (total += n * duration_units[u].ms) > DURATION_MAX_MS)
      return ag_fail(em, AG_ERR_INVALID, "duration '%s' is too long (at most 36500d)", s);
    next_unit = u + 1;
    p++;
  }
  if (total == 0) return ag_fail(em, AG_ERR_INVALID, "duration '%s' must be longer than zero", s);
  *ms = total;
  return AG_OK;
}

void duration_format(int64_t ms, char *out, size_t cap) {
  size_t len = 0;
  int64_t left = ms < 0 ? 0 : ms / 1000 * 1000;
  if (cap) out[0] = '\0';
  for (size_t u = 0; u < DURATION_N_UNITS && left; u++) {
    int64_t n = left / duration_units[u].ms;
    if (!n) continue;
    left -= n * duration_units[u].ms;
    if (len >= cap) break;
    int w = snprintf(out + len, len < cap ? cap - len : 0, "%lld%c", (long long)n, duration_units[u].unit);
    if (w > 0) len += (size_t)w;
  }
  if (len == 0) snprintf(out, cap, "0s");
}
