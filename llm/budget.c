/* Budgets: limits, prices and the spend of a client (see budget.h), the accounting of each finished call
 * and the refusal of calls once a limit is reached. The script provider costs nothing and is never
 * refused: it calls no model. */
#include "llm/budget.h"
#include "llm/provider.h"

#include "common/defer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct llm_budget_state {
  llm_budget b;
  llm_spend spent;
  int announced; /* the reached budget was reported by llm_client_budget_news */
};

int llm_budget_copy(llm_budget *dst, const llm_budget *src) {
  *dst = (llm_budget){.tokens = src->tokens, .usd = src->usd};
  if (!src->n_prices) return AG_OK;
  dst->prices = calloc(src->n_prices, sizeof *dst->prices);
  if (!dst->prices) return AG_ERR_NOMEM;
  for (size_t i = 0; i < src->n_prices; i++) {
    dst->prices[i] = src->prices[i];
    dst->n_prices = i + 1;
    if (!(dst->prices[i].model = strdup(src->prices[i].model))) {
      llm_budget_free(dst);
      return AG_ERR_NOMEM;
    }
  }
  return AG_OK;
}

void llm_budget_free(llm_budget *b) {
  for (size_t i = 0; i < b->n_prices; i++) free(b->prices[i].model);
  free(b->prices);
  *b = (llm_budget){0};
}

const llm_price *llm_budget_price(const llm_budget *b, const char *model) {
  for (size_t i = 0; b && model && i < b->n_prices; i++)
    if (strcmp(b->prices[i].model, model) == 0) return &b->prices[i];
  return NULL;
}

double llm_budget_cost(const llm_budget *b, const char *model, long input_tokens, long output_tokens) {
  const llm_price *p = llm_budget_price(b, model);
  if (!p) return 0;
  return ((double)input_tokens * p->input_per_mtok + (double)output_tokens * p->output_per_mtok) / 1e6;
}

int llm_client_set_budget(llm_client *c, const llm_budget *b) {
  struct llm_budget_state *s = c->budget;
  if (!b->tokens && b->usd <= 0 && !b->n_prices) {
    if (s) llm_budget_free(&s->b);
    free(s);
    c->budget = NULL;
    return AG_OK;
  }
  if (!s && !(s = calloc(1, sizeof *s))) return AG_ERR_NOMEM;
  llm_budget copy;
  int rc = llm_budget_copy(&copy, b);
  if (rc) {
    if (!c->budget) free(s);
    return rc;
  }
  llm_budget_free(&s->b);
  s->b = copy;
  c->budget = s;
  return AG_OK;
}

void llm_client_budget_free(llm_client *c) {
  if (!c->budget) return;
  llm_budget_free(&c->budget->b);
  free(c->budget);
  c->budget = NULL;
}

const llm_budget *llm_client_budget(const llm_client *c) { return c->budget ? &c->budget->b : NULL; }

int llm_client_set_limits(llm_client *c, int64_t tokens, double usd) {
  llm_budget b = {.tokens = tokens, .usd = usd};
  if (!c->budget) return llm_client_set_budget(c, &b);
  c->budget->b.tokens = tokens;
  c->budget->b.usd = usd;
  if (!llm_client_budget_reached(c)) c->budget->announced = 0;
  return AG_OK;
}

llm_spend llm_client_spent(const llm_client *c) { return c->budget ? c->budget->spent : (llm_spend){0}; }

void llm_client_set_spent(llm_client *c, llm_spend s) {
  if (!c->budget) return;
  c->budget->spent = s;
  /* A chat resumed past its budget has already said so: it is not announced again. */
  c->budget->announced = llm_client_budget_reached(c);
}

int llm_client_budget_reached(const llm_client *c) {
  const struct llm_budget_state *s = c->budget;
  if (!s) return 0;
  return (s->b.tokens > 0 && s->spent.tokens >= s->b.tokens) || (s->b.usd > 0 && s->spent.usd >= s->b.usd);
}

int llm_client_budget_news(llm_client *c) {
  if (!llm_client_budget_reached(c) || c->budget->announced) return 0;
  c->budget->announced = 1;
  return 1;
}

void llm_budget_account(llm_call *call) {
  llm_client *c = call->client;
  if (!call->ep || call->ops == &llm_script_ops || call->usage.cached) return;
  const llm_budget *b = c->budget ? &c->budget->b : NULL;
  call->usage.usd = llm_budget_cost(b, call->ep->cfg.model, call->usage.input_tokens, call->usage.output_tokens);
  if (!c->budget) return;
  c->budget->spent.tokens += call->usage.input_tokens + call->usage.output_tokens;
  c->budget->spent.usd += call->usage.usd;
}

/* A refused call: it fails from the loop, as every failure does, naming the budget. */
typedef struct refused_call {
  ag_defer_ticket step;
} refused_call;

static void refuse_step(void *arg) {
  llm_call *call = arg;
  const struct llm_budget_state *s = call->client->budget;
  llm_error_info info = {.attempts = 0};
  snprintf(info.type, sizeof info.type, "budget_exhausted");
  if (s && s->b.tokens > 0 && s->spent.tokens >= s->b.tokens)
    snprintf(info.message, sizeof info.message, "the world's budget is spent (%lld of %lld tokens): no new call starts",
             (long long)s->spent.tokens, (long long)s->b.tokens);
  else
    snprintf(info.message, sizeof info.message, "the world's budget is spent ($%.4f of $%.4f): no new call starts",
             s ? s->spent.usd : 0.0, s ? s->b.usd : 0.0);
  free(call->impl);
  call->impl = NULL;
  llm_call_finish(call, AG_ERR_LLM, NULL, &info);
}

static int refuse_start(llm_call *call, const llm_request *req) {
  (void)req;
  refused_call *r = calloc(1, sizeof *r);
  if (!r) return AG_ERR_NOMEM;
  call->impl = r;
  return ag_defer_push(call->client->defer, refuse_step, call, &r->step);
}

static void refuse_cancel(llm_call *call) {
  refused_call *r = call->impl;
  call->impl = NULL;
  if (r) ag_defer_cancel(call->client->defer, r->step);
  free(r);
}

const llm_provider_ops llm_budget_refuse_ops = {refuse_start, refuse_cancel};

const llm_provider_ops *llm_budget_gate(llm_client *c, llm_provider_kind kind, const llm_provider_ops *ops) {
  if (kind == LLM_SCRIPT || !c->budget || !llm_client_budget_reached(c)) return ops;
  return &llm_budget_refuse_ops;
}
