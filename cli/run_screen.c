/* run's terminal display (see run_screen.h). The status line lives on stderr and the live lines at the
 * bottom of stdout; both are taken away before anything is printed and drawn again after it. */
#include "cli/run_screen.h"

#include "common/term_text.h"

#include <event2/event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define SCREEN_AGENTS 64  /* agents tracked by name; more are counted */
#define SCREEN_NAMES 3    /* names shown on the status line before "+N" */
#define SCREEN_TAIL 512   /* bytes of a streaming reply kept for its live line */
#define SCREEN_LIVE_MAX 8 /* live lines at most; the rest wait for their whole message */

typedef struct screen_agent {
  char id[64];
  char tail[SCREEN_TAIL]; /* the end of the reply so far, control characters made spaces */
  size_t len;
} screen_agent;

struct run_screen {
  world *w;
  output *out;
  int live;
  struct event *tick;
  size_t step, steps;
  screen_agent agents[SCREEN_AGENTS]; /* thinking, in the order they started */
  size_t n;
  size_t shown; /* live lines on the screen */
};

static screen_agent *find(run_screen *s, const char *id) {
  for (size_t i = 0; i < s->n; i++)
    if (!strcmp(s->agents[i].id, id)) return &s->agents[i];
  return NULL;
}

static void forget(run_screen *s, const char *id) {
  screen_agent *a = find(s, id);
  if (!a) return;
  size_t i = (size_t)(a - s->agents);
  memmove(a, a + 1, (s->n - i - 1) * sizeof *a);
  s->n--;
}

/* An agent can stop thinking without an event we see (a cancelled call): ask the world. */
static void prune(run_screen *s) {
  for (size_t i = s->n; i-- > 0;) {
    agent *a = world_agent_find(s->w, s->agents[i].id);
    if (!a || !agent_is_thinking(a)) forget(s, s->agents[i].id);
  }
}

static void status(run_screen *s) {
  char who[256] = "";
  size_t len = 0, k = s->n < SCREEN_NAMES ? s->n : SCREEN_NAMES;
  for (size_t i = 0; i < k && len < sizeof who; i++)
    len += (size_t)snprintf(who + len, sizeof who - len, "%s%s", i ? ", " : "", s->agents[i].id);
  size_t thinking = world_thinking(s->w);
  if (thinking > k && k && len < sizeof who) snprintf(who + len, sizeof who - len, " +%zu", thinking - k);
  output_progress(s->out, s->step, s->steps, thinking, who);
}

static int term_cols(void) {
  struct winsize ws;
  return ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 8 ? ws.ws_col : 80;
}

/* The live lines go; the cursor returns to where they started. */
static void live_hide(run_screen *s) {
  if (!s->shown) return;
  printf("\033[%zuA\r\033[J", s->shown);
  s->shown = 0;
}

/* One line per streaming agent: "id: …end of the text", cut to the width (a character outside ASCII
 * is counted as two columns, so a line never wraps and the count of lines stays right). */
static void live_show(run_screen *s) {
  int cols = term_cols();
  for (size_t i = 0; i < s->n && s->shown < SCREEN_LIVE_MAX; i++) {
    const screen_agent *a = &s->agents[i];
    if (!a->len) continue;
    int room = cols - (int)strlen(a->id) - 5, used = 0;
    size_t start = a->len;
    while (start > 0) {
      size_t p = start - 1;
      while (p > 0 && ((unsigned char)a->tail[p] & 0xC0) == 0x80) p--;
      int w = (unsigned char)a->tail[p] < 0x80 ? 1 : 2;
      if (used + w > room) break;
      used += w;
      start = p;
    }
    printf("\033[2m%s: %s", a->id, start ? "…" : "");
    ag_term_text_put(stdout, a->tail + start); /* a stray byte shows as U+FFFD, never raw */
    fputs("\033[0m\n", stdout);
    s->shown++;
  }
  fflush(stdout);
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
  if (s->live) live_hide(s);
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
  screen_agent *a = find(s, id);
  if (e->kind == EV_LLM_START) {
    if (!a && s->n < SCREEN_AGENTS && strlen(id) < sizeof a->id) {
      a = &s->agents[s->n++];
      snprintf(a->id, sizeof a->id, "%s", id);
    }
    if (a) a->len = 0, a->tail[0] = '\0';
  } else if (e->kind == EV_LLM_CHUNK) {
    if (a && e->u.llm_chunk.text) ag_term_tail_append(a->tail, sizeof a->tail, &a->len, e->u.llm_chunk.text);
  } else if (e->kind == EV_LLM_ERROR || e->kind == EV_AGENT_REMOVED) {
    forget(s, id);
  }
}

void run_screen_on_bus(void *ud, bus_topic topic, void *payload) {
  run_screen *s = ud;
  /* Who is thinking matters only to a line that shows it: tracking and pruning up to 64 agents per
   * bus item was half of a piped run of a 100,000-agent world. */
  int shown = s->live || output_shows_status(s->out);
  if (s->live) live_hide(s);
  if (shown && topic == BUS_EVENT) track(s, payload);
  output_on_bus(s->out, topic, payload);
  if (shown && topic == BUS_MESSAGE) {
    screen_agent *a = find(s, ((const ag_msg *)payload)->sender);
    if (a) a->len = 0, a->tail[0] = '\0'; /* the whole message replaces its live line */
  }
  if (shown) prune(s);
  if (s->live) {
    output_status_hide(s->out);
    live_show(s);
  }
  status(s);
}
