/* The `memory` object of a world file (issue 26, docs/memory.md), per agent or in `defaults`: mode,
 * retrieve, reflect_at, importance, embedder, weights, retrieve_tokens, summary_tokens, summary_model;
 * read strictly with JSON paths, and written back. */
#ifndef AG_WORLD_MEMORY_SPEC_H
#define AG_WORLD_MEMORY_SPEC_H

#include <cjson/cJSON.h>

#include "agents/memory_stream.h"
#include "common/error.h"

/* Applies `memory` of obj (borrowed; absent: nothing changes) on top of c, field by field (an agent's
 * fields over the defaults'). path is the object's ("agents[1]", "defaults"). Errors as world_spec_load:
 * "<label>: <path>.memory.<field>: <reason>", AG_ERR_INVALID. */
int world_memory_read(const cJSON *obj, mem_config *c, const char *label, const char *path, ag_errmsg *em);
/* Adds "memory" to a (an agent in world-file form) unless c is the default. */
void world_memory_to_json(const mem_config *c, cJSON *a);

#endif
