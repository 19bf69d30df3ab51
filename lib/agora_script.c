/* libagora's script (API version 4): the world file's steps and schedule on the world's clock, as
 * `agora run` drives them (world/clock.h), and agora_tick, the periodic callback that a program
 * blocked in a step needs for its progress line and its Ctrl-C. */
#include "lib/agora_int.h"

#include "world/clock.h"

#include <event2/event.h>
#include <stdio.h>

size_t agora_script_steps(const agora_world *w) { return rt_spec(w->rt)->n_steps; }

/* A new_chat step: a new chat current, or with no database a fresh conversation. */
static int step_new_chat(agora_world *w, ag_errmsg *em) {
  chat_session *cs = rt_session(w->rt);
  int rc = AG_OK;
  if (!cs) world_reset_conversation(w->w);
  else rc = chat_session_new(cs, em);
  return rc ? rc : world_run_until_quiet(w->w);
}

/* Runs step i (i == n_steps: the clock's finish) on the world's own loop, with interrupts routed to it
 * (w->stepping), and hands back the public status. */
static int script_run(agora_world *w, size_t i, const char *fn) {
  const world_spec *spec = rt_spec(w->rt);
  world_clock *clk = rt_clock(w->rt);
  ag_errmsg em = {""};
  int rc, ended = 0;
  if (w->stepping || w->running)
    return agora__fail(ag_fail(&em, AG_ERR_STATE, "%s: not from a callback", fn), &em);
  if (!clk)
    return agora__fail(ag_fail(&em, AG_ERR_STATE, "%s: the world's clock is not driven (AGORA_NO_CLOCK)", fn), &em);
  if (i > spec->n_steps)
    return agora__fail(ag_fail(&em, AG_ERR_NOT_FOUND, "%s: no step %zu (the script has %zu)", fn, i, spec->n_steps), &em);
  if (w->interrupted) { /* agora_interrupt before the call */
    w->interrupted = 0;
    return agora__fail(AG_ERR_CANCELLED, &(ag_errmsg){"interrupted"});
  }
  if ((rc = agora__loop_enter(w, fn))) return rc;
  w->stepping = 1;
  if (i == spec->n_steps) rc = world_clock_finish(clk);
  else if (spec->steps[i].new_chat) rc = step_new_chat(w, &em);
  else rc = world_clock_step(clk, &spec->steps[i], &ended);
  w->stepping = w->interrupted = 0;
  agora__loop_exit(w);
  agora__loop_sync(w);
  if (rc == AG_ERR_CANCELLED) return agora__fail(rc, &(ag_errmsg){"interrupted"});
  if (rc) return agora__fail(rc, &em);
  return ended ? AGORA_ENDED : AGORA_OK;
}

int agora_script_step(agora_world *w, size_t i) {
  if (i >= rt_spec(w->rt)->n_steps) /* the finish is agora_script_finish's */
    return agora__fail(AG_ERR_NOT_FOUND, &(ag_errmsg){"agora_script_step: no such step"});
  return script_run(w, i, "agora_script_step");
}

int agora_script_finish(agora_world *w) { return script_run(w, rt_spec(w->rt)->n_steps, "agora_script_finish"); }

static void on_tick(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  agora_world *w = arg;
  w->tick_fn(w, w->tick_ctx);
}

int agora_tick(agora_world *w, long ms, agora_tick_fn fn, void *ctx) {
  if (ms < 0) return agora__fail(AG_ERR_INVALID, &(ag_errmsg){"agora_tick: ms is negative"});
  if (w->tick) event_free(w->tick);
  w->tick = NULL;
  w->tick_fn = NULL;
  if (!ms || !fn) return AG_OK;
  struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
  if (!(w->tick = event_new(rt_base(w->rt), -1, EV_PERSIST, on_tick, w)) || event_add(w->tick, &tv)) {
    if (w->tick) event_free(w->tick);
    w->tick = NULL;
    return agora__fail(AG_ERR_NOMEM, NULL);
  }
  w->tick_fn = fn;
  w->tick_ctx = ctx;
  return AG_OK;
}
