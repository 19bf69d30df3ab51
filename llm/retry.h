/* When a failed LLM attempt is worth another try, and how long to wait first: exponential backoff
 * with jitter, or what the server asked for in Retry-After / retry-after-ms. Pure policy, no I/O, so
 * it is tested directly. */
#ifndef AG_LLM_RETRY_H
#define AG_LLM_RETRY_H

#include <stddef.h>

#define LLM_RETRY_BASE_MS 250L         /* first backoff step */
#define LLM_RETRY_MAX_BACKOFF_MS 8000L /* backoff never grows past this */
#define LLM_RETRY_MAX_AFTER_MS 30000L  /* a server's Retry-After is honoured up to this */

/* Is an HTTP status worth retrying? 408, 409, 429 and 5xx are, unless the provider's error type or
 * code (either may be NULL) says the quota is exhausted, which waiting does not fix. */
int llm_retry_status(long status, const char *err_type, const char *err_code);

/* Is an error object that arrived inside a 2xx reply (Anthropic's overloaded_error event, ...) a
 * transient server condition? */
int llm_retry_error_type(const char *err_type);

/* The backoff base in ms: LLM_RETRY_BASE_MS, or AGORA_LLM_BACKOFF_MS from the environment (read once;
 * tests set it small). */
long llm_retry_base_ms(void);

/* Delay before retry number n (1 for the first retry): base * 2^(n-1), capped, with "equal jitter"
 * (half fixed, half random) so that many calls failing together do not retry together. rnd is a
 * random 32-bit value supplied by the caller. */
long llm_retry_backoff_ms(long base_ms, int n, unsigned rnd);

/* Parses a Retry-After (whole or fractional seconds; an HTTP date is ignored) or retry-after-ms
 * header value into *ms, capped at LLM_RETRY_MAX_AFTER_MS. Returns 1 when it parsed, else 0. */
int llm_retry_parse_after(const char *value, size_t len, int millis, long *ms);

#endif
