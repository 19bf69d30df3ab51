/* The time-related parts of a world file (issue 13, docs/time.md): `variables`, `clock`, `schedule`
 * and `{"wait": D}` script steps — strict loading with JSON-path errors, the `{{name}}` checks of every
 * text at load, the variable tables texts are rendered against, and the world-file form back. */
#ifndef AG_WORLD_TIME_H
#define AG_WORLD_TIME_H

#include <cjson/cJSON.h>

#include "world/template.h"
#include "world/world_file.h"
#include "world/world_file_get.h"

/* Reads `variables`, `clock` and `schedule` of root (borrowed) into spec. Errors as world_spec_load. */
int world_time_read(const cJSON *root, world_spec *spec, const char *label, ag_errmsg *em);
/* Reads a {"wait": D} step (st borrowed; path names it) into step. */
int world_time_read_wait(const cJSON *st, world_step *step, const char *label, const char *path, ag_errmsg *em);
/* Checks every text of a fully read spec against its variable table: system prompts, scheduled texts
 * and script texts; an unknown `{{name}}` is a load error listing the known ones. */
int world_time_check(const world_spec *spec, const char *label, ag_errmsg *em);

/* The variable table for texts of spec: world variables, then world, agents, turn_limit and date, time,
 * weekday (declared without a value until template_vars_set_time). agent_name (may be NULL) adds
 * {{agent}}. agents is the comma list of agent names (NULL: from spec). Caller frees *out. */
int world_time_vars(const world_spec *spec, const char *agents, const char *agent_name, template_vars **out);


/* Adds `variables`, `clock` and `schedule` of spec to w (a world-file object) when they are set. */
void world_time_to_json(const world_spec *spec, cJSON *w);
/* Copies variables, clock and schedule from src into dst (whose own are empty). */
int world_time_copy(world_spec *dst, const world_spec *src);
/* Frees what world_time_read allocated in spec. */
void world_time_free(world_spec *spec);

#endif
