/* Branching a chat (issue 13): a new chat holding messages 1..SEQ of a source chat, with every agent's
 * memory, turn count and context as they were right after SEQ, titled "<title> (branch)". The source
 * is untouched; the whole branch is one write transaction. */
#ifndef AG_CHAT_BRANCH_H
#define AG_CHAT_BRANCH_H

#include <stdint.h>

#include "chat/archive.h"

/* Branches chat_id at seq (1..its last message) into a new chat of the same world; its id into out.
 * AG_ERR_NOT_FOUND for no such chat, AG_ERR_INVALID for a seq out of range (em says which). */
int chat_branch(store *st, const char *chat_id, uint64_t seq, char out[CHAT_ID_MAX], ag_errmsg *em);

/* The same inside the caller's write transaction (chat/ only: truncating a chat rebuilds it so). */
typedef struct store_txn store_txn;
int chat_branch__in(store_txn *t, const char *chat_id, uint64_t seq, char out[CHAT_ID_MAX], ag_errmsg *em);

#endif
