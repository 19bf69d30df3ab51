/* Turns in flight (issue 13 §4, docs/time.md "Resume after a crash"): a chat's event thread reduced to
 * the agents whose turn had started an LLM call and not ended when the process stopped. Pure: fed the
 * thread's steps in order, no storage, no world. */
#ifndef AG_CHAT_INFLIGHT_H
#define AG_CHAT_INFLIGHT_H

#include <stddef.h>
#include <stdint.h>

/* A turn decided and not ended. */
typedef struct chat_turn {
  char *agent;   /* the agent's id (owned) */
  uint64_t seq;  /* the message it answers */
  int started;   /* its LLM call had started (else it waited in the agent's inbox) */
  int rerun;     /* it was already re-run once after a crash */
} chat_turn;

typedef struct chat_inflight {
  chat_turn *turns; /* the open turns, in the order they were decided (an agent answers in this order) */
  size_t n, cap;
} chat_inflight;

/* The thread's bookkeeping kinds (turn-queued, llm-start, turn-end): kept for resuming, not shown, not
 * exported. */
int chat_thread_bookkeeping(const char *type);

/* Feeds one thread step (JSON text, len bytes); every kind but these is ignored:
 *   turn-queued {agent, seq, rerun?}  the agent will answer seq when it is free (rerun: after a crash)
 *   llm-start {agent, seq, rerun?}    its turn answering seq started a call (opened if not queued)
 *   turn-end {agent, seq}             that turn is over
 *   turn-end {agent, cancelled: true} every turn of the agent is over (Ctrl-C)
 *   turn-end {agent, queued: true}    its turns not started are dropped (its turn-limit notice)
 * AG_ERR_NOMEM only. */
int chat_inflight_step(chat_inflight *f, const char *json, size_t len);
/* Releases what the reduction holds (f stays usable, empty). */
void chat_inflight_free(chat_inflight *f);

#endif
