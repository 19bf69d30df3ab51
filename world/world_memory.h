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
 * over the whole stream, the verbatim window included; for a hosted embedder relevance is 0 unless r, a
 * recall whose done reported success, is given). Reads only. AG_ERR_NOT_FOUND for an unknown
 * agent, AG_ERR_INVALID for one whose memory mode keeps no stream; em says which. */
int world_memory_list(world *w, const char *name, const char *query, const agent_recall *r, cJSON **out,
                      ag_errmsg *em);
/* With a hosted embedder, relevance needs the query embedded first: this starts that (agent_recall_start,
 * memories as there) and *out is the recall to give world_memory_list once done has run. AG_OK with *out
 * NULL when the agent's embedder is the built-in hash (nothing to wait for; done never runs); the errors
 * of world_memory_list, and agent_recall_start's (done never runs). */
int world_memory_recall(world *w, const char *name, const char *query, int memories, agent_recall_done done,
                        void *ud, agent_recall **out, ag_errmsg *em);
/* Why a query over the HTTP API is ranked without relevance (a static sentence), NULL when it is not:
 * agent name's embedder is hosted (docs/serve.md). */
const char *world_memory_no_relevance(world *w, const char *name);

#endif
