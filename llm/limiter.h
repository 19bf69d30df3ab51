/* Rate limits per endpoint (issue 25 §1). An endpoint is a base URL as agents use it together with the
 * name of the key variable: agents that share both share its limits. Limits come from the world file's
 * `rate_limits` (by base URL, or "default" for every endpoint not named) and, adaptively and even without
 * configuration, from the providers: a 429, or a reply saying none of the requests or tokens of the window
 * remain, pauses the whole endpoint until the reset it names (Retry-After, retry-after-ms,
 * x-ratelimit-reset-*, anthropic-ratelimit-*-reset). Calls that may not start yet wait first-in first-out
 * across agents; every attempt (retries too) goes through the limiter. An endpoint with no limit and no
 * pause admits at once, with no bookkeeping. */
#ifndef AG_LLM_LIMITER_H
#define AG_LLM_LIMITER_H

#include <stddef.h>
#include <stdint.h>

#include "llm/llm.h"

/* One `rate_limits` entry; 0 is no limit. endpoint owned by the holder: a base URL or "default". */
typedef struct llm_rate_limit {
  char *endpoint;
  long max_concurrency;
  long rpm; /* requests a minute */
  long tpm; /* tokens a minute (estimated before a call, corrected by its reported usage) */
} llm_rate_limit;

typedef struct llm_rate_limits {
  llm_rate_limit *v;
  size_t n;
} llm_rate_limits;

int llm_rate_limits_copy(llm_rate_limits *dst, const llm_rate_limits *src);
void llm_rate_limits_free(llm_rate_limits *l);

/* Sets the configured limits (copied); endpoints seen before keep their state and pick the new limits up. */
int llm_client_set_rate_limits(llm_client *c, const llm_rate_limits *l);
/* The configured limits (borrowed; empty when none were set). */
const llm_rate_limits *llm_client_rate_limits(const llm_client *c);
/* fn (may be NULL) hears of every pause of an endpoint: its base URL and until when (wall clock, ms).
 * Called from the loop; ud borrowed. */
void llm_client_on_rate_limited(llm_client *c, void (*fn)(void *ud, const char *endpoint, int64_t until_ms), void *ud);
/* Pauses so far (429s and exhausted windows), and calls waiting now. */
size_t llm_client_rate_limited(const llm_client *c);
size_t llm_client_waiting(const llm_client *c);

#endif
