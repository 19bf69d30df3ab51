/* Printing a stored chat as `run` printed it: messages in order, with the chat's tool steps (its
 * event thread) after the message each followed. Shared by replay and chats show. */
#ifndef AG_CLI_TRANSCRIPT_H
#define AG_CLI_TRANSCRIPT_H

#include <cjson/cJSON.h>

#include "chat/archive.h"
#include "runtime/output.h"

/* From the database. delay_ms paces the messages (0: none). st and o are borrowed. */
int transcript_print_stored(store *st, const char *chat_id, output *o, long delay_ms, ag_errmsg *em);
/* From a validated snapshot document. */
int transcript_print_snapshot(const cJSON *snap, output *o, long delay_ms);
/* Prints each agent's context of a stored chat ("chats show --state"). */
int transcript_print_state(store *st, const char *chat_id, int json, ag_errmsg *em);

/* Prints the token totals per agent of a stored chat (from the llm-done events of its thread): one
 * "tokens of AGENT: N in, M out (K calls)" line each, or {"type":"usage",...} lines with json. Nothing
 * when no call reported usage. */
int transcript_print_usage(store *st, const char *chat_id, int json, ag_errmsg *em);

#endif
