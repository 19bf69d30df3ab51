/* The chat session rules of docs/behaviour.md §6 that decide something — when a chat is reused, when a
 * message titles it — as pure functions, so the session manager only applies them and a test can
 * check them with no store, world or loop. */
#ifndef AG_CHAT_RULES_H
#define AG_CHAT_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "agents/msg.h"

/* 1 when "new chat" reuses a chat with this title and stored message count: its title is still
 * "New Chat" or it holds no messages; 0 otherwise. title is borrowed. */
int chat_rule_reusable(const char *title, uint64_t message_count);

/* The title that messages msgs[0..n) give a chat now titled title: while it is "New Chat", the first
 * human message whose text makes a title (chat_title_make) gives it; agent, world and system messages
 * never do, and a human message that leaves nothing (only a greeting or mentions) lets the next one
 * try. On AG_OK *out is a new string (caller frees), or NULL when the title stays. All borrowed. */
int chat_rule_title(const char *title, ag_msg *const *msgs, size_t n, char **out);

#endif
