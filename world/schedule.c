/* The schedule: items in an array by id, and a binary min-heap of the live ones ordered by (due, id)
 * so that the order of fires is total and deterministic (see schedule.h). */
#include "world/schedule.h"

#include <stdlib.h>

#include "common/clock.h"
#include "common/error.h"

typedef enum schedule_kind { SCHEDULE_CRON, SCHEDULE_EVERY, SCHEDULE_AT } schedule_kind;

typedef struct schedule_item {
  schedule_kind kind;
  cron cron;      /* SCHEDULE_CRON */
  int64_t period; /* SCHEDULE_EVERY */
  int64_t due;    /* next instant it is due, while in the heap */
} schedule_item;

struct schedule {
  int64_t now;
  schedule_item *items;
  size_t n_items, alloc_items;
  size_t *heap; /* ids of live items */
  size_t n_heap;
};

/* Past the end of the year 9999 nothing is due: RFC 3339 cannot write it. */
static int64_t schedule_end_ms(void) { return ag_days_from_civil(10000, 1, 1) * 86400000; }

int schedule_new(int64_t start_ms, schedule **out) {
  *out = calloc(1, sizeof **out);
  if (!*out) return AG_ERR_NOMEM;
  (*out)->now = start_ms;
  return AG_OK;
}

void schedule_free(schedule *s) {
  if (!s) return;
  free(s->items);
  free(s->heap);
  free(s);
}

int64_t schedule_now(const schedule *s) { return s->now; }

static int schedule_before(const schedule *s, size_t a, size_t b) {
  int64_t da = s->items[a].due, db = s->items[b].due;
  return da < db || (da == db && a < b);
}

static void schedule_swap(size_t *h, size_t i, size_t j) {
  size_t t = h[i];
  h[i] = h[j];
  h[j] = t;
}

static void schedule_sift_up(schedule *s, size_t i) {
  while (i > 0 && schedule_before(s, s->heap[i], s->heap[(i - 1) / 2])) {
    schedule_swap(s->heap, i, (i - 1) / 2);
    i = (i - 1) / 2;
  }
}

static void schedule_sift_down(schedule *s, size_t i) {
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, min = i;
    if (l < s->n_heap && schedule_before(s, s->heap[l], s->heap[min])) min = l;
    if (r < s->n_heap && schedule_before(s, s->heap[r], s->heap[min])) min = r;
    if (min == i) return;
    schedule_swap(s->heap, i, min);
    i = min;
  }
}

/* Appends an item due at due (dead when due < 0: never in the heap). Both arrays grow together, so
 * the heap always has room for every item. */
static int schedule_add(schedule *s, const schedule_item *it, size_t *id) {
  if (s->n_items == s->alloc_items) {
    size_t n = s->alloc_items ? s->alloc_items * 2 : 8;
    schedule_item *items = realloc(s->items, n * sizeof *items);
    if (!items) return AG_ERR_NOMEM;
    s->items = items;
    size_t *heap = realloc(s->heap, n * sizeof *heap);
    if (!heap) return AG_ERR_NOMEM;
    s->heap = heap;
    s->alloc_items = n;
  }
  size_t i = s->n_items++;
  s->items[i] = *it;
  if (id) *id = i;
  if (it->due >= s->now && it->due < schedule_end_ms()) {
    s->heap[s->n_heap++] = i;
    schedule_sift_up(s, s->n_heap - 1);
  }
  return AG_OK;
}

int schedule_add_cron(schedule *s, const cron *c, size_t *id) {
  schedule_item it = {SCHEDULE_CRON, *c, 0, -1};
  /* At or after the clock: the minute the clock is in counts when the clock is on it exactly. */
  if (cron_next(c, s->now - 1, &it.due) != AG_OK) it.due = INT64_MIN;
  return schedule_add(s, &it, id);
}

int schedule_add_every(schedule *s, int64_t period_ms, size_t *id) {
  if (period_ms <= 0) return AG_ERR_INVALID;
  schedule_item it = {SCHEDULE_EVERY, {0}, period_ms, INT64_MIN};
  if (s->now <= INT64_MAX - period_ms) it.due = s->now + period_ms;
  return schedule_add(s, &it, id);
}

int schedule_add_at(schedule *s, int64_t at_ms, size_t *id) {
  schedule_item it = {SCHEDULE_AT, {0}, 0, at_ms};
  return schedule_add(s, &it, id);
}

int schedule_next_due(const schedule *s, int64_t *due_ms) {
  if (!s->n_heap) return AG_ERR_NOT_FOUND;
  *due_ms = s->items[s->heap[0]].due;
  return AG_OK;
}

/* The top item fired: reschedule it or drop it. */
static void schedule_reschedule_top(schedule *s) {
  schedule_item *it = &s->items[s->heap[0]];
  int live = 0;
  if (it->kind == SCHEDULE_CRON) live = cron_next(&it->cron, it->due, &it->due) == AG_OK;
  else if (it->kind == SCHEDULE_EVERY && it->due < schedule_end_ms() - it->period) {
    it->due += it->period;
    live = 1;
  }
  if (!live) s->heap[0] = s->heap[--s->n_heap];
  if (s->n_heap) schedule_sift_down(s, 0);
}

int schedule_advance(schedule *s, int64_t t, schedule_fire *out, size_t cap, size_t *n) {
  *n = 0;
  if (t < s->now || cap == 0) return AG_ERR_INVALID;
  while (s->n_heap && s->items[s->heap[0]].due <= t) {
    if (*n == cap) {
      s->now = out[cap - 1].at_ms; /* the rest are due at or after it; the next call returns them */
      return AG_OK;
    }
    size_t id = s->heap[0];
    out[(*n)++] = (schedule_fire){id, s->items[id].due};
    schedule_reschedule_top(s);
  }
  s->now = t;
  return AG_OK;
}
