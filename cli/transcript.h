/* Printing a stored chat as `run` printed it: messages in order, with the chat's tool steps (its
 * event thread) after the message each followed. Shared by replay and chats show. */
#ifndef AG_CLI_TRANSCRIPT_H
#define AG_CLI_TRANSCRIPT_H

#include <cjson/cJSON.h>

#include "cli/output.h"
#include "storage/store.h"

/* From the database, inside a read transaction. delay_ms paces the messages (0: none). */
int transcript_print_stored(store_txn *t, const char *chat_id, output *o, long delay_ms);
/* From a validated snapshot document. */
int transcript_print_snapshot(const cJSON *snap, output *o, long delay_ms);
/* Prints each agent's context of a stored chat ("chats show --state"). */
int transcript_print_state(store_txn *t, const char *chat_id, int json);

#endif
