/* World files (cli.md "World file"): strict loading into a world_spec, with every error naming the
 * file and the JSON path ("world.json: agents[1].provider: unknown provider 'nope'"). */
#ifndef AG_WORLD_FILE_H
#define AG_WORLD_FILE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "agents/agent.h"

#define WORLD_FILE_MAX (16u << 20) /* bytes */

typedef struct world_step {
  int new_chat; /* {"new_chat": true}; otherwise a message */
  char *from;   /* owned */
  char *text;   /* owned */
} world_step;

/* Everything a world file says. All memory owned by the spec. */
typedef struct world_spec {
  char *name;
  char id[64];
  char *description;     /* may be NULL */
  int turn_limit;        /* default 5 */
  int memory_window;     /* default 10 */
  char *main_agent;      /* an agent id, or NULL */
  agent_settings *agents;
  size_t n_agents;
  world_step *steps;
  size_t n_steps;
} world_spec;

/* Reads and validates path. On failure em says "<path>: <json path>: <reason>" and the code is
 * AG_ERR_INVALID (or AG_ERR_NOT_FOUND/AG_ERR_IO/AG_ERR_TOO_BIG for the file itself). */
int world_spec_load(const char *path, world_spec *out, ag_errmsg *em);
/* The same for JSON text; label names the source in messages. */
int world_spec_parse(const char *json, size_t len, const char *label, world_spec *out, ag_errmsg *em);
/* The same for a parsed document (borrowed). */
int world_spec_from_json(const cJSON *root, const char *label, world_spec *out, ag_errmsg *em);
/* The settings as a JSON document in world-file form, without the script (for storage and
 * snapshots). Never contains a key: only the name of the variable that holds it. Caller owns. */
cJSON *world_spec_to_json(const world_spec *spec);
/* One agent's settings in world-file form (caller owns). */
cJSON *world_agent_to_json(const agent_settings *s);
void world_spec_free(world_spec *spec);

#endif
