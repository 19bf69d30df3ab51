/* What the built-in tools do to the pieces they touch: checking a call against the tools an agent was
 * given, load_context and save_context over a context, send_message's text, and the inline-context
 * mode of a model without tool calling. No agent, host or loop: every result is JSON text that goes
 * back to the model, a new string the caller frees (NULL only on no memory). */
#ifndef AG_TOOL_EXEC_H
#define AG_TOOL_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "agents/context.h"
#include "agents/mention.h"
#include "agents/tools.h"
#include "llm/llm.h"

/* {"error": fmt with detail}. */
char *tool_exec_error(const char *fmt, const char *detail);
/* Whether a result is an error result. */
int tool_exec_failed(const char *result);

/* Checks call c against allowed (TOOL_BIT()s): NULL with *id and *args (the parsed arguments, caller
 * deletes) when it may run, else the error result (an unknown tool, one not given, bad arguments). */
char *tool_exec_check(unsigned allowed, const llm_tool_call *c, tool_id *id, cJSON **args);

/* load_context: the context as JSON. */
char *tool_exec_load(const context_state *ctx);
/* save_context: applies args to ctx stamped at_ms. Its "message" goes to *reply when *reply is still
 * NULL (a new string the caller frees): the reply that completes the turn. */
char *tool_exec_save(context_state *ctx, const cJSON *args, int64_t at_ms, char **reply);

/* send_message's text (§3.6): the recipients in args "to" as leading mentions, then args "text". ids
 * are the world's agent ids (borrowed). On success *out is the text (caller frees); when a recipient
 * is not an agent of the world, *out is NULL and the result is the error result. NULL = ok. */
char *tool_exec_message(const cJSON *args, const char *const *ids, size_t n_ids, char **out);
/* The same with the world's ids as a mention_known (borrowed): O(1) per recipient with a lookup. */
char *tool_exec_message_known(const cJSON *args, const mention_known *known, char **out);
/* ask_human's result: {"answer": text}. */
char *tool_exec_answer(const char *text);
/* send_message's result once the message went out as seq. */
char *tool_exec_sent(uint64_t seq);

/* Degraded mode: text with a fenced JSON block updates ctx (stamped at_ms). Returns 1 when text had
 * such a block: *rest is the text without it, *args_json the block and *result_json the outcome (new
 * strings the caller frees), *failed whether applying it failed. 0: no block, nothing changed. */
int tool_exec_inline(context_state *ctx, const char *text, int64_t at_ms, char **rest, char **args_json,
                     char **result_json, int *failed);

#endif
