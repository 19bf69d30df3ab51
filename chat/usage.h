/* The tokens a stored chat's LLM calls reported, per agent: summed from the llm-done steps of its thread
 * (only calls that reported usage are stored). Printed by `chats show` and read by agora serve
 * (GET …/chats/{chat}/usage, the page's agents panel). */
#ifndef AG_CHAT_USAGE_H
#define AG_CHAT_USAGE_H

#include <stddef.h>

#include "chat/archive.h"

typedef struct chat_usage_row {
  const char *agent; /* owned by the usage */
  double in, out;    /* input and output tokens */
  size_t calls;
} chat_usage_row;

/* Rows in the order their agents first appear; any number of agents (looked up by hash). */
typedef struct chat_usage {
  chat_usage_row *rows;
  size_t n, cap;
  size_t *slots; /* open addressing over rows: index + 1, 0 empty */
  size_t n_slots;
} chat_usage;

/* Sums chat_id's usage into *out (zeroed first; release with chat_usage_free). AG_ERR_NOT_FOUND, em
 * saying "no chat 'ID' in the database"; AG_ERR_NOMEM. */
int chat_usage_get(store *st, const char *chat_id, chat_usage *out, ag_errmsg *em);
void chat_usage_free(chat_usage *u);
/* The row of key in u (zeroed first or filled by chat_usage_get), added (zeroed) when new: a table of
 * counters by name, which chat/graph.c also keeps its edges in. NULL when out of memory. The pointer
 * lasts until the next call adds a row; its index (r - u->rows) for good. */
chat_usage_row *chat_usage_row_of(chat_usage *u, const char *key);

#endif
