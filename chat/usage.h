/* A chat's token usage per agent, summed from the llm-done steps of its stored thread: what `chats show`
 * prints and agora_usage returns. */
#ifndef AG_CHAT_USAGE_H
#define AG_CHAT_USAGE_H

#include <stddef.h>

#include "chat/archive.h"

/* One agent's totals. */
typedef struct chat_usage_row {
  char agent[64];
  double input_tokens, output_tokens;
  size_t calls;
} chat_usage_row;

#define CHAT_USAGE_ROWS 64 /* agents beyond the 64th are summed in the last row's stead: never in practice */

/* The rows of chat_id into rows (CHAT_USAGE_ROWS of them), in the order the agents first answered; their
 * number into *n (0 when no call reported usage). Errors as chat_transcript_each. */
int chat_usage(store *st, const char *chat_id, chat_usage_row rows[CHAT_USAGE_ROWS], size_t *n, ag_errmsg *em);

#endif
