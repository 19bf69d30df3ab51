/* Budgets (issue 25 §2): a world's limits on the tokens and dollars its LLM calls may spend, the
 * per-model prices that turn tokens into dollars (from the user's world file: no price table is compiled
 * in), and the spend so far, kept on the world's llm_client. Once the spend reaches a limit no new call
 * starts (it fails from the loop with error type "budget_exhausted"); calls in flight finish and count. */
#ifndef AG_LLM_BUDGET_H
#define AG_LLM_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "llm/llm.h"

/* The price of one model, in dollars per million tokens. model owned by the holder. */
typedef struct llm_price {
  char *model;
  double input_per_mtok, output_per_mtok;
} llm_price;

/* What a world file says: `budget` {tokens, usd} and `pricing`. A limit of 0 is no limit. */
typedef struct llm_budget {
  int64_t tokens;
  double usd;
  llm_price *prices; /* owned, n_prices of them */
  size_t n_prices;
} llm_budget;

/* Deep copy (dst overwritten; on failure left empty) and free. */
int llm_budget_copy(llm_budget *dst, const llm_budget *src);
void llm_budget_free(llm_budget *b);
/* The price of model (exact name), or NULL. */
const llm_price *llm_budget_price(const llm_budget *b, const char *model);
/* The dollars of a call's usage at model's price (0 without a price). */
double llm_budget_cost(const llm_budget *b, const char *model, long input_tokens, long output_tokens);

/* What was spent: tokens (input + output) and dollars. */
typedef struct llm_spend {
  int64_t tokens;
  double usd;
} llm_spend;

/* Sets the client's limits and prices (copied); a budget with no limits and no prices turns it off. */
int llm_client_set_budget(llm_client *c, const llm_budget *b);
/* The client's budget, or NULL when none was set. */
const llm_budget *llm_client_budget(const llm_client *c);
/* Changes only the limits (0: none), keeping prices and spend: raising a reached budget lets calls start
 * again. */
int llm_client_set_limits(llm_client *c, int64_t tokens, double usd);
/* The spend so far, and setting it (a chat resumed brings its stored spend; a new chat starts at 0). */
llm_spend llm_client_spent(const llm_client *c);
void llm_client_set_spent(llm_client *c, llm_spend s);
/* 1 when a limit is set and the spend has reached it. */
int llm_client_budget_reached(const llm_client *c);
/* 1 exactly once each time the budget becomes reached (the world announces it then), else 0. */
int llm_client_budget_news(llm_client *c);

#endif
