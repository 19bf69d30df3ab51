/* The reduction of a thread to its turns in flight (see inflight.h). */
#include "chat/inflight.h"

#include "common/error.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

int chat_thread_bookkeeping(const char *type) {
  return type && (!strcmp(type, "llm-start") || !strcmp(type, "turn-end"));
}

static chat_turn *turn_of(chat_inflight *f, const char *agent) {
  for (size_t i = 0; i < f->n; i++)
    if (!strcmp(f->turns[i].agent, agent)) return &f->turns[i];
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
  f->n++;
  return t;
}

static uint64_t num(const cJSON *j, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
  return cJSON_IsNumber(v) && v->valuedouble > 0 ? (uint64_t)v->valuedouble : 0;
}

int chat_inflight_step(chat_inflight *f, const char *json, size_t len) {
  /* Most steps are tool steps: a look at the text spares parsing them. */
  if (!memmem(json, len, "\"llm-start\"", 11) && !memmem(json, len, "\"turn-end\"", 10)) return AG_OK;
  cJSON *j = cJSON_ParseWithLength(json, len);
  const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "type"));
  const char *agent = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "agent"));
  int rc = AG_OK;
  if (chat_thread_bookkeeping(type) && agent) {
    uint64_t seq = num(j, "seq");
    chat_turn *t = turn_of(f, agent);
    if (!t) {
      rc = AG_ERR_NOMEM;
    } else if (!strcmp(type, "llm-start")) {
      int rerun = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "rerun"));
      /* A turn's later tool rounds start calls too: the same turn, still re-run if it was. */
      t->rerun = (t->seq == seq && t->open ? t->rerun : 0) | rerun;
      t->seq = seq;
      t->open = 1;
    } else if (seq == 0 || seq == t->seq || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "cancelled"))) {
      t->open = 0;
    }
  }
  cJSON_Delete(j);
  return rc;
}

void chat_inflight_free(chat_inflight *f) {
  for (size_t i = 0; i < f->n; i++) free(f->turns[i].agent);
  free(f->turns);
  memset(f, 0, sizeof *f);
}
