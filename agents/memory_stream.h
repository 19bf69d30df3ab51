/* An agent's long-term memory (issue 26, docs/memory.md): its settings from the world file's `memory`
 * object, and the memory stream itself — every entry with its time, importance and embedding, the
 * embeddings quantised to int8 (agents/memory_vec.h) in one contiguous array so that retrieval is an
 * exhaustive scan of dot products over every stored vector. Pure:
 * no I/O, no agent state; the agent feeds it (agents/agent_memory.c). */
#ifndef AG_MEMORY_STREAM_H
#define AG_MEMORY_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "agents/msg.h"

typedef enum mem_mode { MEM_MODE_WINDOW, MEM_MODE_SUMMARY, MEM_MODE_STREAM } mem_mode;
typedef enum mem_importance { MEM_IMPORTANCE_FIXED, MEM_IMPORTANCE_LLM } mem_importance;
typedef enum mem_embedder { MEM_EMBED_HASH, MEM_EMBED_OPENAI, MEM_EMBED_OLLAMA, MEM_EMBED_GEMINI } mem_embedder;

#define MEM_HASH_DIM 256     /* the hash embedder's dimension */
#define MEM_DIM_MAX 8192     /* the largest embedding accepted from any embedder */

/* The `memory` object as read (world/memory_spec.c); strings owned. The defaults (mem_config_init)
 * are today's behaviour: mode window, nothing retrieved. */
typedef struct mem_config {
  mem_mode mode;
  int retrieve;             /* memories put in the prompt per turn (8) */
  double reflect_at;        /* summed importance that triggers a reflection (150); 0: never */
  mem_importance importance;
  double fixed_importance;  /* the constant of importance "fixed" (3) or a number given instead */
  double w_recency, w_importance, w_relevance; /* `weights`, each 1 by default */
  int retrieve_tokens;      /* the budget of the retrieved memories in the prompt (1000, estimated) */
  int summary_tokens;       /* mode summary's bound (500) */
  char *summary_model;      /* NULL: the agent's model */
  mem_embedder embedder;
  char *embed_model, *embed_base_url, *embed_api_key_env; /* remote embedders; NULL: the provider's */
  int embed_key_withheld;   /* the runtime withholds the key (runtime/key_env.c), as for chat calls */
} mem_config;

void mem_config_init(mem_config *c);
int mem_config_copy(mem_config *dst, const mem_config *src);
void mem_config_free(mem_config *c);
/* "window", "summary", "stream"; "hash", "openai", "ollama", "gemini". */
const char *mem_mode_name(mem_mode m);
const char *mem_embedder_name(mem_embedder e);
/* A hosted embedder's provider (llm_provider_kind: LLM_OPENAI, LLM_OLLAMA, LLM_GEMINI) and default model;
 * LLM_SCRIPT and NULL for the hash embedder. */
int mem_embedder_provider(mem_embedder e);
const char *mem_embedder_model(mem_embedder e);

/* The built-in embedder: feature hashing of the lowercased words of text (letters and digits, three
 * or more characters; not @mentions nor the commonest English words) into dim signed buckets,
 * L2-normalised (all zero for a text with no such word).
 * Deterministic across runs and machines, so script worlds and tests need no network. */
void mem_embed_hash(const char *text, float *out, int dim);
/* The dot product of two vectors of n floats (cosine for normalised ones), written for the compiler to
 * vectorise (independent accumulators). */
float mem_dot(const float *a, const float *b, size_t n);

/* One memory. msg is the message (a reference) or, for a note (the remember tool), a message made for
 * it with seq 0. */
typedef struct mem_entry {
  ag_msg *msg;
  int64_t at_ms;       /* when it happened: simulated time in a virtual-clock world, else wall time */
  float importance;    /* 1..10 */
  uint64_t index;      /* the agent's absolute memory index (agent_memory_total before the push); 0 for a
                          note, which is never in the verbatim window */
  uint64_t *sources;   /* a reflection's insight: the seqs of the memories it came from (owned), or NULL */
  size_t n_sources;
  unsigned char unrated; /* importance "llm": the rating call has not answered for it yet */
  unsigned char rated;   /* a rating is set: the first one wins, here and on every copy (agent_memory_rate) */
  unsigned char note;    /* a note (msg->seq 0), kept here so that a scan never reads the message */
  unsigned char unembedded; /* a hosted embedder has not answered for it yet: its vector is zeros */
} mem_entry;

typedef struct mem_stream {
  int dim;
  mem_entry *e;
  int8_t *codes;       /* n * dim quantised embeddings, entry i's at codes + i * dim (mem_vec_quantize); on
                          2 MiB-aligned huge pages once it is that large (fewer TLB misses in a scan) */
  float *scales;       /* n: entry i's embedding is about scales[i] * its codes */
  /* What retrieval reads of each entry, beside the codes (a struct of arrays: 20 bytes an entry instead of
   * the 56 of mem_entry, which a scan of 100,000 entries missed in the cache once each). Copies of the
   * entries' fields, so they change only through this module (mem_stream_set_importance). */
  int64_t *at_ms;      /* e[i].at_ms */
  float *importance;   /* e[i].importance */
  uint64_t *key;       /* 0 for a note, else e[i].index + 1: looked at by a query iff key <= below */
  float scale_max;     /* the largest scale stored */
  int nonfinite;       /* a scale or an importance that is not a finite number was stored */
  size_t n, cap;
  double since_reflect; /* importance summed since the last reflection */
} mem_stream;

/* dim 0: not known yet (a hosted embedder's, until its first answer; mem_stream_set_dim). */
void mem_stream_init(mem_stream *s, int dim);
/* Adds an entry (takes a reference to e->msg, copies e->sources) with its embedding (dim floats, stored
 * quantised: the floats are not kept; NULL: zeros). */
int mem_stream_add(mem_stream *s, const mem_entry *e, const float *vec);
/* Sets the dimension of a stream made with 0 (every vector zeros until set): AG_OK, or AG_ERR_INVALID
 * when it already has another one. */
int mem_stream_set_dim(mem_stream *s, int dim);
/* Forgets every embedding, for an embedder whose vectors are of another space: the dimension becomes dim
 * (0: unknown until mem_stream_set_dim), every vector zeros. AG_ERR_NOMEM leaves the stream as it was. */
int mem_stream_reset_dim(mem_stream *s, int dim);
/* Replaces entry i's embedding (dim floats, stored quantised; NULL: zeros). i < s->n, and the dimension
 * is known. */
void mem_stream_set_vec(mem_stream *s, size_t i, const float *vec);
/* Sets entry i's importance (e[i].importance and the copy retrieval reads); i < s->n. since_reflect is
 * the caller's. */
void mem_stream_set_importance(mem_stream *s, size_t i, float importance);
void mem_stream_clear(mem_stream *s);
void mem_stream_free(mem_stream *s);

/* A retrieved memory: the entry's position and its scores (each min-max normalised, and the sum). */
typedef struct mem_hit {
  size_t i;
  float recency, importance, relevance, score;
} mem_hit;

/* The query of a retrieval; q is borrowed (dim floats). Only messages with index < below are looked at
 * (those still in the verbatim window are in the prompt already), in any order, and every note (e.note):
 * UINT64_MAX looks at all. */
typedef struct mem_query {
  const float *q;
  int64_t now_ms;
  uint64_t below;
  double w_recency, w_importance, w_relevance;
} mem_query;

/* The top k entries by score (recency 0.995 per hour before now, importance, relevance = cosine of the
 * quantised query and the quantised stored vector, within about 0.01 of the float cosine; each
 * min-max normalised over the entries looked at, then weighted and summed), best first (ties: the lower
 * position first), into hits (room for k). Returns how many. scratch holds mem_stream_scratch(n) floats
 * (caller's, reused between calls), or NULL to allocate; 0 hits when that fails.
 * Exact: every stored vector is scored, and an entry is left out of the ranking only when a bound on its
 * score shows that it cannot reach the top k (docs/memory.md "Retrieval"). */
size_t mem_stream_top(const mem_stream *s, const mem_query *q, size_t k, mem_hit *hits, float *scratch);
/* The floats of mem_stream_top's scratch for a stream of n entries (a little over n; at most 3 * n for
 * n >= 2). */
size_t mem_stream_scratch(size_t n);

#endif
