/* The prompt's size by estimate (issue 26, docs/world-file.md "context_tokens"): how many tokens a
 * prompt costs and how much of the memory window fits a budget. No tokenizer is exact for every
 * provider, so the estimate is the one the usage estimate already uses (llm/remote.c): a token per 4
 * bytes of text sent, rounded up, plus CONTEXT_BUDGET_PER_MESSAGE for each message's role and framing.
 * Pure: no I/O, no agent state. */
#ifndef AG_CONTEXT_BUDGET_H
#define AG_CONTEXT_BUDGET_H

#include <stddef.h>

#include "agents/msg.h"
#include "llm/llm.h"

#define CONTEXT_BUDGET_PER_MESSAGE 4 /* tokens of a message's role and framing */

/* Tokens of bytes of text: ceil(bytes / 4). */
size_t context_budget_tokens(size_t bytes);
/* Tokens of a request: each message's content, tool calls (names and arguments) and tool results,
 * CONTEXT_BUDGET_PER_MESSAGE each; each tool's name, description and parameter schema. */
size_t context_budget_request(const llm_message *msgs, size_t n, const llm_tool *tools, size_t n_tools);
/* Tokens memory entry m costs in a prompt ("<sender>: <text>", the longer of its two forms). */
size_t context_budget_entry(const ag_msg *m);
/* The window to send: the largest w <= window (window <= 0: all n) whose last w entries of memory
 * fit in budget beside fixed tokens (system prompt, summary, tools, the turn's tool rounds). Never
 * below 1 when n > 0: the message being answered always goes, even alone over the budget. */
int context_budget_window(size_t budget, size_t fixed, ag_msg *const *memory, size_t n, int window);

#endif
