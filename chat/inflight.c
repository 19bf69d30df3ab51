/* The reduction of a thread to its turns in flight (see inflight.h). */
#include "chat/inflight.h"

#include "common/error.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

int chat_thread_bookkeeping(const char *type) {
  return type && (!strcmp(type, "turn-queued") || !strcmp(type, "llm-start") || !strcmp(type, "turn-end"));
}

static chat_turn *turn_find(chat_inflight *f, const char *agent, uint64_t seq) {
  for (size_t i = 0; i < f->n; i++)
    if (f->turns[i].seq == seq && !strcmp(f->turns[i].agent, agent)) return &f->turns[i];
  return NULL;
}

static chat_turn *turn_add(chat_inflight *f, const char *agent, uint64_t seq) {
  if (f->n == f->cap) {
    size_t ncap = f->cap ? f->cap * 2 : 8;
    chat_turn *p = realloc(f->turns, ncap * sizeof *p);
    if (!p) return NULL;
    f->turns = p;
    f->cap = ncap;
  }
  chat_turn *t = &f->turns[f->n];
  memset(t, 0, sizeof *t);
  if (!(t->agent = strdup(agent))) return NULL;
  t->seq = seq;
  f->n++;
  return t;
}

/* Drops the agent's turns that match: seq (0: any), and only those not started when queued_only. */
static void turn_drop(chat_inflight *f, const char *agent, uint64_t seq, int queued_only) {
  size_t k = 0;
  for (size_t i = 0; i < f->n; i++) {
    chat_turn *t = &f->turns[i];
    if (!strcmp(t->agent, agent) && (!seq || t->seq == seq) && !(queued_only && t->started)) free(t->agent);
    else f->turns[k++] = *t;
  }
  f->n = k;
}

static int flag(const cJSON *j, const char *key) { return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, key)); }

int chat_inflight_step(chat_inflight *f, const char *json, size_t len) {
  /* Most steps are tool steps: a look at the text spares parsing them. */
  if (!memmem(json, len, "\"turn-", 6) && !memmem(json, len, "\"llm-start\"", 11)) return AG_OK;
  cJSON *j = cJSON_ParseWithLength(json, len);
  const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "type"));
  const char *agent = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "agent"));
  const cJSON *sj = cJSON_GetObjectItemCaseSensitive(j, "seq");
  uint64_t seq = cJSON_IsNumber(sj) && sj->valuedouble > 0 ? (uint64_t)sj->valuedouble : 0;
  int rc = AG_OK;
  if (!chat_thread_bookkeeping(type) || !agent) {
    /* not a step of a turn */
  } else if (!strcmp(type, "turn-end")) {
    int all = flag(j, "cancelled"), queued = flag(j, "queued");
    turn_drop(f, agent, all || queued ? 0 : seq, queued);
  } else if (seq) {
    /* A turn's later tool rounds start calls too: the same turn, still a re-run if it was one. */
    chat_turn *t = turn_find(f, agent, seq);
    if (!t && !(t = turn_add(f, agent, seq))) rc = AG_ERR_NOMEM;
    if (t) t->rerun |= flag(j, "rerun"), t->started |= !strcmp(type, "llm-start");
  }
  cJSON_Delete(j);
  return rc;
}

void chat_inflight_free(chat_inflight *f) {
  for (size_t i = 0; i < f->n; i++) free(f->turns[i].agent);
  free(f->turns);
  memset(f, 0, sizeof *f);
}
