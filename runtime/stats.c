/* A world's counts (stats.h). */
#include "runtime/stats.h"

void rt_stats_event(rt_stats *st, const world_event *e) {
  st->events++;
  if (e->kind == EV_LLM_DONE) {
    st->llm_done++;
    st->tokens_in += (uint64_t)(e->u.llm_done.input_tokens > 0 ? e->u.llm_done.input_tokens : 0);
    st->tokens_out += (uint64_t)(e->u.llm_done.output_tokens > 0 ? e->u.llm_done.output_tokens : 0);
  } else if (e->kind == EV_LLM_ERROR) {
    st->llm_failed++;
  } else if (e->kind == EV_RATE_LIMITED) {
    st->rate_limited++;
  }
}
