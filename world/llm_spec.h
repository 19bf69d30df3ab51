/* The LLM-layer parts of a world file (issue 25): `budget` {tokens, usd}, `pricing` {model:
 * {input_per_mtok, output_per_mtok}}, `llm_cache` ("off", "use", "replay") and `rate_limits` {base URL or
 * "default": {max_concurrency, rpm, tpm}}, read strictly with JSON paths, and written back. */
#ifndef AG_WORLD_LLM_SPEC_H
#define AG_WORLD_LLM_SPEC_H

#include <cjson/cJSON.h>

#include "world/world_file.h"

/* Reads `budget` and `pricing` of root (borrowed) into spec->budget, after the agents (a dollar budget
 * needs a price for every model an agent calls). Errors as world_spec_load. */
int world_llm_read(const cJSON *root, world_spec *spec, const char *label, ag_errmsg *em);
/* Adds `llm_cache` (when not off) and `budget` and `pricing` to w (a world-file object) when b sets any. */
void world_llm_to_json(const world_spec *spec, const llm_budget *b, cJSON *w);
void world_llm_spec_free(world_spec *spec);

#endif
