/* A query's vector from an agent's hosted embedder outside a turn (`agora memory --query`, docs/memory.md
 * "Hosted embedders"): the memories not embedded yet and the query go in one request, as at a turn's
 * start, on the loop; the listing is scored with it once it is back. */
#include "agents/agent_int.h"

#include "llm/embed.h"

#include <stdlib.h>
#include <string.h>

struct agent_recall {
  agent *a;
  llm_embed *e;
  size_t *pos, n_pos; /* the stream positions asked about; the query is the text after them */
  float *q;           /* the query's vector once back, else NULL */
  agent_recall_done done;
  void *ud;
};

/* The vectors of the positions asked about (those still unembedded), then the query's. */
static int recall_take(agent_recall *r, const float *vecs, size_t n, int dim) {
  agent *a = r->a;
  int rc = n == r->n_pos + 1 ? mem_stream_set_dim(&a->stream, dim) : AG_ERR_INVALID;
  if (!rc && !(r->q = malloc((size_t)dim * sizeof *r->q))) rc = AG_ERR_NOMEM;
  if (rc) return rc;
  for (size_t k = 0; k < r->n_pos; k++)
    if (r->pos[k] < a->stream.n && a->stream.e[r->pos[k]].unembedded) {
      mem_stream_set_vec(&a->stream, r->pos[k], vecs + k * (size_t)dim);
      a->stream.e[r->pos[k]].unembedded = 0;
    }
  memcpy(r->q, vecs + r->n_pos * (size_t)dim, (size_t)dim * sizeof *r->q);
  return AG_OK;
}

static void recall_done(void *ud, int err, const float *vecs, size_t n, int dim, const char *why) {
  agent_recall *r = ud;
  r->e = NULL;
  if (!err && (err = recall_take(r, vecs, n, dim))) why = "the embedder's vectors do not fit the memory stream's";
  r->done(r->ud, err, err ? (why ? why : "embedding failed") : NULL);
}

int agent_recall_start(agent *a, const char *query, int memories, agent_recall_done done, void *ud,
                       agent_recall **out, ag_errmsg *em) {
  const mem_config *c = &a->s.memory;
  *out = NULL;
  if (c->mode != MEM_MODE_STREAM || c->embedder == MEM_EMBED_HASH || !a->client)
    return ag_fail(em, AG_ERR_INVALID, "%s has no hosted embedder", a->id);
  agent_recall *r = calloc(1, sizeof *r);
  const char **texts = malloc((a->stream.n + 1) * sizeof *texts);
  int rc = r && texts && (r->pos = malloc((a->stream.n + 1) * sizeof *r->pos)) ? AG_OK : AG_ERR_NOMEM;
  for (size_t i = 0; !rc && memories && i < a->stream.n; i++)
    if (a->stream.e[i].unembedded) {
      r->pos[r->n_pos] = i;
      texts[r->n_pos++] = a->stream.e[i].msg->text;
    }
  if (!rc) {
    *r = (agent_recall){.a = a, .pos = r->pos, .n_pos = r->n_pos, .done = done, .ud = ud};
    texts[r->n_pos] = query;
    llm_config cfg = agent__embed_config(a);
    rc = llm_embed_start(a->client, &cfg, texts, r->n_pos + 1, 0, recall_done, r, &r->e, em);
    if (rc == AG_ERR_INVALID) rc = AG_ERR_LLM; /* the embedder's settings (a missing key), not the call's */
  } else {
    ag_fail(em, rc, "%s", ag_strerror(rc));
  }
  free(texts);
  if (rc) {
    agent_recall_free(r);
    return rc;
  }
  *out = r;
  return AG_OK;
}

size_t agent_recall_top(const agent_recall *r, int64_t now_ms, mem_hit *hits, size_t k) {
  const agent *a = r->a;
  const mem_config *c = &a->s.memory;
  if (!a->stream.n) return 0;
  /* Without the query's vector (the embedder failed) relevance is left out, as agent_memory_query does. */
  mem_query mq = {.q = r->q, .now_ms = now_ms, .below = UINT64_MAX, .w_recency = c->w_recency,
                  .w_importance = c->w_importance, .w_relevance = c->w_relevance};
  return mem_stream_top(&a->stream, &mq, k, hits, NULL);
}

void agent_recall_free(agent_recall *r) {
  if (!r) return;
  llm_embed_cancel(r->e);
  free(r->pos);
  free(r->q);
  free(r);
}
