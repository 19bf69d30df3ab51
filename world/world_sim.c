/* The world's time (docs/time.md): a virtual clock's state, its jumps when another chat becomes current,
 * and templates rendered at the world's time. */
#include "world/world_int.h"

#include "common/buf.h"
#include "common/clock.h"

int world_is_virtual(const world *w) { return w->sim_on; }
int64_t world_now(const world *w) { return w->sim_on ? w->sim_now : ag_now_ms(); }
void world_set_sim_time(world *w, int64_t ms) { w->sim_now = ms; }
void world_time_rebase(world *w, int64_t ms, int delivered) {
  w->sim_now = ms;
  w->sched_from = ms + (delivered ? 1 : 0);
  w->time_epoch++;
}
int64_t world_schedule_from(const world *w) { return w->time_epoch ? w->sched_from : world_now(w); }
uint64_t world_time_epoch(const world *w) { return w->time_epoch; }
int64_t world_sim_start(const world *w) { return w->sim_start; }

int world_render(world *w, const char *text, const char *agent_name, char **out, ag_errmsg *em) {
  ag_buf b;
  ag_buf_init(&b, 1u << 20);
  int rc = template_vars_set_time(w->vars, world_now(w));
  if (!rc && agent_name) rc = template_vars_set_builtin(w->vars, "agent", agent_name);
  if (!rc) rc = template_render(text, w->vars, &b, em);
  if (!rc && !(*out = ag_buf_take(&b))) rc = AG_ERR_NOMEM;
  if (rc) ag_buf_free(&b);
  return rc;
}
