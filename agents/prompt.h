/* The prompt an agent sends (docs/behaviour.md §3): its system prompt with what its tools need it to
 * know, and the memory window as chat messages. Pure: no I/O and no agent state. */
#ifndef AG_PROMPT_H
#define AG_PROMPT_H

#include <stddef.h>

#include "agents/context.h"
#include "agents/msg.h"
#include "llm/llm.h"

/* Builds the prompt for the last memory entry (§3): system prompt, then the last window messages,
 * own replies as "assistant", others as "user" with "<sender>: " before the text. The conversation always
 * opens on a user turn: own replies before the window's first other message are sent as user turns,
 * "<self_id>: " before the text, like everyone else's. *out (array) and
 * *arena (the strings) are new allocations the caller frees; memory is borrowed. */
int prompt_build(const char *system_prompt, const char *self_id, ag_msg *const *memory, size_t n, int window,
                 llm_message **out, size_t *n_out, char **arena);

/* What shapes the system prompt as sent; borrowed. */
typedef struct prompt_tools {
  int monadic;                 /* the agent keeps a context through load/save_context */
  int tool_support;            /* the model calls tools natively */
  int inline_context;          /* no tool support but save_context: the context travels in the prompt */
  const context_state *ctx;    /* the agent's context, for inline_context */
} prompt_tools;

/* The system prompt as sent: the agent's own (may be NULL), plus what its tools need it to know. NULL
 * when there is none at all; otherwise a new string the caller frees (NULL also on no memory). */
char *prompt_system(const char *system_prompt, const prompt_tools *t);

#endif
