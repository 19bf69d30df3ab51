/* The part of an agent's `memory` object (issue 26) that summary mode needs: `mode` ("window" or
 * "summary"), `summary_tokens`, `summary_model`, in `defaults` or an agent's own settings, read
 * strictly with JSON paths and written back. The memory stream's keys (retrieve, reflect_at,
 * importance, embedder, weights, mode "stream") belong to world/memory_spec.c; at the merge this reader
 * becomes that file's part for these three. */
#ifndef AG_WORLD_MEMORY_SUMMARY_SPEC_H
#define AG_WORLD_MEMORY_SUMMARY_SPEC_H

#include <cjson/cJSON.h>

#include "agents/agent.h"

/* Applies obj's `memory` (when present) on top of s; path is the settings' own ("defaults",
 * "agents[2]"). Errors "<label>: <path>.memory.<key>: <reason>", AG_ERR_INVALID. */
int world_memory_summary_read(const cJSON *obj, agent_settings *s, const char *label, const char *path,
                              ag_errmsg *em);
/* Adds `memory` to a (an agent's world-file object) when s is not in window mode. */
void world_memory_summary_to_json(const agent_settings *s, cJSON *a);

#endif
