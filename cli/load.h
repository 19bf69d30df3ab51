/* Loading a world file into a running world: what `run` and `console WORLD.json` share. */
#ifndef AG_CLI_LOAD_H
#define AG_CLI_LOAD_H

#include "world/world.h"

struct event_base;

/* Builds the world of spec (loaded from path, which errors name) on a new event loop. On success *base
 * and *w are the caller's (free the world before the loop); on failure neither is left and em says
 * what is wrong: "PATH: detail" (AG_ERR_INVALID, or AG_ERR_NOMEM). spec is borrowed. */
int cli_world_build(const char *path, const world_spec *spec, struct event_base **base, world **w, ag_errmsg *em);

/* The ids of w's agents thinking right now, ", "-separated, into out (cap bytes; names that do not fit
 * are left out): what the cancelled event names. "" when nobody is thinking. */
void cli_thinking_names(const world *w, char *out, size_t cap);

#endif
