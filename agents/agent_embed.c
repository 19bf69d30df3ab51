/* A hosted embedder for an agent's memory stream (docs/memory.md): at a turn's start, the memories not
 * embedded yet and the message being answered go to the embedder in one request (batched by
 * llm/embed.c), in the phase remembering; the turn's call waits for it. The hash embedder needs none of
 * this (agent_memory.c embeds at once). */
#include "agents/agent_int.h"

#include "llm/embed.h"

#include <stdlib.h>
#include <string.h>

void agent__embed_reset(agent *a) {
  a->embed_asked = a->query_ok = 0;
}

void agent__embed_cancel(agent *a) {
  llm_embed_cancel(a->embed);
  a->embed = NULL;
  free(a->embed_pos);
  a->embed_pos = NULL;
  a->n_embed_pos = 0;
  a->query_ok = 0;
}

static void embed_failed(agent *a, const char *why) {
  if (!a->host->report) return;
  agent_report ev = {.kind = AGENT_REPORT_LLM_ERROR, .text = why, .len = strlen(why), .failed = 1,
                     .seq = a->answering ? a->answering->seq : 0};
  a->host->report(a->host->ctx, a, &ev);
}

/* The vectors of the positions asked about, then the question's (the last). */
static int embed_take(agent *a, const float *vecs, size_t n, int dim) {
  int rc = n == a->n_embed_pos + 1 ? mem_stream_set_dim(&a->stream, dim) : AG_ERR_INVALID;
  float *q = rc ? NULL : realloc(a->query_vec, (size_t)dim * sizeof *q);
  if (!rc && !q) rc = AG_ERR_NOMEM;
  if (rc) return rc;
  a->query_vec = q;
  for (size_t k = 0; k < a->n_embed_pos; k++) {
    size_t i = a->embed_pos[k];
    mem_stream_set_vec(&a->stream, i, vecs + k * (size_t)dim);
    a->stream.e[i].unembedded = 0;
  }
  memcpy(q, vecs + a->n_embed_pos * (size_t)dim, (size_t)dim * sizeof *q);
  a->query_ok = 1;
  return AG_OK;
}

static void embed_done(void *ud, int err, const float *vecs, size_t n, int dim, const char *why) {
  agent *a = ud;
  a->embed = NULL;
  if (!err && embed_take(a, vecs, n, dim)) why = "the embedder's vectors do not fit the memory stream's";
  if (err || !a->query_ok) embed_failed(a, why ? why : "embedding failed");
  free(a->embed_pos);
  a->embed_pos = NULL;
  a->n_embed_pos = 0;
  if (!agent__reflect_begin(a)) agent__turn_go(a); /* the rest of the turn, with or without retrieval */
}

llm_config agent__embed_config(const agent *a) {
  const mem_config *c = &a->s.memory;
  return (llm_config){.provider = (llm_provider_kind)mem_embedder_provider(c->embedder),
                      .model = c->embed_model ? c->embed_model : (char *)mem_embedder_model(c->embedder),
                      .base_url = c->embed_base_url, .api_key_env = c->embed_api_key_env,
                      .key_withheld = c->embed_key_withheld, .timeout_ms = 60000};
}

static int same_str(const char *x, const char *y) { return x == y || (x && y && !strcmp(x, y)); }

int agent__embedder_differs(const mem_config *a, const mem_config *b) {
  return a->embedder != b->embedder || !same_str(a->embed_model, b->embed_model) ||
         !same_str(a->embed_base_url, b->embed_base_url);
}

/* The vectors go, not the memories: a hosted embedder's request at the next turn embeds them all (in
 * batches, the kept vectors looked up first), as when a chat is opened (docs/memory.md "Changing the
 * embedder"). Before, the old vectors stayed and every answer of another dimension failed the turn. */
int agent__embed_switch(agent *a) {
  int hash = a->s.memory.embedder == MEM_EMBED_HASH;
  int rc = mem_stream_reset_dim(&a->stream, hash ? MEM_HASH_DIM : 0);
  if (rc) return rc;
  float v[MEM_HASH_DIM];
  for (size_t i = 0; i < a->stream.n; i++) {
    a->stream.e[i].unembedded = !hash;
    if (!hash) continue;
    mem_embed_hash(a->stream.e[i].msg->text, v, MEM_HASH_DIM);
    mem_stream_set_vec(&a->stream, i, v);
  }
  a->query_ok = 0;
  return AG_OK;
}

int agent__embed_begin(agent *a) {
  const mem_config *c = &a->s.memory;
  if (c->mode != MEM_MODE_STREAM || c->embedder == MEM_EMBED_HASH || a->embed_asked || a->rounds || a->tlog.n ||
      !a->answering || !a->client)
    return 0;
  a->embed_asked = 1; /* once a turn, whatever comes of it */
  size_t n = 0;
  a->embed_pos = malloc((a->stream.n + 1) * sizeof *a->embed_pos);
  const char **texts = malloc((a->stream.n + 1) * sizeof *texts);
  for (size_t i = 0; texts && a->embed_pos && i < a->stream.n; i++)
    if (a->stream.e[i].unembedded) {
      a->embed_pos[n] = i;
      texts[n++] = a->stream.e[i].msg->text;
    }
  a->n_embed_pos = n;
  llm_config cfg = agent__embed_config(a);
  ag_errmsg em = {""};
  int rc = texts && a->embed_pos ? AG_OK : AG_ERR_NOMEM;
  if (!rc) {
    texts[n] = a->answering->text;
    rc = llm_embed_start(a->client, &cfg, texts, n + 1, 0, embed_done, a, &a->embed, &em);
  }
  free(texts);
  if (rc) {
    embed_failed(a, em.text[0] ? em.text : ag_strerror(rc));
    agent__embed_cancel(a);
    return 0; /* the turn goes on without retrieval */
  }
  agent__set_phase(a, AGENT_REMEMBERING);
  return 1;
}
