/* The built-in tools an agent may be given in a world file ("tools": [...], "monadic": true): their
 * names, the definitions offered to the model, and argument checks. Executing them needs the agent's
 * state and host, so that lives in agent.c; what is pure is here. */
#ifndef AG_TOOLS_H
#define AG_TOOLS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "llm/llm.h"

typedef enum tool_id {
  TOOL_LOAD_CONTEXT = 0,
  TOOL_SAVE_CONTEXT = 1,
  TOOL_SEND_MESSAGE = 2,
  TOOL_ASK_HUMAN = 3,
  TOOL_REMEMBER = 4, /* given to every agent whose memory mode is stream (docs/memory.md) */
  TOOL_COUNT
} tool_id;

#define TOOL_BIT(id) (1u << (id))
#define TOOL_MAX_ROUNDS 8 /* LLM → tools → LLM rounds in one turn */

/* The instruction added to a monadic agent's system prompt. */
#define TOOL_MONADIC_INSTRUCTION \
  "You keep a context of this conversation. Call load_context first to recall it, and finish by calling " \
  "save_context: its message is your reply, and topics, people and notes you pass are remembered."

/* The instruction for agents whose model has no tool calling (the context travels in the prompt). */
#define TOOL_INLINE_INSTRUCTION \
  "Your saved context is below. To update it, end your reply with a fenced block ```json {\"topics\": [...], " \
  "\"people\": [...], \"notes\": [...]} ``` holding only what to add; it is removed from what others see."

const char *tool_name(tool_id id);
/* AG_ERR_INVALID for an unknown name. */
int tool_parse(const char *name, tool_id *out);
/* The definition offered to the model (static storage). */
const llm_tool *tool_definition(tool_id id);

/* Checks a call's arguments; on failure writes why into err and returns AG_ERR_INVALID. *out is the
 * parsed object (caller frees) on success. */
int tool_args_parse(tool_id id, const char *args_json, cJSON **out, char *err, size_t cap);

/* Degraded mode: finds the last ```json fenced block in text; on success *args is its object and
 * *rest the text without it (both new, caller frees); AG_ERR_NOT_FOUND when there is none. */
int tool_inline_extract(const char *text, cJSON **args, char **rest);

#endif
