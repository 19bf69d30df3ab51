/* The schedule's priority queue (issue 13): a simulated week of cron + every + at yields the exact
 * sequence of fire times, however the clock is advanced; ties, caps, bounds and bad input. */
#include <stdio.h>
#include <stdlib.h>

#include "common/clock.h"
#include "common/error.h"
#include "support/suite.h"
#include "support/unit.h"
#include "world/schedule.h"

static int64_t at(const char *s) {
  int64_t ms = 0;
  if (ag_time_parse_rfc3339(s, &ms) != AG_OK) unit_fail_(__FILE__, __LINE__, "bad test time '%s'", s);
  return ms;
}

/* Appends " MM-DDTHH:MM#id" for a fire. */
static void log_fire(char *log, size_t cap, const schedule_fire *f) {
  char ts[AG_TIME_LEN];
  ag_time_format(f->at_ms, ts, sizeof ts);
  size_t len = strlen(log);
  snprintf(log + len, cap - len, "%s%.11s#%zu", len ? " " : "", ts + 5, f->id);
}

static size_t add_cron(schedule *s, const char *text) {
  cron c;
  size_t id = 99;
  CHECK_INT(cron_parse(text, &c, NULL), AG_OK);
  CHECK_INT(schedule_add_cron(s, &c, &id), AG_OK);
  return id;
}

/* The example: a cron at 09:00 (id 0), every 4h (id 1), one `at` (id 2), from Sunday
 * 2026-03-01T08:00Z until 2026-03-08T00:00Z (exclusive). */
static schedule *week_make(void) {
  schedule *s = NULL;
  size_t id = 99;
  CHECK_INT(schedule_new(at("2026-03-01T08:00:00Z"), &s), AG_OK);
  CHECK_INT(add_cron(s, "0 9 * * *"), 0);
  CHECK_INT(schedule_add_every(s, 4 * 3600000, &id), AG_OK);
  CHECK_INT(id, 1);
  CHECK_INT(schedule_add_at(s, at("2026-03-03T12:00:00Z"), &id), AG_OK);
  CHECK_INT(id, 2);
  return s;
}

#define DAY(d) d "T00:00#1 " d "T04:00#1 " d "T08:00#1 " d "T09:00#0 " d "T12:00#1 " d "T16:00#1 " d "T20:00#1"

static const char WEEK[] = "03-01T09:00#0 03-01T12:00#1 03-01T16:00#1 03-01T20:00#1 " DAY("03-02") " "
                           "03-03T00:00#1 03-03T04:00#1 03-03T08:00#1 03-03T09:00#0 03-03T12:00#1 03-03T12:00#2 "
                           "03-03T16:00#1 03-03T20:00#1 " DAY("03-04") " " DAY("03-05") " " DAY("03-06") " "
                           DAY("03-07");

/* Virtual mode: jump to the next due instant, take what is due there, until `until`. */
static void week_by_jumps(void) {
  schedule *s = week_make();
  int64_t until = at("2026-03-08T00:00:00Z"), due = 0;
  char log[4096] = "";
  int jumps = 0;
  while (schedule_next_due(s, &due) == AG_OK && due < until) {
    schedule_fire fires[4];
    size_t n = 0;
    CHECK_INT(schedule_advance(s, due, fires, 4, &n), AG_OK);
    CHECK(n >= 1);
    CHECK_INT(schedule_now(s), due);
    for (size_t i = 0; i < n; i++) {
      CHECK_INT(fires[i].at_ms, due);
      log_fire(log, sizeof log, &fires[i]);
    }
    jumps++;
  }
  CHECK_STR(log, WEEK);
  CHECK_INT(jumps, 46); /* 47 fires, two of them at the same instant */
  CHECK_INT(due, until);
  schedule_free(s);
}

/* One advance over the whole week returns every occurrence in the same order; a small cap returns
 * them in pieces, the clock stopping at the last one written. */
static void week_in_one_advance_and_in_pieces(void) {
  int64_t until = at("2026-03-08T00:00:00Z") - 1;
  const size_t caps[] = {100, 5, 1};
  for (size_t k = 0; k < sizeof caps / sizeof *caps; k++) {
    schedule *s = week_make();
    char log[4096] = "";
    schedule_fire fires[100];
    size_t n = 0, total = 0;
    do {
      CHECK_INT(schedule_advance(s, until, fires, caps[k], &n), AG_OK);
      for (size_t i = 0; i < n; i++) log_fire(log, sizeof log, &fires[i]);
      total += n;
      /* Stopped early (more due) at the last fire written, or done at until. */
      if (schedule_now(s) != until) CHECK(n == caps[k] && schedule_now(s) == fires[n - 1].at_ms);
    } while (n == caps[k]);
    CHECK_STR(log, WEEK);
    CHECK_INT(total, 47);
    CHECK_INT(schedule_now(s), until);
    schedule_free(s);
  }
}

static void cron_at_the_start_fires_at_the_start(void) {
  schedule *s = NULL;
  CHECK_INT(schedule_new(at("2026-03-01T09:00:00Z"), &s), AG_OK);
  add_cron(s, "0 9 * * *");
  int64_t due = 0;
  CHECK_INT(schedule_next_due(s, &due), AG_OK);
  CHECK_INT(due, at("2026-03-01T09:00:00Z"));
  schedule_free(s);
  /* A clock inside the minute: the next whole match, not the minute already begun. */
  CHECK_INT(schedule_new(at("2026-03-01T09:00:00.001Z"), &s), AG_OK);
  add_cron(s, "0 9 * * *");
  CHECK_INT(schedule_next_due(s, &due), AG_OK);
  CHECK_INT(due, at("2026-03-02T09:00:00Z"));
  schedule_free(s);
}

static void at_items(void) {
  schedule *s = NULL;
  size_t id;
  CHECK_INT(schedule_new(at("2026-03-01T08:00:00Z"), &s), AG_OK);
  CHECK_INT(schedule_add_at(s, at("2026-03-01T07:59:59.999Z"), &id), AG_OK); /* past: never */
  CHECK_INT(schedule_add_at(s, at("2026-03-01T08:00:00Z"), &id), AG_OK);
  CHECK_INT(schedule_add_at(s, at("2026-03-01T08:00:00.500Z"), NULL), AG_OK);
  schedule_fire f[8];
  size_t n = 0;
  CHECK_INT(schedule_advance(s, at("2026-03-01T08:00:00Z"), f, 8, &n), AG_OK);
  CHECK_INT(n, 1);
  CHECK_INT(f[0].id, 1);
  CHECK_INT(schedule_advance(s, at("2026-03-01T08:00:00Z"), f, 8, &n), AG_OK); /* already taken */
  CHECK_INT(n, 0);
  CHECK_INT(schedule_advance(s, at("2027-01-01T00:00:00Z"), f, 8, &n), AG_OK);
  CHECK_INT(n, 1);
  CHECK_INT(f[0].id, 2);
  CHECK_INT(f[0].at_ms, at("2026-03-01T08:00:00.500Z"));
  int64_t due = 0;
  CHECK_INT(schedule_next_due(s, &due), AG_ERR_NOT_FOUND);
  schedule_free(s);
}

/* Items added later count from the clock as it is then. */
static void every_counts_from_when_added(void) {
  schedule *s = NULL;
  CHECK_INT(schedule_new(0, &s), AG_OK);
  schedule_fire f[8];
  size_t n = 0;
  CHECK_INT(schedule_advance(s, 5000, f, 8, &n), AG_OK);
  CHECK_INT(n, 0);
  CHECK_INT(schedule_add_every(s, 90000, NULL), AG_OK);
  CHECK_INT(schedule_advance(s, 5000 + 3 * 90000, f, 8, &n), AG_OK);
  CHECK_INT(n, 3);
  CHECK_INT(f[0].at_ms, 95000);
  CHECK_INT(f[1].at_ms, 185000);
  CHECK_INT(f[2].at_ms, 275000);
  schedule_free(s);
}

/* Fifty items with periods of 1..50 minutes over a day: every occurrence once, in (time, id) order. */
static void many_items_stay_ordered(void) {
  schedule *s = NULL;
  CHECK_INT(schedule_new(0, &s), AG_OK);
  for (int p = 50; p >= 1; p--) CHECK_INT(schedule_add_every(s, (int64_t)p * 60000, NULL), AG_OK);
  size_t cap = 20000, n = 0, count[50] = {0};
  schedule_fire *f = calloc(cap, sizeof *f);
  CHECK_INT(schedule_advance(s, 86400000, f, cap, &n), AG_OK);
  size_t want = 0;
  for (int p = 1; p <= 50; p++) want += (size_t)(1440 / p);
  CHECK_INT(n, want);
  for (size_t i = 0; i < n; i++) {
    count[f[i].id]++;
    CHECK_INT(f[i].at_ms % ((int64_t)(50 - f[i].id) * 60000), 0);
    if (i && (f[i].at_ms < f[i - 1].at_ms || (f[i].at_ms == f[i - 1].at_ms && f[i].id <= f[i - 1].id))) {
      unit_fail_(__FILE__, __LINE__, "fire %zu out of order", i);
      break;
    }
  }
  for (size_t id = 0; id < 50; id++) CHECK_INT(count[id], 1440 / (50 - id));
  free(f);
  schedule_free(s);
}

static void bad_input_and_bounds(void) {
  schedule *s = NULL;
  schedule_fire f[4];
  size_t n = 7;
  int64_t due = 0;
  CHECK_INT(schedule_new(1000, &s), AG_OK);
  CHECK_INT(schedule_next_due(s, &due), AG_ERR_NOT_FOUND);
  CHECK_INT(schedule_add_every(s, 0, NULL), AG_ERR_INVALID);
  CHECK_INT(schedule_add_every(s, -5, NULL), AG_ERR_INVALID);
  CHECK_INT(schedule_advance(s, 999, f, 4, &n), AG_ERR_INVALID);
  CHECK_INT(n, 0);
  CHECK_INT(schedule_advance(s, 2000, f, 0, &n), AG_ERR_INVALID);
  CHECK_INT(schedule_now(s), 1000);
  schedule_free(s);
  /* Near the end of the year 9999 items stop instead of overflowing. */
  int64_t end = at("9999-12-31T23:00:00Z");
  CHECK_INT(schedule_new(end, &s), AG_OK);
  CHECK_INT(schedule_add_every(s, 25 * 60000, NULL), AG_OK);
  CHECK_INT(schedule_add_every(s, INT64_MAX, NULL), AG_OK);
  add_cron(s, "30 * * * *");
  CHECK_INT(schedule_add_at(s, INT64_MAX, NULL), AG_OK);
  CHECK_INT(schedule_advance(s, INT64_MAX, f, 4, &n), AG_OK);
  CHECK_INT(n, 3); /* 23:25 every, 23:30 cron, 23:50 every */
  CHECK_INT(f[1].id, 2);
  CHECK_INT(schedule_next_due(s, &due), AG_ERR_NOT_FOUND);
  schedule_free(s);
  schedule_free(NULL);
}

SUITE_RUN((UNIT(week_by_jumps), UNIT(week_in_one_advance_and_in_pieces), UNIT(cron_at_the_start_fires_at_the_start),
  UNIT(at_items), UNIT(every_counts_from_when_added), UNIT(many_items_stay_ordered), UNIT(bad_input_and_bounds)))
