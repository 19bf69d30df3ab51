/* What an agent remembers, for the doors that show it (`agora memory`, the HTTP API's
 * .../agents/{name}/memory): its memory stream in the world's current chat as JSON (docs/memory.md). */
#ifndef AG_WORLD_MEMORY_H
#define AG_WORLD_MEMORY_H

#include <cjson/cJSON.h>

#include "world/world.h"

/* The most entries a query answers with, best first. */
#define WORLD_MEMORY_QUERY_MAX 50

/* The memories of agent name (a name or id) in the current chat as a new JSON array (*out, the caller's):
 * each {"seq", "time", "sender", "text", "importance"}, oldest first. With query (not NULL) the
 * WORLD_MEMORY_QUERY_MAX that score best for it at the world's time, best first, each also with its
 * "scores" {"recency", "importance", "relevance", "total"} as retrieval sees them (min-max normalised
 * over the whole stream, the verbatim window included). Reads only. AG_ERR_NOT_FOUND for an unknown
 * agent, AG_ERR_INVALID for one whose memory mode keeps no stream; em says which. */
int world_memory_list(world *w, const char *name, const char *query, cJSON **out, ag_errmsg *em);

#endif
