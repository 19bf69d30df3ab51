/* Scrubbing secrets out of text a server sent back (error bodies) before it is stored, printed or
 * exported: the configured key, fragments of it echoed around a mask, and anything shaped like a key
 * or a bearer token. Pure: no I/O. */
#ifndef AG_LLM_REDACT_H
#define AG_LLM_REDACT_H

#include <stddef.h>

/* Rewrites the NUL-terminated s (capacity cap bytes) in place, replacing by "[redacted]" each token
 * (a run of characters other than spaces, quotes and brackets; a trailing '.', ',' or ':' is kept
 * outside it) that:
 * - holds 8 or more consecutive characters of key, when key has 8 or more; equals key when it is shorter
 *   (so a key "k" leaves "mock" alone);
 * - is masked: 3 or more '*' or '•' next to 4 or more letters or digits ("sk-CAN**********4f60");
 * - follows the word "Bearer", or looks like a provider key ("sk-"/"sk_" or "AIza" and 16+ more
 *   characters).
 * key (borrowed) may be NULL or empty. The result is cut to cap - 1 bytes if it grew. */
void llm_redact(char *s, size_t cap, const char *key);

#endif
