/* Summary mode's rolling summary (issue 26, docs/world-file.md "memory"): what the memory entries that
 * left the window said, bounded by summary_tokens by the estimate of context_budget.h (4 bytes a
 * token). The summariser is a model (the agent's, or summary_model) asked to fold new entries into
 * the summary; a script agent, which must run offline and deterministically, folds them in place
 * instead: each entry becomes a line "<sender>: <text>" and the oldest lines go past the bound. Pure:
 * no I/O, no agent state. */
#ifndef AG_SUMMARY_H
#define AG_SUMMARY_H

#include <stddef.h>

#include "agents/msg.h"

/* The bound in bytes: a summary of at most this many bytes is at most tokens tokens by the estimate. */
size_t summary_max_bytes(int tokens);
/* The deterministic fold: summary (may be NULL) with a line per entry appended, then cut to the bound
 * by dropping whole lines from the front (a single line longer than the bound keeps its end). New
 * string (caller frees), NULL on no memory. */
char *summary_fold(const char *summary, ag_msg *const *entries, size_t n, int tokens);
/* A summariser's answer held to the bound: its beginning, cut at a character boundary. New string. */
char *summary_bound(const char *text, int tokens);
/* What the summariser model is asked (system prompt and user message, new strings the caller frees):
 * fold entries into summary (may be NULL) for the agent named name, in at most tokens tokens. */
int summary_request(const char *name, const char *summary, ag_msg *const *entries, size_t n, int tokens,
                    char **system, char **user);

#endif
