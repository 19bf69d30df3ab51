/* The world's face of the LLM layer's budget (see world_budget.h). */
#include "world/world_budget.h"

#include "llm/budget.h"
#include "llm/limiter.h"

world_budget_view world_budget(const world *w) {
  llm_client *c = world_llm(w);
  const llm_budget *b = llm_client_budget(c);
  llm_spend s = llm_client_spent(c);
  return (world_budget_view){.limit_tokens = b ? b->tokens : 0, .limit_usd = b ? b->usd : 0, .tokens = s.tokens,
                             .usd = s.usd, .reached = llm_client_budget_reached(c)};
}

int world_budget_set(world *w, int64_t tokens, double usd, ag_errmsg *em) {
  if (tokens < 0 || !(usd >= 0)) return ag_fail(em, AG_ERR_INVALID, "budget: limits must be 0 (none) or more");
  return llm_client_set_limits(world_llm(w), tokens, usd);
}

static void on_rate_limited(void *ud, const char *endpoint, int64_t until_ms) {
  world_emit(ud, &(world_event){EV_RATE_LIMITED, .u.rate = {.endpoint = endpoint, .until_ms = until_ms}});
}

int world_llm_setup(world *w, const world_spec *spec) {
  llm_client *c = world_llm(w);
  int rc = llm_client_set_budget(c, &spec->budget);
  if (!rc && spec->rate_limits.n) rc = llm_client_set_rate_limits(c, &spec->rate_limits);
  if (!rc) llm_client_on_rate_limited(c, on_rate_limited, w);
  return rc;
}

void world_budget_check(world *w) {
  if (!llm_client_budget_news(world_llm(w))) return;
  world_budget_view v = world_budget(w);
  world_emit(w, &(world_event){EV_BUDGET_EXHAUSTED, .u.budget = {.tokens = v.tokens, .usd = v.usd,
                                                                 .limit_tokens = v.limit_tokens,
                                                                 .limit_usd = v.limit_usd}});
}
