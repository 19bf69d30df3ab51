/* The turn log: what an agent's tool rounds add to its prompt (the assistant's tool-calling messages
 * and the tools' results), sent back with each further round and forgotten when the turn ends. */
#ifndef AG_TURN_LOG_H
#define AG_TURN_LOG_H

#include <stddef.h>

#include "llm/llm.h"

/* All strings and arrays are owned by the log. A message's tool_calls array is an allocation of its
 * own: pointers into it stay valid while the log grows (until turn_log_clear). */
typedef struct turn_log {
  llm_message *msgs;
  size_t n, cap;
} turn_log;

/* Forgets every entry (the log stays usable); turn_log_free also releases the array. */
void turn_log_clear(turn_log *l);
void turn_log_free(turn_log *l);
/* Appends the assistant's message with its tool calls (copied; text may be NULL). */
int turn_log_add_calls(turn_log *l, const char *text, const llm_tool_call *calls, size_t n);
/* Appends the result (JSON text, copied) of call (borrowed; may point into the log). */
int turn_log_add_result(turn_log *l, const llm_tool_call *call, const char *result);

#endif
