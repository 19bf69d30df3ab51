/* Should an agent answer? (docs/behaviour.md §3–4) — the decision and the turn counting, as one pure
 * function over a small state, so every rule is testable without a world. */
#ifndef AG_TURN_H
#define AG_TURN_H

#include <stddef.h>

#include "agents/msg.h"

typedef struct turn_state {
  int count;       /* LLM calls since the last human/world message */
  int notice_sent; /* the turn-limit notice went out since the last reset */
} turn_state;

typedef enum turn_decision {
  TURN_SKIP = 0,   /* not addressed (or may not answer): do nothing, do not store the message */
  TURN_ANSWER = 1, /* answer: the count was already incremented */
  TURN_NOTICE = 2  /* addressed but over the limit: publish the turn-limit notice, and decline the
                      answers still queued (decided before the limit was reached): an agent does not
                      speak after its own notice until the next human/world message (issue 15 item 7) */
} turn_decision;

typedef struct turn_input {
  const char *agent_id;        /* this agent (lower-case id) */
  const char *sender;          /* the message's sender, as published */
  ag_kind kind;                /* the message's kind (AG_KIND_TURN_LIMIT for a notice) */
  const mention_list *leading; /* the message's leading mentions */
  int has_other_mentions;      /* mentions elsewhere in the message */
  const char *main_agent;      /* the world's main agent id, or NULL */
  int turn_limit;              /* ≥ 1 */
} turn_input;

/* Applies §3 in order to one agent: resets *st on a human/world message (rule 1), decides, and on
 * TURN_ANSWER increments st->count (before the call, so failed calls count), on TURN_NOTICE sets
 * st->notice_sent (a second notice before a reset becomes TURN_SKIP). */
turn_decision turn_decide(turn_state *st, const turn_input *in);

/* Writes the notice text for limit (§4) into out; returns its length, or -1 if cap is too small. */
int turn_notice_text(int limit, char *out, size_t cap);

#endif
