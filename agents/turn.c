/* Should an agent answer? (docs/behaviour.md §3–4). The rules run in the documented order over one agent's
 * turn state; they allocate nothing because the world runs them for every agent on every message. */
#include "agents/turn.h"

#include <stdio.h>
#include <strings.h>

/* Rule 5: who a human or world message addresses. */
static int human_addresses(const turn_input *in) {
  if (in->leading && in->leading->n > 0) return mention_list_contains(in->leading, in->agent_id);
  if (in->has_other_mentions) return 0; /* a remark about someone is addressed to no one */
  if (in->main_agent && in->main_agent[0]) return strcasecmp(in->main_agent, in->agent_id) == 0;
  return 1; /* a public message: every agent may answer */
}

turn_decision turn_decide(turn_state *st, const turn_input *in) {
  /* The sender decides the rules (§1); the kind only marks a turn-limit notice, which an agent sends. */
  ag_kind sk = in->sender ? ag_sender_kind(in->sender) : AG_KIND_SYSTEM;

  if (sk == AG_KIND_HUMAN || sk == AG_KIND_WORLD) { /* rule 1 */
    st->count = 0;
    st->notice_sent = 0;
  }
  if (!in->agent_id || !in->sender) return TURN_SKIP;
  if (strcasecmp(in->sender, in->agent_id) == 0) return TURN_SKIP; /* rule 2 */
  if (in->kind == AG_KIND_TURN_LIMIT) return TURN_SKIP;              /* rule 3 */
  if (sk == AG_KIND_SYSTEM) return TURN_SKIP;                        /* rule 4 */

  int addressed = sk == AG_KIND_AGENT ? mention_list_contains(in->leading, in->agent_id) /* rule 6 */
                                      : human_addresses(in);                             /* rule 5 */
  if (!addressed) return TURN_SKIP;

  int limit = in->turn_limit < 1 ? 1 : in->turn_limit; /* rule 7; a limit below 1 is read as 1 */
  if (st->count >= limit) {
    if (st->notice_sent) return TURN_SKIP;
    st->notice_sent = 1;
    return TURN_NOTICE;
  }
  st->count++; /* before the call, so a failed call still counts */
  return TURN_ANSWER;
}

int turn_notice_text(int limit, char *out, size_t cap) {
  if (!out || cap == 0) return -1;
  int n = snprintf(out, cap, "@human Turn limit reached (%d LLM calls). Please take control of the conversation.",
                   limit);
  return n < 0 || (size_t)n >= cap ? -1 : n;
}
