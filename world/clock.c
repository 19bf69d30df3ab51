/* The clock driver (see clock.h): the schedule (world/schedule.h) moved by the world's quiet moments
 * in virtual mode and by a libevent timer in real mode. */
#include "world/clock.h"

#include "common/clock.h"
#include "world/schedule.h"

#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#define CLOCK_FIRES 64    /* fires taken from the schedule at a time */
#define CLOCK_RETRY_MS 20 /* how often queued items look for a quiet world (real mode) */

struct world_clock {
  world *w;
  const world_spec *spec; /* the world's, borrowed */
  schedule *s;
  struct event *timer;    /* real mode: the next due item, or a retry while items are queued */
  struct event *deadline; /* real mode: the end of a wait */
  int deadline_hit;
  struct event *step;     /* virtual mode: the next step of an advance under way */
  int64_t target;         /* ... and where it ends; -1: none under way */
  int64_t *pending;       /* real mode: per item, the due instant of a queued delivery, or -1 */
  size_t n_pending;
  uint64_t epoch;         /* the world's time epoch the schedule was built at (world_time_rebase) */
};

/* The schedule from the world's time: items due before it are not fired again. */
static int clock_schedule(world_clock *c) {
  schedule_free(c->s);
  c->s = NULL;
  c->epoch = world_time_epoch(c->w);
  int rc = schedule_new(world_is_virtual(c->w) ? world_schedule_from(c->w) : world_now(c->w), &c->s);
  for (size_t i = 0; !rc && i < c->spec->n_sched; i++) {
    const world_sched_item *it = &c->spec->sched[i];
    if (it->kind == WORLD_SCHED_CRON) rc = schedule_add_cron(c->s, &it->cron, NULL);
    else if (it->kind == WORLD_SCHED_EVERY) rc = schedule_add_every(c->s, it->ms, NULL);
    else rc = schedule_add_at(c->s, it->ms, NULL);
  }
  return rc;
}

/* Another chat became current with its own simulated time (a virtual clock belongs to the chat): the
 * schedule goes on from there. An advance under way ends where it is. */
static void clock_sync(world_clock *c) {
  if (!world_is_virtual(c->w) || c->epoch == world_time_epoch(c->w)) return;
  if (c->target >= 0) evtimer_del(c->step), c->target = -1;
  clock_schedule(c);
}

/* Renders item id's text at the world's time and publishes it. */
static int clock_publish(world_clock *c, size_t id) {
  const world_sched_item *it = &c->spec->sched[id];
  char *text = NULL;
  int rc = world_render(c->w, it->text, NULL, &text, NULL);
  if (!rc) rc = world_publish(c->w, it->from, text, NULL);
  free(text);
  return rc;
}

static void clock_arm(world_clock *c) {
  int64_t due, delay = -1;
  if (!schedule_next_due(c->s, &due)) delay = due - ag_now_ms();
  if (c->n_pending) delay = delay < 0 || delay > CLOCK_RETRY_MS ? CLOCK_RETRY_MS : delay;
  if (delay < 0 && !c->n_pending) {
    evtimer_del(c->timer);
    return;
  }
  if (delay < 0) delay = 0;
  struct timeval tv = {(time_t)(delay / 1000), (suseconds_t)(delay % 1000) * 1000};
  evtimer_add(c->timer, &tv);
}

/* Real mode: what fell due up to the wall time, coalesced per item; published when the world is quiet,
 * else queued or skipped by the item's when_busy. Queued items go out at the first quiet moment. */
static void clock_on_timer(evutil_socket_t fd, short what, void *ud) {
  (void)fd, (void)what;
  world_clock *c = ud;
  schedule_fire fires[CLOCK_FIRES];
  size_t n = 0;
  int64_t now = ag_now_ms();
  if (now < schedule_now(c->s)) now = schedule_now(c->s);
  do {
    if (schedule_advance(c->s, now, fires, CLOCK_FIRES, &n)) break;
    for (size_t i = 0; i < n; i++) {
      size_t id = fires[i].id;
      if (c->pending[id] >= 0) continue; /* one delivery per item, however many were missed */
      if (c->spec->sched[id].skip_when_busy && !world_is_quiet(c->w)) {
        world_emit(c->w, &(world_event){EV_SCHEDULE_SKIPPED, .u.skipped = {id, fires[i].at_ms}});
        continue;
      }
      c->pending[id] = fires[i].at_ms;
      c->n_pending++;
    }
  } while (n == CLOCK_FIRES);
  for (size_t id = 0; c->n_pending && world_is_quiet(c->w) && id < c->spec->n_sched; id++) {
    if (c->pending[id] < 0) continue;
    c->pending[id] = -1;
    c->n_pending--;
    clock_publish(c, id);
  }
  clock_arm(c);
}

static void clock_on_deadline(evutil_socket_t fd, short what, void *ud) {
  (void)fd, (void)what;
  ((world_clock *)ud)->deadline_hit = 1;
}

/* One step of an asynchronous advance: wait for quiet, deliver the next instant due, or end. */
static void clock_on_step(evutil_socket_t fd, short what, void *ud) {
  (void)fd, (void)what;
  world_clock *c = ud;
  const world_clock_spec *k = &c->spec->clock;
  struct timeval later = {0, CLOCK_RETRY_MS * 1000}, now = {0, 0};
  if (c->epoch != world_time_epoch(c->w)) { /* another chat became current: this advance ends */
    clock_sync(c);
    return;
  }
  if (!world_is_quiet(c->w)) {
    evtimer_add(c->step, &later);
    return;
  }
  schedule_fire fire;
  int64_t due;
  size_t n = 0;
  if (schedule_next_due(c->s, &due) || due > c->target || (k->has_until && due >= k->until_ms)) {
    world_set_sim_time(c->w, c->target);
    c->target = -1;
    world_emit(c->w, &(world_event){EV_CLOCK_ADVANCED, .u.advanced = {world_now(c->w)}});
    return;
  }
  /* One fire a step, each answered before the next, as in a run (docs/time.md). */
  world_set_sim_time(c->w, due);
  if (!schedule_advance(c->s, due, &fire, 1, &n) && n) clock_publish(c, fire.id);
  evtimer_add(c->step, &now);
}

int world_clock_new(world *w, world_clock **out, ag_errmsg *em) {
  world_clock *c = calloc(1, sizeof *c);
  if (!c) return AG_ERR_NOMEM;
  c->w = w;
  c->spec = world_time_spec(w);
  int rc = clock_schedule(c);
  c->pending = malloc((c->spec->n_sched + 1) * sizeof *c->pending);
  if (!rc && !c->pending) rc = AG_ERR_NOMEM;
  for (size_t i = 0; !rc && i < c->spec->n_sched; i++) c->pending[i] = -1;
  c->target = -1;
  if (!rc && world_is_virtual(w) && !(c->step = evtimer_new(world_base(w), clock_on_step, c))) rc = AG_ERR_NOMEM;
  if (!rc && !world_is_virtual(w)) {
    c->timer = evtimer_new(world_base(w), clock_on_timer, c);
    c->deadline = evtimer_new(world_base(w), clock_on_deadline, c);
    if (!c->timer || !c->deadline) rc = AG_ERR_NOMEM;
    else if (c->spec->n_sched) clock_arm(c);
  }
  if (rc) {
    world_clock_free(c);
    return ag_fail(em, rc, "the world's clock: %s", ag_strerror(rc));
  }
  *out = c;
  return AG_OK;
}

void world_clock_free(world_clock *c) {
  if (!c) return;
  if (c->timer) event_free(c->timer);
  if (c->deadline) event_free(c->deadline);
  if (c->step) event_free(c->step);
  schedule_free(c->s);
  free(c->pending);
  free(c);
}

int world_clock_next_due(world_clock *c, int64_t *ms) {
  clock_sync(c);
  return schedule_next_due(c->s, ms);
}
size_t world_clock_pending(const world_clock *c) { return c->n_pending; }

/* Virtual mode: every item due at or before t (and before until), each published at its instant and
 * followed by running the world until quiet; items due at one instant go in item order. */
static int clock_deliver(world_clock *c, int64_t t) {
  const world_clock_spec *k = &c->spec->clock;
  schedule_fire fires[CLOCK_FIRES];
  int64_t due;
  int rc = AG_OK;
  while (!rc && !schedule_next_due(c->s, &due) && due <= t && !(k->has_until && due >= k->until_ms)) {
    size_t n = 0;
    world_set_sim_time(c->w, due);
    if ((rc = schedule_advance(c->s, due, fires, CLOCK_FIRES, &n))) break;
    for (size_t i = 0; !rc && i < n; i++) {
      rc = clock_publish(c, fires[i].id);
      if (!rc) rc = world_run_until_quiet(c->w);
    }
  }
  return rc;
}

/* Real mode: runs the loop until ms have passed and the world is quiet. An interrupt (Ctrl-C) ends the
 * wait at once: the script stops there rather than an hour later. */
static int clock_sleep(world_clock *c, int64_t ms) {
  struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
  c->deadline_hit = 0;
  world_interrupt_clear(c->w);
  evtimer_add(c->deadline, &tv);
  while (!c->deadline_hit && !world_interrupted(c->w)) {
    if (event_base_loop(world_base(c->w), EVLOOP_ONCE) < 0) return AG_ERR_STATE;
  }
  if (!c->deadline_hit) {
    evtimer_del(c->deadline);
    return AG_ERR_CANCELLED;
  }
  return world_run_until_quiet(c->w);
}

int world_clock_wait(world_clock *c, int64_t ms, int *ended) {
  const world_clock_spec *k = &c->spec->clock;
  clock_sync(c);
  int64_t target = world_now(c->w) + ms;
  int stop = k->has_until && target >= k->until_ms;
  if (stop) target = k->until_ms;
  if (ended) *ended = stop;
  if (!world_is_virtual(c->w)) return clock_sleep(c, target - ag_now_ms() > 0 ? target - ag_now_ms() : 0);
  int rc = clock_deliver(c, target);
  if (!rc) world_set_sim_time(c->w, target);
  return rc;
}

int world_clock_finish(world_clock *c) {
  const world_clock_spec *k = &c->spec->clock;
  int64_t now = world_now(c->w);
  if (!k->has_until || now >= k->until_ms) return AG_OK;
  return world_clock_wait(c, k->until_ms - now, NULL);
}

int world_clock_step(world_clock *c, const world_step *step, int *ended) {
  if (ended) *ended = 0;
  if (step->wait_ms) return world_clock_wait(c, step->wait_ms, ended);
  char *text = NULL;
  int rc = world_render(c->w, step->text, NULL, &text, NULL);
  if (!rc) rc = world_publish(c->w, step->from, text, NULL);
  free(text);
  if (!rc) rc = world_run_until_quiet(c->w);
  return rc;
}

int world_clock_advance_start(world_clock *c, int64_t ms) {
  clock_sync(c);
  if (!world_is_virtual(c->w) || c->target >= 0) return AG_ERR_STATE;
  c->target = world_now(c->w) + ms;
  struct timeval now = {0, 0};
  evtimer_add(c->step, &now);
  return AG_OK;
}

int world_clock_advancing(const world_clock *c) { return c->target >= 0; }
