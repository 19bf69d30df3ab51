/* Summary mode in an agent's turn (issue 26): the entries that leave the memory window are folded into
 * a rolling summary (summary.h) that the prompt carries (agent_prompt.c). A script agent folds each
 * entry in place as it leaves; a model's agent asks its summariser at the start of its next turn, and
 * any entry about to leave RAM before then is folded in place, so that none is lost. */
#include "agents/agent_int.h"

#include "agents/summary.h"

#include <stdlib.h>
#include <string.h>

int agent__summary_init(agent *a, const agent_settings *s, llm_client *llm, ag_errmsg *em) {
  llm_endpoint *e = NULL;
  if (s->memory.mode == MEM_MODE_SUMMARY && s->llm.provider != LLM_SCRIPT) {
    llm_config cfg;
    int rc = llm_config_copy(&cfg, &s->llm);
    if (rc) return rc;
    if (s->memory.summary_model) {
      free(cfg.model);
      if (!(cfg.model = strdup(s->memory.summary_model))) rc = AG_ERR_NOMEM;
    }
    cfg.max_tokens = s->memory.summary_tokens; /* the provider stops it near the bound; summary_bound holds it */
    if (!rc) rc = llm_endpoint_new(llm, &cfg, &e, em);
    llm_config_free(&cfg);
    if (rc) return rc;
  }
  llm_endpoint_free(a->summarizer);
  a->summarizer = e;
  return AG_OK;
}

void agent__summary_clear(agent *a, int all) {
  free(a->summary);
  a->summary = NULL;
  a->summary_upto = a->summary_asked = 0;
  if (!all) return;
  llm_endpoint_free(a->summarizer);
  a->summarizer = NULL;
}

/* The entries of RAM from absolute index from up to upto (clamped to what RAM holds). */
static size_t ram_range(const agent *a, size_t from, size_t upto, size_t *first) {
  *first = from > a->mem_dropped ? from - a->mem_dropped : 0;
  size_t last = upto > a->mem_dropped ? upto - a->mem_dropped : 0;
  if (last > a->n_mem) last = a->n_mem;
  return last > *first ? last - *first : 0;
}

void agent__summary_fold_upto(agent *a, size_t upto) {
  if (a->s.memory.mode != MEM_MODE_SUMMARY || upto <= a->summary_upto) return;
  size_t first, n = ram_range(a, a->summary_upto, upto, &first);
  if (n) {
    char *s = summary_fold(a->summary, a->mem + first, n, a->s.memory.summary_tokens);
    if (!s) return; /* no memory: the next fold takes these entries too */
    free(a->summary);
    a->summary = s;
  }
  a->summary_upto = upto;
}

/* The summariser answered (or failed: the entries are folded in place and the turn goes on, an
 * llm-error said so); the turn's own call starts. Its call is reported as the memory's calls are (an
 * llm-done with its tokens, or an llm-error), so that it counts in the chat's usage and the budget. */
static void summary_on_done(void *ud, int err, const char *text, const llm_error_info *info) {
  agent *a = ud;
  agent__memory_call_done(a, err, text, info);
  char *s = err ? NULL : summary_bound(text, a->s.memory.summary_tokens);
  if (s && a->summary_asked > a->summary_upto) {
    free(a->summary);
    a->summary = s;
    a->summary_upto = a->summary_asked;
    /* Stored with the chat (its thread), since a model's summary cannot be made again on restore. */
    agent_report ev = {.kind = AGENT_REPORT_SUMMARY, .text = s, .len = strlen(s), .upto = a->summary_upto,
                       .seq = a->answering ? a->answering->seq : 0};
    if (a->host->report) a->host->report(a->host->ctx, a, &ev);
  } else {
    free(s);
    agent__summary_fold_upto(a, a->summary_asked);
  }
  if (agent__call_llm(a) != AG_OK) agent__end_turn(a);
}

int agent__summary_then_call(agent *a) {
  size_t total = agent_memory_total(a), window = a->memory_window > 0 ? (size_t)a->memory_window : 10;
  size_t upto = total > window ? total - window : 0, first;
  size_t n = ram_range(a, a->summary_upto, upto, &first);
  if (!a->summarizer || !n) {
    agent__summary_fold_upto(a, upto);
    return agent__call_llm(a);
  }
  char *sys = NULL, *user = NULL;
  int rc = summary_request(a->s.name, a->summary, a->mem + first, n, a->s.memory.summary_tokens, &sys, &user);
  if (!rc) {
    llm_message msgs[2] = {{.role = "system", .content = sys}, {.role = "user", .content = user}};
    llm_request req = {.messages = msgs, .n_messages = 2};
    llm_callbacks cb = {.on_done = summary_on_done};
    rc = llm_call_start(a->summarizer, &req, &cb, a, &a->call);
  }
  free(sys);
  free(user);
  if (rc) { /* no call: folded in place, the turn goes on */
    a->call = NULL;
    agent__summary_fold_upto(a, upto);
    return agent__call_llm(a);
  }
  a->summary_asked = upto;
  agent__set_phase(a, AGENT_CALLING);
  return AG_OK;
}

const char *agent_summary(const agent *a, size_t *upto) {
  if (upto) *upto = a->summary_upto;
  return a->summary;
}

int agent_set_summary(agent *a, const char *text, size_t upto) {
  char *s = text ? strdup(text) : NULL;
  if (text && !s) return AG_ERR_NOMEM;
  free(a->summary);
  a->summary = s;
  a->summary_upto = upto;
  return AG_OK;
}
