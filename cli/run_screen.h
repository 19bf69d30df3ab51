/* What `run` shows on a terminal besides the transcript: the progress line on stderr, redrawn on a
 * 10 Hz timer and on every message and event (the agents thinking, the messages so far, the clock),
 * and live lines on stdout that show each reply as it streams until the whole message replaces it. */
#ifndef AG_CLI_RUN_SCREEN_H
#define AG_CLI_RUN_SCREEN_H

#include <stddef.h>

#include "runtime/output.h"
#include "world/world.h"

struct event_base;
typedef struct run_screen run_screen;

/* w and out are borrowed and must outlive the screen. progress: keep the status line (out decides
 * whether stderr is a terminal); live: show live lines (stdout is a terminal, plain output). */
int run_screen_new(struct event_base *base, world *w, output *out, int progress, int live, run_screen **s);
/* Frees the screen and clears what it shows (NULL is fine). */
void run_screen_free(run_screen *s);
/* The script step being run (1-based), redrawn at once. */
void run_screen_step(run_screen *s, size_t step, size_t steps);
/* A bus_handler for BUS_MESSAGE|BUS_EVENT in place of output_on_bus; ud is the screen. */
void run_screen_on_bus(void *ud, bus_topic topic, void *payload);

#endif
