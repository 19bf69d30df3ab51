/* run's and say's terminal display from agora_event (see event_screen.h). The status line reads
 * "step 2 of 5 · N thinking: a, b · K messages · T s". */
#include "cli/event_screen.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

event_screen *event_screen_new(int json, int stream, int quiet) {
  event_screen *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->print = cli_event_print_make(stdout, json, stream);
  s->status = !json && isatty(STDERR_FILENO);
  s->live = !json && !quiet && isatty(STDOUT_FILENO);
  s->step = s->steps = 1;
  clock_gettime(CLOCK_MONOTONIC, &s->start);
  return s;
}

static void status_clear(event_screen *s) {
  if (!s->status_shown) return;
  fputs("\r\033[K", stderr);
  s->status_shown = 0;
}

static int still_thinking(const void *ctx, const char *id) { return agora_agent_thinking(ctx, id); }

static void status_draw(event_screen *s, const agora_world *w) {
  if (!s->status || !s->steps) return;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  double secs = (double)(now.tv_sec - s->start.tv_sec) + (double)(now.tv_nsec - s->start.tv_nsec) / 1e9;
  size_t thinking = agora_thinking(w);
  char who[256];
  live_lines_who(&s->lines, thinking, who, sizeof who);
  fprintf(stderr, "\r\033[Kstep %zu of %zu · %zu thinking%s%s · %llu messages · %.1fs", s->step, s->steps, thinking,
          who[0] ? ": " : "", who, (unsigned long long)s->messages, secs);
  fflush(stderr);
  s->status_shown = 1;
}

/* An llm-chunk's text: the library has no accessor for it, its JSON line holds it. */
static void chunk(event_screen *s, const agora_event *ev, const char *id) {
  const char *line = agora_event_json(ev);
  cJSON *j = line ? cJSON_Parse(line) : NULL;
  live_lines_chunk(&s->lines, id, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "text")));
  cJSON_Delete(j);
}

/* Keeps the thinking agents and their text from llm-start/chunk/error and agent-removed events. */
static void track(event_screen *s, const agora_event *ev) {
  const char *kind = agora_event_kind(ev), *id = agora_event_agent(ev);
  if (!id || agora_event_type(ev) != AGORA_EVENT_WORLD) return;
  if (!strcmp(kind, "llm-start")) live_lines_start(&s->lines, id);
  else if (!strcmp(kind, "llm-chunk")) chunk(s, ev, id);
  else if (!strcmp(kind, "llm-error") || !strcmp(kind, "agent-removed")) live_lines_forget(&s->lines, id);
}

void event_screen_on_event(event_screen *s, const agora_event *ev) {
  agora_world *w = agora_event_world(ev);
  int shown = s->live || s->status, message = agora_event_type(ev) == AGORA_EVENT_MESSAGE;
  if (s->live) live_lines_hide(&s->lines);
  status_clear(s);
  if (shown) track(s, ev);
  cli_event_print_one(&s->print, ev);
  s->messages += (uint64_t)message;
  if (shown && message) live_lines_message(&s->lines, agora_event_sender(ev)); /* it replaces its live line */
  if (shown) live_lines_prune(&s->lines, still_thinking, w);
  if (s->live) live_lines_show(&s->lines);
  status_draw(s, w);
}

void event_screen_step(event_screen *s, const agora_world *w, size_t step, size_t steps) {
  s->step = step;
  s->steps = steps;
  status_draw(s, w);
}

int event_screen_ticks(const event_screen *s) { return s->status; }

void event_screen_tick(event_screen *s, const agora_world *w) {
  live_lines_prune(&s->lines, still_thinking, w);
  status_draw(s, w);
}

void event_screen_hide(event_screen *s) { status_clear(s); }

void event_screen_done(event_screen *s) {
  if (s->live) live_lines_hide(&s->lines);
  status_clear(s);
  s->live = s->status = 0;
}

void event_screen_free(event_screen *s) {
  if (s) event_screen_done(s);
  free(s);
}
