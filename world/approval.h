/* Pending approvals: a tool call declared "approve": true waits for an answer from whoever can give
 * it (the console's next line, `run --yes`, later an HTTP call) while the loop goes on. ask_human's
 * question is the same kind of request, answered with a text instead of yes or no. Each request
 * has an id; the answer, a cancel (the turn was cancelled) or a timeout (denied) ends it, and the
 * agent's tool round resumes from a later loop iteration, never from inside the answering call. */
#ifndef AG_APPROVAL_H
#define AG_APPROVAL_H

#include <stddef.h>
#include <stdint.h>

#include "agents/agent.h"

struct event_base;

/* A question to the approver; every pointer is borrowed for the call. */
typedef struct world_approval {
  uint64_t id;           /* answers quote it (world_approval_answer) */
  const char *agent_id;
  const char *tool;
  const char *args_json; /* the call's arguments, JSON object text */
  const char *question;  /* ask_human: what to ask, answered with a text; NULL for an approval */
} world_approval;

/* The host side of approvals; ud is borrowed by the world. */
typedef struct world_approver {
  /* A new request: answer it now or later with world_approval_answer (the answer takes effect from
   * the loop, so answering from inside ask is fine). */
  void (*ask)(void *ud, const world_approval *req);
  /* The request ended without an answer: its turn was cancelled (timed_out 0) or no answer came in
   * time (timed_out 1: denied). Answers quoting its id are refused from now on. May be NULL. */
  void (*withdrawn)(void *ud, uint64_t id, int timed_out);
} world_approver;

/* The world's pending requests (one per agent at most: an agent runs its tool calls in order). */
typedef struct approval_desk approval_desk;

int approval_desk_new(struct event_base *base, approval_desk **out);
/* Drops requests still pending without telling anyone (their agents are gone first). */
void approval_desk_free(approval_desk *d);
/* ap is copied; NULL: no approver (every request is denied at once). */
void approval_desk_set_approver(approval_desk *d, const world_approver *ap, void *ud);
/* Milliseconds a request waits before it is denied; 0: no limit. */
void approval_desk_set_timeout(approval_desk *d, long ms);
/* Opens a request for agent a (borrowed until it ends) and asks the approver; question is NULL for an
 * approval. AG_ERR_NOT_FOUND when there is no approver: the caller denies. */
int approval_desk_ask(approval_desk *d, agent *a, const char *tool, const char *args_json, const char *question);
/* The agent stopped waiting: its request (if any) ends, withdrawn. */
void approval_desk_cancel(approval_desk *d, agent *a);
/* Answers request id: AG_ERR_NOT_FOUND when no such request is pending (ended, or never asked),
 * AG_ERR_STATE when it was already answered. */
int approval_desk_answer(approval_desk *d, uint64_t id, int allow);
/* Answers request id with a text (copied): for a question, allow 1 makes text the answer and allow 0
 * says nobody answers, text (may be NULL) saying why; for an approval the text is ignored. Codes as
 * approval_desk_answer, AG_ERR_NOMEM. */
int approval_desk_reply(approval_desk *d, uint64_t id, int allow, const char *text);
size_t approval_desk_pending(const approval_desk *d);

#endif
