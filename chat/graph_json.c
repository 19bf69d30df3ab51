/* A stored chat's graph as JSON (graph_json.h): chat/graph.c reads it in one pass; this ranks the
 * senders and cuts what a page draws to a fixed size. */
#include "chat/graph_json.h"

#include "chat/graph.h"

#include <stdlib.h>
#include <string.h>

#define GRAPH_SERIES 8   /* agents in tokens over time: the ones with the most tokens */
#define GRAPH_TICKS 500  /* simulated-time ticks: the last ones */

static const chat_usage_row *sort_rows; /* for the comparisons: qsort has no context argument */

/* Ties go by name, so that the same chat ranks the same on every call. */
static int cmp_double(double x, double y, const chat_usage_row *a, const chat_usage_row *b) {
  return x != y ? (x < y ? 1 : -1) : strcmp(a->agent, b->agent);
}
/* The graph's order: most messages sent, then most tokens. */
static int by_messages(const void *a, const void *b) {
  const chat_usage_row *x = &sort_rows[*(const size_t *)a], *y = &sort_rows[*(const size_t *)b];
  if (x->calls != y->calls) return x->calls < y->calls ? 1 : -1;
  return cmp_double(x->in + x->out, y->in + y->out, x, y);
}
/* Tokens over time: most tokens. */
static int by_tokens(const void *a, const void *b) {
  const chat_usage_row *x = &sort_rows[*(const size_t *)a], *y = &sort_rows[*(const size_t *)b];
  return cmp_double(x->in + x->out, y->in + y->out, x, y);
}

/* The nodes in the order cmp says: a new array of indexes into g->nodes.rows, NULL when out of memory. */
static size_t *ranked(const chat_graph *g, int (*cmp)(const void *, const void *)) {
  size_t *idx = malloc((g->nodes.n ? g->nodes.n : 1) * sizeof *idx);
  if (!idx) return NULL;
  for (size_t i = 0; i < g->nodes.n; i++) idx[i] = i;
  sort_rows = g->nodes.rows;
  qsort(idx, g->nodes.n, sizeof *idx, cmp);
  return idx;
}

/* The first n ranked nodes, and the edges whose both ends are among them. */
static void add_nodes(cJSON *j, const chat_graph *g, const size_t *idx, size_t n) {
  cJSON *nodes = cJSON_AddArrayToObject(j, "nodes"), *edges = cJSON_AddArrayToObject(j, "edges");
  for (size_t i = 0; i < n; i++) {
    const chat_usage_row *r = &g->nodes.rows[idx[i]];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", r->agent);
    cJSON_AddNumberToObject(o, "messages", (double)r->calls);
    cJSON_AddNumberToObject(o, "input_tokens", r->in);
    cJSON_AddNumberToObject(o, "output_tokens", r->out);
    cJSON_AddItemToArray(nodes, o);
  }
  cJSON_AddNumberToObject(j, "more_nodes", (double)(g->nodes.n - n));
  for (size_t e = 0; e < g->edges.n; e++) {
    const chat_usage_row *r = &g->edges.rows[e];
    const char *nl = strchr(r->agent, '\n');
    char from[CHAT_ID_MAX];
    size_t fl = (size_t)(nl - r->agent);
    if (fl >= sizeof from) continue;
    memcpy(from, r->agent, fl);
    from[fl] = '\0';
    int has_from = 0, has_to = 0;
    for (size_t i = 0; i < n && !(has_from && has_to); i++) {
      const char *id = g->nodes.rows[idx[i]].agent;
      has_from |= !strcmp(id, from);
      has_to |= !strcmp(id, nl + 1);
    }
    if (!has_from || !has_to) continue;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "from", from);
    cJSON_AddStringToObject(o, "to", nl + 1);
    cJSON_AddNumberToObject(o, "messages", (double)r->calls);
    cJSON_AddItemToArray(edges, o);
  }
}

/* Tokens over time: the tokens of each of the k senders with most (idx: by_tokens) summed up to the end
 * of each of the points slices of the chat (by message number). */
static void add_series(cJSON *j, const chat_graph *g, const size_t *idx, size_t k, size_t points) {
  cJSON *t = cJSON_AddObjectToObject(j, "tokens"), *seqs = cJSON_AddArrayToObject(t, "seqs");
  cJSON *agents = cJSON_AddArrayToObject(t, "agents");
  uint64_t last = g->last_seq ? g->last_seq : 1;
  if (points > last) points = (size_t)last;
  for (size_t p = 1; p <= points; p++) cJSON_AddItemToArray(seqs, cJSON_CreateNumber((double)((last * p + points - 1) / points)));
  for (size_t i = 0; i < k; i++) {
    cJSON *a = cJSON_CreateObject(), *vals = cJSON_CreateArray();
    cJSON_AddStringToObject(a, "id", g->nodes.rows[idx[i]].agent);
    double sum = 0;
    size_t c = 0;
    for (size_t p = 1; p <= points; p++) {
      uint64_t upto = (last * p + points - 1) / points;
      for (; c < g->n_calls && g->calls[c].after_seq <= upto; c++)
        if (g->calls[c].node == idx[i]) sum += g->calls[c].tokens;
      cJSON_AddItemToArray(vals, cJSON_CreateNumber(sum));
    }
    cJSON_AddItemToObject(a, "tokens", vals);
    cJSON_AddItemToArray(agents, a);
  }
}

/* The messages stamped with simulated time, or null for a real-clock chat: the last GRAPH_TICKS of the
 * schedule's deliveries and the last GRAPH_TICKS of the others, in order. */
static void add_timeline(cJSON *j, const chat_graph *g) {
  if (!g->n_ticks) {
    cJSON_AddNullToObject(j, "timeline");
    return;
  }
  cJSON *t = cJSON_AddObjectToObject(j, "timeline"), *ticks = cJSON_AddArrayToObject(t, "ticks");
  cJSON_AddNumberToObject(t, "count", (double)g->n_ticks);
  size_t fires = 0, others = 0;
  for (size_t i = g->n_ticks; i-- > 0;) {
    size_t *n = g->ticks[i].fire ? &fires : &others;
    if (*n == GRAPH_TICKS) continue;
    (*n)++;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "seq", (double)g->ticks[i].seq);
    cJSON_AddNumberToObject(o, "sim_ms", (double)g->ticks[i].sim_ms);
    cJSON_AddBoolToObject(o, "fire", g->ticks[i].fire);
    cJSON_InsertItemInArray(ticks, 0, o); /* walked backwards */
  }
}

int chat_graph_json(store *st, const char *chat_id, size_t nodes, size_t points, cJSON **out, ag_errmsg *em) {
  chat_graph g;
  *out = NULL;
  int rc = chat_graph_get(st, chat_id, &g, em);
  size_t *idx = rc ? NULL : ranked(&g, by_messages), *top = idx ? ranked(&g, by_tokens) : NULL;
  cJSON *j = top ? cJSON_CreateObject() : NULL;
  if (!rc && !j) rc = ag_fail(em, AG_ERR_NOMEM, "out of memory");
  if (!rc) {
    cJSON_AddStringToObject(j, "chat", chat_id);
    cJSON_AddNumberToObject(j, "last_seq", (double)g.last_seq);
    add_nodes(j, &g, idx, g.nodes.n < nodes ? g.nodes.n : nodes);
    size_t k = 0; /* the senders with tokens, at most GRAPH_SERIES */
    while (k < g.nodes.n && k < GRAPH_SERIES && g.nodes.rows[top[k]].in + g.nodes.rows[top[k]].out > 0) k++;
    add_series(j, &g, top, k, points);
    add_timeline(j, &g);
    *out = j;
  }
  free(idx);
  free(top);
  chat_graph_free(&g);
  return rc;
}
