/* Importance "llm" (docs/memory.md): the memories an agent got since its last turn are rated 1 to 10 by one
 * short call to its own LLM at the start of its next turn (Park et al.'s poignancy question), all of them in
 * one batch. Until then, and when the call fails, a memory has the fixed importance. The ratings are a
 * `memory-rated` event that the chat's thread stores, so that a restore sets them again. */
#include "agents/agent_int.h"

#include "common/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RATE_BATCH 50 /* memories rated by one call; more wait for the next turn */

static const char rate_ask[] =
    "On a scale of 1 to 10, where 1 is purely mundane (e.g. a greeting, a routine chore) and 10 is extremely "
    "poignant (e.g. a disaster, a break-up), rate the likely poignancy of each memory below. Answer with one "
    "number per line, in the same order, and nothing else.\n";

void agent_memory_rate(agent *a, uint64_t seq, double importance) {
  for (size_t i = 0; seq && i < a->stream.n; i++) {
    mem_entry *e = &a->stream.e[i];
    if (e->msg->seq != seq) continue;
    if (e->rated) return; /* the first rating wins: another host's later one, or a re-run's, is dropped */
    float v = (float)(importance < 1 ? 1 : importance > 10 ? 10 : importance);
    a->stream.since_reflect += v - e->importance;
    mem_stream_set_importance(&a->stream, i, v);
    e->rated = 1;
    /* One the rating call out asks about stays among the asked, so that its answers still line up with
     * them (rate_done), which then drops the answer for this one. */
    if (!a->rating) e->unrated = 0;
    return;
  }
}

/* The unrated memories' positions, oldest first, at most RATE_BATCH, into pos; how many. One rated
 * meanwhile (another host's rating came in while a call asked about it) is no longer unrated. */
static size_t unrated(agent *a, size_t *pos) {
  size_t n = 0;
  for (size_t i = 0; i < a->stream.n && n < RATE_BATCH; i++) {
    if (a->stream.e[i].rated) a->stream.e[i].unrated = 0;
    if (a->stream.e[i].unrated) pos[n++] = i;
  }
  return n;
}

/* The rating call answered: the memories it asked about are the first a->rating unrated ones (those that
 * came since are after them), each rated once. When the model answered, every one of them goes out with
 * its rating, the fixed importance for one it gave no number for, so that a host taking the agent over
 * does not ask again (docs/distributed.md "Memory across hosts"); one rated elsewhere meanwhile keeps that
 * rating. A failed call rates nothing and reports nothing. */
static void rate_done(void *ud, int err, const char *text, const llm_error_info *info) {
  agent *a = ud;
  agent__memory_call_done(a, err, text, info);
  size_t asked = a->rating;
  a->rating = 0;
  cJSON *rated = cJSON_CreateArray();
  const char *p = err ? "" : text;
  for (size_t i = 0, k = 0; i < a->stream.n && k < asked; i++) {
    mem_entry *e = &a->stream.e[i];
    if (!e->unrated) continue;
    k++;
    p += strcspn(p, "0123456789"); /* the next number, one per line */
    double v = *p ? strtod(p, (char **)&p) : 0;
    e->unrated = 0; /* answered or not: a memory is asked about once */
    if (err || e->rated) continue;
    agent_memory_rate(a, e->msg->seq, v >= 1 && v <= 10 ? v : e->importance);
    cJSON *pair = cJSON_CreateArray();
    cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)e->msg->seq));
    cJSON_AddItemToArray(pair, cJSON_CreateNumber(e->importance));
    cJSON_AddItemToArray(rated, pair);
  }
  char *json = cJSON_GetArraySize(rated) ? cJSON_PrintUnformatted(rated) : NULL;
  if (json && a->host->report) {
    agent_report ev = {.kind = AGENT_REPORT_RATED, .text = json, .len = strlen(json), .seq = a->answering->seq};
    a->host->report(a->host->ctx, a, &ev);
  }
  free(json);
  cJSON_Delete(rated);
  if (!agent__reflect_begin(a)) agent__turn_go(a);
}

int agent__rate_begin(agent *a) {
  size_t pos[RATE_BATCH], n;
  if (a->s.memory.mode != MEM_MODE_STREAM || a->s.memory.importance != MEM_IMPORTANCE_LLM || a->rounds || a->tlog.n ||
      !a->answering || !(n = unrated(a, pos)))
    return 0;
  ag_buf b;
  ag_buf_init(&b, 1u << 20);
  int rc = ag_buf_printf(&b, "%s", rate_ask);
  for (size_t k = 0; !rc && k < n; k++)
    rc = ag_buf_printf(&b, "[%zu] %s: %s\n", k + 1, a->stream.e[pos[k]].msg->sender, a->stream.e[pos[k]].msg->text);
  llm_message msgs[2] = {{.role = "system", .content = "You rate how important memories are."},
                         {.role = "user", .content = ag_buf_str(&b)}};
  llm_request req = {.messages = msgs, .n_messages = 2};
  llm_callbacks cb = {NULL, rate_done};
  if (!rc) rc = llm_call_start(a->llm, &req, &cb, a, &a->call);
  ag_buf_free(&b);
  a->rating = rc ? 0 : n;
  if (rc) {
    a->call = NULL;
    for (size_t k = 0; k < n; k++) a->stream.e[pos[k]].unrated = 0; /* not asked again: the fixed importance stays */
    return 0;
  }
  agent__set_phase(a, AGENT_REMEMBERING);
  return 1;
}
