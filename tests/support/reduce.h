/* The reduction that defines an agent's context (agents/context.h), done independently for tests:
 * every successful save_context result in a chat's event thread applies its call's arguments. */
#ifndef AG_TEST_REDUCE_H
#define AG_TEST_REDUCE_H

#include "agents/context.h"
#include "storage/store.h"

/* Reduces agent's save_context calls in chat's thread, in the read transaction t, into *out (an
 * initialised state the caller frees with context_free). Returns the store's error code. */
int reduce_thread_txn(store_txn *t, const char *chat, const char *agent, context_state *out);

/* Whether two states are the same: version, time and data. */
int reduce_same_context(const context_state *a, const context_state *b);

#endif
