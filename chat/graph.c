/* A stored chat's conversation graph, tokens per call and simulated time (see graph.h). */
#include "chat/graph.h"

#include "agents/mention.h"
#include "chat/transcript.h"

#include <stdlib.h>
#include <string.h>

/* Room for one more element of size sz in *arr (n used, *cap allocated), doubling; 0 or AG_ERR_NOMEM. */
static int grow(void **arr, size_t n, size_t *cap, size_t sz) {
  if (n < *cap) return AG_OK;
  size_t ncap = *cap ? *cap * 2 : 256;
  void *p = realloc(*arr, ncap * sz);
  if (!p) return AG_ERR_NOMEM;
  *arr = p, *cap = ncap;
  return AG_OK;
}

/* One edge per agent a message names (a name written twice counts once). */
static int add_edges(chat_graph *g, const ag_msg *m) {
  if (!strchr(m->text, '@')) return AG_OK; /* most messages name nobody: no parse */
  mention_list l = {0};
  int rc = mention_anywhere(m->text, &l);
  size_t fl = strlen(m->sender);
  char key[2 * MENTION_ID_MAX + 8];
  for (size_t i = 0; !rc && i < l.n; i++) {
    int seen = 0;
    for (size_t j = 0; j < i && !seen; j++) seen = !strcmp(l.ids[i], l.ids[j]);
    size_t tl = strlen(l.ids[i]);
    if (seen || !strcmp(l.ids[i], m->sender) || fl + tl + 2 > sizeof key) continue;
    memcpy(key, m->sender, fl);
    key[fl] = '\n';
    memcpy(key + fl + 1, l.ids[i], tl + 1);
    chat_usage_row *r = chat_usage_row_of(&g->edges, key);
    if (!r) rc = AG_ERR_NOMEM;
    else r->calls++;
  }
  mention_list_free(&l);
  return rc;
}

static int add_message(chat_graph *g, const ag_msg *m) {
  g->last_seq = m->seq;
  chat_usage_row *r = chat_usage_row_of(&g->nodes, m->sender);
  if (!r) return AG_ERR_NOMEM;
  r->calls++;
  if (m->has_sim) {
    if (grow((void **)&g->ticks, g->n_ticks, &g->cap_ticks, sizeof *g->ticks)) return AG_ERR_NOMEM;
    g->ticks[g->n_ticks++] = (chat_graph_tick){.seq = m->seq, .sim_ms = m->sim_ms, .fire = !strcmp(m->sender, "world")};
  }
  return add_edges(g, m);
}

static double number(const cJSON *fields, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(fields, key);
  return cJSON_IsNumber(v) && v->valuedouble > 0 ? v->valuedouble : 0;
}

static int graph_entry(const chat_entry *e, void *arg) {
  chat_graph *g = arg;
  if (e->msg) return add_message(g, e->msg);
  if (e->kind != EV_LLM_DONE) return 0;
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(e->fields, "agent");
  chat_usage_row *r = chat_usage_row_of(&g->nodes, cJSON_IsString(a) ? a->valuestring : "?");
  if (!r || grow((void **)&g->calls, g->n_calls, &g->cap_calls, sizeof *g->calls)) return AG_ERR_NOMEM;
  double in = number(e->fields, "input_tokens"), out = number(e->fields, "output_tokens");
  r->in += in, r->out += out;
  /* a step is handed over after the message it is anchored after: the last one seen */
  g->calls[g->n_calls++] = (chat_graph_call){.after_seq = g->last_seq, .node = (size_t)(r - g->nodes.rows),
                                             .tokens = in + out};
  return 0;
}

int chat_graph_get(store *st, const char *chat_id, chat_graph *out, ag_errmsg *em) {
  memset(out, 0, sizeof *out);
  int rc = chat_transcript_each(st, chat_id, graph_entry, out, em);
  if (rc == AG_ERR_NOMEM) ag_fail(em, rc, "out of memory");
  return rc;
}

void chat_graph_free(chat_graph *g) {
  chat_usage_free(&g->nodes);
  chat_usage_free(&g->edges);
  free(g->calls);
  free(g->ticks);
  memset(g, 0, sizeof *g);
}
