/* Printing a stored chat as `run` printed it: messages in order, with the chat's tool steps (its
 * event thread) after the message each followed (replay; chats show prints it from the library). */
#ifndef AG_CLI_TRANSCRIPT_H
#define AG_CLI_TRANSCRIPT_H

#include <cjson/cJSON.h>

#include "chat/archive.h"
#include "runtime/output.h"

/* From the database. delay_ms paces the messages (0: none). st and o are borrowed. */
int transcript_print_stored(store *st, const char *chat_id, output *o, long delay_ms, ag_errmsg *em);
/* From a validated snapshot document. */
int transcript_print_snapshot(const cJSON *snap, output *o, long delay_ms);

#endif
