/* What the page draws of a stored chat (agora serve's GET …/chats/{chat}/graph, docs/serve.md): who
 * mentions whom (edges weighted by messages), each sender's messages and tokens, every LLM call's tokens
 * in the order of the chat (for tokens over time), and for a world on a virtual clock the simulated time
 * its messages carry and the schedule's deliveries (the messages of the sender "world"). One pass over
 * the transcript; agents and edges found by hash, so a chat of 100,000 messages among 1,000 agents costs
 * one read. */
#ifndef AG_CHAT_GRAPH_H
#define AG_CHAT_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "chat/usage.h"

/* One LLM call (an llm-done step): after which message, whose (an index into nodes.rows), its tokens. */
typedef struct chat_graph_call {
  uint64_t after_seq;
  size_t node;
  double tokens; /* input + output */
} chat_graph_call;

/* A message stamped with simulated time. */
typedef struct chat_graph_tick {
  uint64_t seq;
  int64_t sim_ms;
  int fire; /* sent by "world": a scheduled or scripted delivery */
} chat_graph_tick;

typedef struct chat_graph {
  chat_usage nodes;        /* by sender (agents, "human", "world"): calls = messages sent, in/out = tokens */
  chat_usage edges;        /* by "FROM\nTO": calls = messages of FROM naming @TO (once per message) */
  chat_graph_call *calls;  /* in the chat's order */
  size_t n_calls, cap_calls;
  chat_graph_tick *ticks;  /* the messages with simulated time, in order */
  size_t n_ticks, cap_ticks;
  uint64_t last_seq;       /* the chat's last message */
} chat_graph;

/* Reads chat_id's graph into *out (zeroed first; release with chat_graph_free, also after a failure).
 * AG_ERR_NOT_FOUND, em saying "no chat 'ID' in the database"; AG_ERR_NOMEM. */
int chat_graph_get(store *st, const char *chat_id, chat_graph *out, ag_errmsg *em);
void chat_graph_free(chat_graph *g);

#endif
