/* An agent's versioned context in a chat (issue 7): what it chose to remember through the
 * load_context/save_context tools. The state is a pure reduction over the chat's event thread:
 * context_apply(state, save_context arguments, time) → next state; nothing else changes it. */
#ifndef AG_CONTEXT_H
#define AG_CONTEXT_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/error.h"

typedef struct context_state {
  uint64_t version;     /* 0: never saved */
  int64_t updated_at_ms;
  cJSON *data;          /* owned object: topics, people, notes (arrays of strings) and any other keys */
} context_state;

/* An empty state (version 0, data {}). */
int context_init(context_state *st);
void context_free(context_state *st);
int context_copy(context_state *dst, const context_state *src);

/* Applies one save_context call: arrays in args (topics, people, notes, and any other array) are
 * accumulated into data without duplicates, keeping order; "drop": {"topics": [...], ...} removes
 * items; other keys except "message" and "drop" are set; version + 1; updated_at = at_ms. args must
 * be an object (AG_ERR_INVALID otherwise, st unchanged). Pure: no I/O. */
int context_apply(context_state *st, const cJSON *args, int64_t at_ms);

/* {"version", "updated_at" (RFC 3339), "data"}: what load_context returns and snapshots hold. */
cJSON *context_to_json(const context_state *st);
/* The reverse; AG_ERR_INVALID when the shape is wrong. */
int context_from_json(const cJSON *j, context_state *out);

#endif
