/* The response cache of a world (issue 25 §3), opened by the runtime for every door: the mode from
 * --llm-cache, else the world file's "llm_cache" (default off), and the database from --cache-db DIR,
 * else DB/llm-cache beside the chats (the --db given, or the default directory). The same database keeps
 * the vectors of hosted memory embedders (llm/embed.h, docs/memory.md), opened whenever an agent has one. */
#ifndef AG_RT_LLM_CACHE_H
#define AG_RT_LLM_CACHE_H

#include "runtime/overrides.h"
#include "storage/cache_db.h"
#include "world/world.h"

/* Sets w's LLM client to the mode and database o and spec say. *out is the database (NULL when the cache is
 * off and no agent has a hosted embedder, or only the vectors wanted it and it cannot be opened), the
 * caller's to cache_db_close after w is freed. no_save (--no-save): the vectors alone never make it write
 * (only --cache-db or a cache mode other than off do). AG_ERR_INVALID for a bad --llm-cache value;
 * AG_ERR_IO/AG_ERR_STORAGE when the database cannot be opened (em names it). */
int rt_llm_cache_open(world *w, const world_spec *spec, const rt_overrides *o, const char *db, int no_save,
                      cache_db **out, ag_errmsg *em);
/* The directory of the cache for --cache-db cache_db (may be NULL) and --db db (may be NULL) into out. */
int rt_llm_cache_dir(const char *cache_db, const char *db, char *out, size_t cap, ag_errmsg *em);

#endif
