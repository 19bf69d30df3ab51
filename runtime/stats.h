/* What a world did since it was opened, counted from its events at the output phase: LLM calls done and
 * failed, tokens reported, rate limits met, messages and events delivered. agora serve sums them for
 * /metrics, and libagora hands them out (agora_world_counts): one count for both. */
#ifndef AG_RT_STATS_H
#define AG_RT_STATS_H

#include <stdint.h>

#include "world/events.h"

typedef struct rt_stats {
  uint64_t llm_done, llm_failed, tokens_in, tokens_out, messages, events, rate_limited;
} rt_stats;

/* Counts one event delivered (a message is st->messages++). */
void rt_stats_event(rt_stats *st, const world_event *e);

#endif
