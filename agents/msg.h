/* A message on the bus: immutable once published, shared by reference between the world, agents'
 * memories and storage. */
#ifndef AG_MSG_H
#define AG_MSG_H

#include <stdint.h>

#include "agents/mention.h"

/* The sender's kind decides the rules (§1); AG_KIND_TURN_LIMIT marks an agent's turn-limit notice. */
typedef enum ag_kind {
  AG_KIND_HUMAN,
  AG_KIND_WORLD,
  AG_KIND_SYSTEM,
  AG_KIND_AGENT,
  AG_KIND_TURN_LIMIT
} ag_kind;

typedef struct ag_msg {
  int refs;
  uint64_t seq;          /* 1-based position in its chat, set by the world at publish */
  char *sender;          /* owned: "human", "world", "system" or an agent id, as published */
  char *text;            /* owned */
  ag_kind kind;
  int64_t ts_ms;         /* Unix time in milliseconds */
  int has_sim;           /* a world on a virtual clock stamped sim_ms (docs/time.md) */
  int64_t sim_ms;        /* simulated time, Unix ms; meaningful only with has_sim */
  mention_list leading;  /* leading mentions, resolved against the world's agents at publish */
  int has_other_mentions;/* an @mention appears somewhere that is not a leading mention */
} ag_msg;

/* Kind of a sender name: human/user/you (any case) → human, world → world, system → system, else agent. */
ag_kind ag_sender_kind(const char *sender);
/* "human", "world", "system", "agent", "turn-limit". */
const char *ag_kind_name(ag_kind kind);
/* Parses a kind name; returns -1 when unknown. */
int ag_kind_parse(const char *name);

/* A new message with one reference (caller owns it); copies sender and text. NULL on allocation
 * failure. Mentions are empty until the world parses them. */
ag_msg *ag_msg_new(const char *sender, const char *text, ag_kind kind);
ag_msg *ag_msg_ref(ag_msg *m);
void ag_msg_unref(ag_msg *m);

#endif
