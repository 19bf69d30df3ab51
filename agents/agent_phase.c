/* An agent's turn as a state machine, curl's way (lib/multi.c's multistate): the phases' names, the
 * table of legal moves (docs/architecture.md "An agent's turn" shows the same table), and the one
 * function that moves a turn, so that a breakpoint or a log line there sees every transition. */
#include "agents/agent_int.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static const char *const phase_names[] = {
#define AGENT_PHASE_NAME_(p, name) name,
    AGENT_PHASES(AGENT_PHASE_NAME_)
#undef AGENT_PHASE_NAME_
};

const char *agent_phase_name(agent_phase p) { return (unsigned)p < AGENT_PHASE_COUNT ? phase_names[p] : "phase"; }

#define TO(p) (1u << (p))
/* Where each phase may go. Every phase but idle may end in idle (the turn is over with nothing queued,
 * cancelled, reset, or confirmed done by another process) or in queued (over, the next one waiting). */
static const unsigned phase_next[AGENT_PHASE_COUNT] = {
    [AGENT_IDLE] = TO(AGENT_QUEUED),
    [AGENT_QUEUED] = TO(AGENT_CALLING) | TO(AGENT_ELSEWHERE) | TO(AGENT_ENDING) | TO(AGENT_IDLE) | TO(AGENT_REMEMBERING),
    [AGENT_CALLING] = TO(AGENT_TOOL_ROUND) | TO(AGENT_ENDING) | TO(AGENT_QUEUED) | TO(AGENT_IDLE),
    [AGENT_TOOL_ROUND] = TO(AGENT_TOOL_ROUND) | TO(AGENT_AWAITING_APPROVAL) | TO(AGENT_CALLING) |
                         TO(AGENT_ENDING) | TO(AGENT_QUEUED) | TO(AGENT_IDLE),
    [AGENT_AWAITING_APPROVAL] = TO(AGENT_TOOL_ROUND) | TO(AGENT_QUEUED) | TO(AGENT_IDLE),
    [AGENT_ELSEWHERE] = TO(AGENT_CALLING) | TO(AGENT_ENDING) | TO(AGENT_QUEUED) | TO(AGENT_IDLE) | TO(AGENT_REMEMBERING),
    [AGENT_ENDING] = TO(AGENT_QUEUED) | TO(AGENT_IDLE),
    [AGENT_REMEMBERING] = TO(AGENT_REMEMBERING) | TO(AGENT_CALLING) | TO(AGENT_ENDING) | TO(AGENT_QUEUED) | TO(AGENT_IDLE),
};

int agent_phase_can(agent_phase from, agent_phase to) {
  return (unsigned)from < AGENT_PHASE_COUNT && (unsigned)to < AGENT_PHASE_COUNT && (phase_next[from] & TO(to));
}

void agent__phase_enter(agent *a, agent_phase to, approval_state answer, const char *text) {
  agent_phase from = a->phase;
  assert(agent_phase_can(from, to));
  /* An answer goes only to the round that waited for it. */
  assert(answer == APPROVAL_NONE || (from == AGENT_AWAITING_APPROVAL && to == AGENT_TOOL_ROUND));
  /* Idle is what the world's quiet counts on: nothing answered, nothing waiting. */
  assert(to != AGENT_IDLE || (!a->answering && ag_ring_len(&a->inbox) == 0));
  /* A wait that ends without an answer (a cancel, a reset, the turn done elsewhere): the host forgets
   * the question and must not answer it. */
  if (from == AGENT_AWAITING_APPROVAL && answer == APPROVAL_NONE && a->host->approve_cancel)
    a->host->approve_cancel(a->host->ctx, a);
  a->phase = to;
  a->approval = to == AGENT_AWAITING_APPROVAL ? APPROVAL_ASKED : answer;
  free(a->human_text);
  /* NULL on no memory as well: the tool then gives an empty answer or the plain error. */
  a->human_text = answer != APPROVAL_NONE && text ? strdup(text) : NULL;
  if (from != to && a->host->phase) a->host->phase(a->host->ctx, a, from, to);
}
