/* The terminal display of run and say, fed from libagora's events (include/agora.h): the transcript
 * through cli_event_print, the status line on stderr (the script's step, the agents thinking, the
 * messages so far, the time) and the live lines of live_lines.h, taken away before anything is
 * printed and drawn again after it. On a pipe, or with --json, it is the printer alone. */
#ifndef AG_CLI_EVENT_SCREEN_H
#define AG_CLI_EVENT_SCREEN_H

#include "agora.h"
#include "cli/event_print.h"
#include "cli/live_lines.h"

#include <stdint.h>
#include <time.h>

typedef struct event_screen {
  cli_event_print print;
  int status;        /* draw the status line (stderr is a terminal, not --json) */
  int live;          /* draw live lines (stdout is a terminal, plain, not --quiet) */
  int status_shown;  /* the status line is on the screen */
  uint64_t messages; /* messages printed, for the status line */
  size_t step, steps; /* the script's step (1-based) and its length; steps 0: no status line yet */
  struct timespec start;
  live_lines lines;
} event_screen;

/* The display for stdout/stderr: json and stream as for cli_event_print_make; quiet: no live lines.
 * Returns NULL when out of memory (the caller frees it with event_screen_free). */
event_screen *event_screen_new(int json, int stream, int quiet);
/* The script step being run (1-based, of steps), redrawn at once; say's one step is 1 of 1 (the
 * default). steps 0 keeps the status line away (a script without steps). */
void event_screen_step(event_screen *s, const agora_world *w, size_t step, size_t steps);
/* Prints ev (requests are left to the caller) and redraws the display. */
void event_screen_on_event(event_screen *s, const agora_event *ev);
/* 1 when the status line wants a tick ten times a second (event_screen_tick) while the world runs. */
int event_screen_ticks(const event_screen *s);
/* Redraws the status line of w (the agents still thinking, the time). */
void event_screen_tick(event_screen *s, const agora_world *w);
/* Takes the status line away until the next draw (before a note on stderr). */
void event_screen_hide(event_screen *s);
/* Clears the display for good: what is printed afterwards is the transcript alone. */
void event_screen_done(event_screen *s);
void event_screen_free(event_screen *s);

#endif
