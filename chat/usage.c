/* A chat's token usage per agent (see usage.h): one pass over its transcript, agents found by hash so
 * that a world of thousands of agents costs the same per call as one of three. */
#include "chat/usage.h"

#include "chat/transcript.h"

#include <stdlib.h>
#include <string.h>

static size_t hash(const char *s) {
  size_t h = 1469598103934665603u; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
  return h;
}

/* Doubles the slot table (kept at most half full) and places every row again. */
static int rehash(chat_usage *u) {
  size_t n = u->n_slots ? u->n_slots * 2 : 64;
  size_t *slots = calloc(n, sizeof *slots);
  if (!slots) return AG_ERR_NOMEM;
  for (size_t i = 0; i < u->n; i++) {
    size_t k = hash(u->rows[i].agent) & (n - 1);
    while (slots[k]) k = (k + 1) & (n - 1);
    slots[k] = i + 1;
  }
  free(u->slots);
  u->slots = slots, u->n_slots = n;
  return AG_OK;
}

chat_usage_row *chat_usage_row_of(chat_usage *u, const char *agent) {
  if (2 * (u->n + 1) > u->n_slots && rehash(u)) return NULL;
  size_t k = hash(agent) & (u->n_slots - 1);
  for (; u->slots[k]; k = (k + 1) & (u->n_slots - 1))
    if (!strcmp(u->rows[u->slots[k] - 1].agent, agent)) return &u->rows[u->slots[k] - 1];
  if (u->n == u->cap) {
    size_t ncap = u->cap ? u->cap * 2 : 16;
    chat_usage_row *p = realloc(u->rows, ncap * sizeof *p);
    if (!p) return NULL;
    u->rows = p, u->cap = ncap;
  }
  char *name = strdup(agent);
  if (!name) return NULL;
  u->rows[u->n] = (chat_usage_row){.agent = name};
  u->slots[k] = ++u->n;
  return &u->rows[u->n - 1];
}

static int usage_entry(const chat_entry *e, void *arg) {
  if (e->msg || e->kind != EV_LLM_DONE) return 0;
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(e->fields, "agent");
  chat_usage_row *r = chat_usage_row_of(arg, cJSON_IsString(a) ? a->valuestring : "?");
  if (!r) return AG_ERR_NOMEM;
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(e->fields, "input_tokens");
  const cJSON *out = cJSON_GetObjectItemCaseSensitive(e->fields, "output_tokens");
  r->in += cJSON_IsNumber(in) ? in->valuedouble : 0;
  r->out += cJSON_IsNumber(out) ? out->valuedouble : 0;
  r->calls++;
  return 0;
}

int chat_usage_get(store *st, const char *chat_id, chat_usage *out, ag_errmsg *em) {
  memset(out, 0, sizeof *out);
  int rc = chat_transcript_each(st, chat_id, usage_entry, out, em);
  if (rc) chat_usage_free(out);
  if (rc == AG_ERR_NOMEM) ag_fail(em, rc, "out of memory");
  return rc;
}

void chat_usage_free(chat_usage *u) {
  for (size_t i = 0; i < u->n; i++) free((char *)u->rows[i].agent);
  free(u->rows);
  free(u->slots);
  memset(u, 0, sizeof *u);
}
