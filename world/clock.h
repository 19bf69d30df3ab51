/* A world's clock driver (docs/time.md): its schedule over the world's time. A virtual clock's time
 * belongs to the chat: when another chat becomes current (world_time_rebase) the schedule is rebuilt from
 * that chat's time. Virtual mode is a
 * discrete-event simulation — time jumps to the next due item whenever the world is quiet; real mode
 * fires on a libevent timer in wall time, queueing or skipping (`when_busy`) items that fall due while
 * the world is busy. Script `wait` steps, `until` and the console's /advance go through here. */
#ifndef AG_WORLD_CLOCK_H
#define AG_WORLD_CLOCK_H

#include <stdint.h>

#include "world/world.h"

typedef struct world_clock world_clock;

/* A driver for w (borrowed; must outlive it) with w's schedule, its clock at world_now(w). In real mode
 * with items it arms its timer at once. */
int world_clock_new(world *w, world_clock **out, ag_errmsg *em);
void world_clock_free(world_clock *c);

/* Lets ms pass: virtual — delivers every item due up to now + ms (each followed by running the world
 * until quiet), then sets the clock there; real — runs the loop for ms (items fire meanwhile) and
 * until quiet. *ended (may be NULL) is set when `until` was reached: the run should stop. */
int world_clock_wait(world_clock *c, int64_t ms, int *ended);
/* One script step that is not a new_chat: a wait (as world_clock_wait), or its text rendered at the
 * world's time and published, then the world run until quiet. */
int world_clock_step(world_clock *c, const world_step *step, int *ended);
/* Lets ms pass on a virtual clock without blocking the loop (the console's /advance): the items due
 * are delivered one instant at a time, each when the world has fallen quiet (looked at on a short
 * timer), then the clock is set to now + ms. AG_ERR_STATE on a real clock or while one runs. */
int world_clock_advance_start(world_clock *c, int64_t ms);
/* 1 while an advance started by world_clock_advance_start is under way. */
int world_clock_advancing(const world_clock *c);
/* After the script: runs until `until` when set (virtual: delivers everything due before it); without
 * `until` returns at once. */
int world_clock_finish(world_clock *c);
/* The next instant an item is due; AG_ERR_NOT_FOUND when none. */
int world_clock_next_due(world_clock *c, int64_t *ms);
/* Items due that the world was too busy to take (real mode, when_busy queue). */
size_t world_clock_pending(const world_clock *c);

#endif
