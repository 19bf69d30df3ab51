/* Turns in flight (issue 13 §4, docs/time.md "Resume after a crash"): a chat's event thread reduced to
 * the agents whose turn had started an LLM call and not ended when the process stopped. Pure: fed the
 * thread's steps in order, no storage, no world. */
#ifndef AG_CHAT_INFLIGHT_H
#define AG_CHAT_INFLIGHT_H

#include <stddef.h>
#include <stdint.h>

/* One agent's latest turn. */
typedef struct chat_turn {
  char *agent;   /* the agent's id (owned) */
  uint64_t seq;  /* the message it answers */
  int rerun;     /* it was already re-run once after a crash */
  int open;      /* started and not ended */
} chat_turn;

typedef struct chat_inflight {
  chat_turn *turns; /* one per agent seen, in order of first appearance */
  size_t n, cap;
} chat_inflight;

/* The thread's bookkeeping kinds (llm-start, turn-end): kept for resuming, not shown, not exported. */
int chat_thread_bookkeeping(const char *type);

/* Feeds one thread step (JSON text, len bytes): llm-start {agent, seq, rerun} opens the agent's turn,
 * turn-end {agent, seq, cancelled} closes it; every other step is ignored. AG_ERR_NOMEM only. */
int chat_inflight_step(chat_inflight *f, const char *json, size_t len);
/* Releases what the reduction holds (f stays usable, empty). */
void chat_inflight_free(chat_inflight *f);

#endif
