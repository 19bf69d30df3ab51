/* A world's budget as every door sees it (issue 25 §2): what it allows and what was spent, raising it,
 * and the budget-exhausted event, emitted once when a call's usage reaches it. The accounting itself is
 * the LLM layer's (llm/budget.h); the spend belongs to the current chat (stored with its llm-done steps,
 * restored with it, 0 for a new chat). */
#ifndef AG_WORLD_BUDGET_H
#define AG_WORLD_BUDGET_H

#include <stdint.h>

#include "world/world.h"

typedef struct world_budget_view {
  int64_t limit_tokens; /* 0: no limit */
  double limit_usd;     /* 0: no limit */
  int64_t tokens;       /* spent in the current chat */
  double usd;
  int reached;          /* no new LLM call starts */
} world_budget_view;

world_budget_view world_budget(const world *w);
/* Sets the limits (0: none), keeping prices and spend; a limit above the spend lets calls start again.
 * AG_ERR_INVALID (em says why) for a negative limit. */
int world_budget_set(world *w, int64_t tokens, double usd, ag_errmsg *em);
/* After a call's llm-done: emits budget-exhausted when the budget has just been reached. */
void world_budget_check(world *w);
/* Gives the world's LLM client spec's budget and rate limits, and turns its endpoint pauses into
 * rate-limited events (from world_new). */
int world_llm_setup(world *w, const world_spec *spec);

#endif
