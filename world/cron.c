/* Five-field cron: parsing into bit sets, and the next matching minute by walking months and days
 * (see cron.h). */
#include "world/cron.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "common/error.h"

static const char *const cron_month_names[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                               "jul", "aug", "sep", "oct", "nov", "dec"};
static const char *const cron_day_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

typedef struct cron_field {
  const char *name;
  int lo, hi;              /* values as written */
  int star_hi;             /* what `*` ends at (day-of-week: 6, so 7 is not Sunday twice) */
  const char *const *names;/* names[i] is value first_name + i */
  int n_names, first_name;
} cron_field;

static const cron_field cron_fields[5] = {
    {"minute", 0, 59, 59, NULL, 0, 0},
    {"hour", 0, 23, 23, NULL, 0, 0},
    {"day-of-month", 1, 31, 31, NULL, 0, 0},
    {"month", 1, 12, 12, cron_month_names, 12, 1},
    {"day-of-week", 0, 7, 6, cron_day_names, 7, 0},
};

#define CRON_SHOW 40 /* at most this much of a field is quoted in an error */

/* The field being parsed, for error messages. */
typedef struct cron_ctx {
  const cron_field *f;
  const char *tok;
  size_t len;
  ag_errmsg *em;
} cron_ctx;

/* Fails with "<field> field '<token>': <detail>". */
static int cron_bad(const cron_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int cron_bad(const cron_ctx *x, const char *fmt, ...) {
  char detail[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  int n = x->len > CRON_SHOW ? CRON_SHOW : (int)x->len;
  return ag_fail(x->em, AG_ERR_INVALID, "%s field '%.*s%s': %s", x->f->name, n, x->tok,
                 x->len > CRON_SHOW ? "..." : "", detail);
}

/* Quotes s..end (cut to CRON_SHOW) in an error detail. */
#define CRON_Q(s, end) ((end) - (s) > CRON_SHOW ? CRON_SHOW : (int)((end) - (s))), (s)

/* Reads one value (number or name) at *p, up to end; moves *p past it. range_lo: the start of the range
 * this value ends (else -1), so that SUN ending a range from another day is 7. */
static int cron_value(const cron_ctx *x, const char **p, const char *end, int range_lo, int *v) {
  const char *s = *p, *q = s;
  if (q < end && isdigit((unsigned char)*q)) {
    long n = 0;
    for (; q < end && isdigit((unsigned char)*q); q++)
      if (n <= 1000) n = n * 10 + (*q - '0');
    if (n < x->f->lo || n > x->f->hi)
      return cron_bad(x, "'%.*s' is out of range %d-%d", CRON_Q(s, q), x->f->lo, x->f->hi);
    *v = (int)n;
  } else {
    while (q < end && isalpha((unsigned char)*q)) q++;
    int i = 0;
    while (i < x->f->n_names && !(q - s == 3 && strncasecmp(s, x->f->names[i], 3) == 0)) i++;
    if (q == s || i == x->f->n_names) {
      while (q < end && *q != '-' && *q != '/') q++;
      if (q == s) return cron_bad(x, "a value is missing");
      return cron_bad(x, "'%.*s' is not a number%s", CRON_Q(s, q), x->f->names ? " or a three-letter name" : "");
    }
    *v = x->f->first_name + i;
    if (range_lo > 0 && x->f->names == cron_day_names && *v == 0) *v = 7;
  }
  *p = q;
  return AG_OK;
}

/* One list item: `*`, `a`, `a-b`, each with an optional `/step`. */
static int cron_item(const cron_ctx *x, const char *s, const char *end, uint64_t *bits) {
  const char *p = s;
  int lo, hi, step = 1, rc;
  if (p == end) return cron_bad(x, "empty item in list");
  if (*p == '*') {
    lo = x->f->lo;
    hi = x->f->star_hi;
    p++;
  } else {
    if ((rc = cron_value(x, &p, end, -1, &lo))) return rc;
    hi = lo;
    if (p < end && *p == '-') {
      p++;
      if ((rc = cron_value(x, &p, end, lo, &hi))) return rc;
      if (hi < lo) return cron_bad(x, "range '%.*s' goes backwards", CRON_Q(s, p));
    } else if (p < end && *p == '/') {
      /* `a/step` runs to the field's end; `7/7` (Sunday) starts past `*`'s end and is Sunday alone. */
      hi = lo > x->f->star_hi ? x->f->hi : x->f->star_hi;
    }
  }
  if (p < end && *p == '/') {
    const char *q = ++p;
    long n = 0;
    for (; p < end && isdigit((unsigned char)*p); p++)
      if (n <= 1000) n = n * 10 + (*p - '0');
    if (p == q || p != end) return cron_bad(x, "bad step in '%.*s'", CRON_Q(s, end));
    if (n < 1 || n > x->f->hi - x->f->lo + 1)
      return cron_bad(x, "step in '%.*s' must be between 1 and %d", CRON_Q(s, end), x->f->hi - x->f->lo + 1);
    step = (int)n;
  }
  if (p != end) return cron_bad(x, "unexpected '%.*s' in '%.*s'", CRON_Q(p, end), CRON_Q(s, end));
  for (int v = lo; v <= hi; v += step) *bits |= (uint64_t)1 << (v == 7 && x->f->names == cron_day_names ? 0 : v);
  return AG_OK;
}

/* A whole field: items separated by commas. */
static int cron_field_parse(const cron_ctx *x, uint64_t *bits) {
  const char *p = x->tok, *end = x->tok + x->len;
  *bits = 0;
  for (;;) {
    const char *comma = memchr(p, ',', (size_t)(end - p));
    const char *item_end = comma ? comma : end;
    int rc = cron_item(x, p, item_end, bits);
    if (rc) return rc;
    if (!comma) return AG_OK;
    p = comma + 1;
  }
}

static uint64_t cron_full(const cron_field *f) {
  uint64_t all = 0;
  for (int v = f->lo; v <= f->star_hi; v++) all |= (uint64_t)1 << v;
  return all;
}

/* A schedule whose day fields allow no real date (only day-of-month counts, and no allowed month
 * has any of its days; Feb 29 counts as possible). */
static int cron_never(const cron *c) {
  if (!c->weekdays_all && !c->days_all) return 0; /* OR: every month has every weekday */
  if (c->days_all) return 0;
  for (int m = 1; m <= 12; m++) {
    if (!(c->months >> m & 1)) continue;
    int dim = ag_days_in_month(2000, m); /* a leap year */
    for (int d = 1; d <= dim; d++)
      if (c->days >> d & 1) return 0;
  }
  return 1;
}

int cron_parse(const char *text, cron *out, ag_errmsg *em) {
  const char *tok[6];
  size_t len[6], n = 0;
  const char *p = text;
  if (!text) return ag_fail(em, AG_ERR_INVALID, "missing cron expression");
  while (*p == ' ' || *p == '\t') p++;
  if (*p == '@')
    return ag_fail(em, AG_ERR_INVALID, "'%.*s': macros are not supported; write five fields, e.g. '0 0 * * *'",
                   CRON_SHOW, p);
  while (*p && n < 6) {
    tok[n] = p;
    while (*p && *p != ' ' && *p != '\t') p++;
    len[n] = (size_t)(p - tok[n]);
    n++;
    while (*p == ' ' || *p == '\t') p++;
  }
  if (n != 5)
    return ag_fail(em, AG_ERR_INVALID, "'%.*s%s': expected 5 fields (minute hour day-of-month month day-of-week), %s",
                   CRON_SHOW, text, strlen(text) > CRON_SHOW ? "..." : "",
                   n > 5 ? "got more" : n == 0 ? "got none" : "got fewer");
  uint64_t bits[5];
  for (size_t i = 0; i < 5; i++) {
    cron_ctx x = {&cron_fields[i], tok[i], len[i], em};
    int rc = cron_field_parse(&x, &bits[i]);
    if (rc) return rc;
  }
  cron c = {bits[0], (uint32_t)bits[1], (uint32_t)bits[2], (uint16_t)bits[3], (uint8_t)bits[4], 0, 0};
  c.days_all = bits[2] == cron_full(&cron_fields[2]);
  c.weekdays_all = bits[4] == cron_full(&cron_fields[4]);
  if (cron_never(&c))
    return ag_fail(em, AG_ERR_INVALID, "'%.*s': never fires (no month allowed has the day of month asked for)",
                   CRON_SHOW, text);
  *out = c;
  return AG_OK;
}

static int cron_day_matches(const cron *c, int64_t days, int mday) {
  int dm = (int)(c->days >> mday & 1), wm = c->weekdays >> ag_weekday_from_days(days) & 1;
  if (c->days_all) return wm;
  if (c->weekdays_all) return dm;
  return dm || wm;
}

/* The first allowed hour:minute at or after h0:m0 in a day; 0 when none. */
static int cron_time_in_day(const cron *c, int h0, int m0, int *minute_of_day) {
  for (int h = h0; h < 24; h++) {
    if (!(c->hours >> h & 1)) continue;
    uint64_t mins = c->minutes & (h == h0 ? ~(uint64_t)0 << m0 : ~(uint64_t)0);
    if (mins) {
      *minute_of_day = h * 60 + __builtin_ctzll(mins);
      return 1;
    }
  }
  return 0;
}

static int64_t cron_floor_div(int64_t a, int64_t b) { return a / b - (a % b < 0); }

#define CRON_LAST_YEAR 9999
#define CRON_SEARCH_YEARS 401 /* a Gregorian cycle and one: a date that exists at all recurs within it */

int cron_next(const cron *c, int64_t after_ms, int64_t *next_ms) {
  if (after_ms < ag_days_from_civil(0, 1, 1) * 86400000 || after_ms >= ag_days_from_civil(10000, 1, 1) * 86400000)
    return AG_ERR_NOT_FOUND;
  int64_t t = cron_floor_div(after_ms, 60000) + 1; /* minutes; strictly after */
  int64_t day = cron_floor_div(t, 1440), y;
  int mod = (int)(t - day * 1440), h0 = mod / 60, m0 = mod % 60, mo, d;
  ag_civil_from_days(day, &y, &mo, &d);
  for (int64_t last = y + CRON_SEARCH_YEARS; y <= last && y <= CRON_LAST_YEAR; y++, mo = 1) {
    for (; mo <= 12; mo++, d = 1, h0 = m0 = 0) {
      if (!(c->months >> mo & 1)) continue;
      for (int dim = ag_days_in_month(y, mo); d <= dim; d++, h0 = m0 = 0) {
        int64_t dn = ag_days_from_civil(y, mo, d);
        int minute;
        if (cron_day_matches(c, dn, d) && cron_time_in_day(c, h0, m0, &minute)) {
          *next_ms = (dn * 1440 + minute) * 60000;
          return AG_OK;
        }
      }
    }
  }
  return AG_ERR_NOT_FOUND;
}

int cron_matches(const cron *c, int64_t ms) {
  int64_t t = cron_floor_div(ms, 60000), day = cron_floor_div(t, 1440), y;
  int mod = (int)(t - day * 1440), mo, d;
  ag_civil_from_days(day, &y, &mo, &d);
  return (c->months >> mo & 1) && cron_day_matches(c, day, d) && (c->hours >> (mod / 60) & 1) &&
         (c->minutes >> (mod % 60) & 1);
}
