/* A world's schedule (issue 13) as a pure priority queue of items — cron, every, at — over a clock
 * the caller moves: "when is the next item due" and "advance to T, returning what fell due". It knows
 * no event loop: in virtual mode the world jumps the clock to schedule_next_due when quiet; in real
 * mode a libevent timer fires at that instant and advances to the wall time (docs/time.md). */
#ifndef AG_SCHEDULE_H
#define AG_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#include "world/cron.h"

typedef struct schedule schedule;

/* One item falling due: its id (the order it was added, from 0) and the instant it was due. */
typedef struct schedule_fire {
  size_t id;
  int64_t at_ms;
} schedule_fire;

/* An empty schedule whose clock reads start_ms. */
int schedule_new(int64_t start_ms, schedule **out);
void schedule_free(schedule *s);

/* Adding an item: *id (may be NULL) receives its id. Times are epoch ms, UTC.
 * cron: due at each matching minute, the first at or after the clock (c copied).
 * every: due every period_ms (> 0) counted from the clock when added: clock + period, + 2 period, ...
 * at: due once at at_ms; one before the clock never fires (the caller decides whether that is an error).
 * AG_ERR_INVALID for a period ≤ 0. */
int schedule_add_cron(schedule *s, const cron *c, size_t *id);
int schedule_add_every(schedule *s, int64_t period_ms, size_t *id);
int schedule_add_at(schedule *s, int64_t at_ms, size_t *id);

/* The clock: start, then where the last advance left it. */
int64_t schedule_now(const schedule *s);
/* The earliest instant an item is due (≥ the clock) into *due_ms; AG_ERR_NOT_FOUND when no item will
 * ever fire again. */
int schedule_next_due(const schedule *s, int64_t *due_ms);
/* Moves the clock to t (≥ the clock, and cap > 0, else AG_ERR_INVALID) and writes the items due at or before t
 * into out, oldest first, items due at the same instant by id; every missed occurrence is returned
 * (an every-1h item over a 5h advance comes five times — a caller that wants one coalesces by id).
 * At most cap fires: when more are due the clock stops at the last one written, and the next call
 * returns the rest. *n is the number written. */
int schedule_advance(schedule *s, int64_t t, schedule_fire *out, size_t cap, size_t *n);

#endif
