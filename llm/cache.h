/* The response cache (issue 25 §3). With `use`, a call whose canonical request was answered before is
 * answered from the cache (storage/cache_db.h) and every new successful answer is stored; with `replay`
 * nothing reaches the network: a miss fails the call with error type "cache_miss". A cached reply goes
 * through the same path as a live one (its text as a chunk when streaming, its tool calls, its usage),
 * marked cached in its usage and costing nothing against a budget.
 *
 * The key is the SHA-256 of the canonical request: the provider, base URL and model, every sampling
 * parameter (temperature, max_tokens, seed, stream), the messages and the tools; never a header, so never
 * the API key. The script provider is not cached: it calls nothing. */
#ifndef AG_LLM_CACHE_H
#define AG_LLM_CACHE_H

#include <stddef.h>

#include "llm/llm.h"

struct cache_db;

typedef enum llm_cache_mode { LLM_CACHE_OFF = 0, LLM_CACHE_USE, LLM_CACHE_REPLAY } llm_cache_mode;

/* "off", "use", "replay" → mode; AG_ERR_INVALID otherwise. */
int llm_cache_mode_parse(const char *name, llm_cache_mode *out);
const char *llm_cache_mode_name(llm_cache_mode mode);

/* Turns the client's cache on (db borrowed: it must stay open until the client is freed or the cache is
 * set off again) or off (mode LLM_CACHE_OFF, db NULL). */
void llm_client_set_cache(llm_client *c, llm_cache_mode mode, struct cache_db *db);

typedef struct llm_cache_counts {
  size_t hits, misses, stored, store_failures;
} llm_cache_counts;
llm_cache_counts llm_client_cache_counts(const llm_client *c);

#endif
