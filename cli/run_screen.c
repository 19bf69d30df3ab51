/* run's terminal display (see run_screen.h). The status line lives on stderr and the live lines at the
 * bottom of stdout; both are taken away before anything is printed and drawn again after it. */
#include "cli/run_screen.h"

#include "cli/live_lines.h"

#include <event2/event.h>
#include <stdlib.h>

struct run_screen {
  world *w;
  output *out;
  int live;
  struct event *tick;
  size_t step, steps;
  live_lines lines;
};

static int still_thinking(const void *ctx, const char *id) {
  agent *a = world_agent_find(ctx, id);
  return a && agent_is_thinking(a);
}

/* An agent can stop thinking without an event we see (a cancelled call): ask the world. */
static void prune(run_screen *s) { live_lines_prune(&s->lines, still_thinking, s->w); }

static void status(run_screen *s) {
  char who[256];
  size_t thinking = world_thinking(s->w);
  live_lines_who(&s->lines, thinking, who, sizeof who);
  output_progress(s->out, s->step, s->steps, thinking, who);
}

static void on_tick(evutil_socket_t fd, short what, void *ud) {
  (void)fd, (void)what;
  run_screen *s = ud;
  prune(s);
  status(s);
}

int run_screen_new(struct event_base *base, world *w, output *out, int progress, int live, run_screen **sp) {
  run_screen *s = calloc(1, sizeof *s);
  if (!s) return AG_ERR_NOMEM;
  s->w = w;
  s->out = out;
  s->live = live;
  if (progress) {
    struct timeval tenth = {0, 100000};
    if (!(s->tick = event_new(base, -1, EV_PERSIST, on_tick, s)) || event_add(s->tick, &tenth)) {
      run_screen_free(s);
      return AG_ERR_NOMEM;
    }
  }
  *sp = s;
  return AG_OK;
}

void run_screen_free(run_screen *s) {
  if (!s) return;
  if (s->live) live_lines_hide(&s->lines);
  if (s->tick) event_free(s->tick);
  free(s);
}

void run_screen_step(run_screen *s, size_t step, size_t steps) {
  s->step = step;
  s->steps = steps;
  status(s);
}

/* Keeps the thinking agents and their text from llm-start/chunk/done/error events. */
static void track(run_screen *s, const bus_event *be) {
  const world_event *e = &be->ev;
  const char *id = world_event_agent(e);
  if (!id) return;
  if (e->kind == EV_LLM_START) live_lines_start(&s->lines, id);
  else if (e->kind == EV_LLM_CHUNK) live_lines_chunk(&s->lines, id, e->u.llm_chunk.text);
  else if (e->kind == EV_LLM_ERROR || e->kind == EV_AGENT_REMOVED) live_lines_forget(&s->lines, id);
}

void run_screen_on_bus(void *ud, bus_topic topic, void *payload) {
  run_screen *s = ud;
  /* Who is thinking matters only to a line that shows it: tracking and pruning up to 64 agents per
   * bus item was half of a piped run of a 100,000-agent world. */
  int shown = s->live || output_shows_status(s->out);
  if (s->live) live_lines_hide(&s->lines);
  if (shown && topic == BUS_EVENT) track(s, payload);
  output_on_bus(s->out, topic, payload);
  if (shown && topic == BUS_MESSAGE) live_lines_message(&s->lines, ((const ag_msg *)payload)->sender);
  if (shown) prune(s);
  if (s->live) {
    output_status_hide(s->out);
    live_lines_show(&s->lines);
  }
  status(s);
}
