/* The memory stream (memory_stream.h): settings, the hash embedder, and top-k retrieval by an exhaustive
 * scan over contiguous quantised embeddings. */
#include "agents/memory_stream.h"
#include "agents/memory_vec.h"

#include "common/error.h"
#include "llm/llm.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void mem_config_init(mem_config *c) {
  *c = (mem_config){.mode = MEM_MODE_WINDOW, .retrieve = 8, .reflect_at = 150, .importance = MEM_IMPORTANCE_FIXED,
                    .fixed_importance = 3, .w_recency = 1, .w_importance = 1, .w_relevance = 1,
                    .retrieve_tokens = 1000, .summary_tokens = 500, .embedder = MEM_EMBED_HASH};
}

/* *dst = a copy of src (NULL stays NULL); 0 when out of memory. */
static int dup_or_null(char **dst, const char *src) {
  *dst = src ? strdup(src) : NULL;
  return !src || *dst;
}

static const struct { llm_provider_kind kind; const char *model; } hosted[] = {
    [MEM_EMBED_HASH] = {LLM_SCRIPT, NULL},
    [MEM_EMBED_OPENAI] = {LLM_OPENAI, "text-embedding-3-small"},
    [MEM_EMBED_OLLAMA] = {LLM_OLLAMA, "nomic-embed-text"},
    [MEM_EMBED_GEMINI] = {LLM_GEMINI, "text-embedding-004"}};

int mem_embedder_provider(mem_embedder e) { return (int)hosted[e].kind; }
const char *mem_embedder_model(mem_embedder e) { return hosted[e].model; }

int mem_config_copy(mem_config *dst, const mem_config *src) {
  *dst = *src;
  dst->summary_model = dst->embed_model = dst->embed_base_url = dst->embed_api_key_env = NULL;
  if (dup_or_null(&dst->summary_model, src->summary_model) && dup_or_null(&dst->embed_model, src->embed_model) &&
      dup_or_null(&dst->embed_base_url, src->embed_base_url) &&
      dup_or_null(&dst->embed_api_key_env, src->embed_api_key_env))
    return AG_OK;
  mem_config_free(dst);
  return AG_ERR_NOMEM;
}

void mem_config_free(mem_config *c) {
  free(c->summary_model);
  free(c->embed_model);
  free(c->embed_base_url);
  free(c->embed_api_key_env);
  c->summary_model = c->embed_model = c->embed_base_url = c->embed_api_key_env = NULL;
}

const char *mem_mode_name(mem_mode m) {
  static const char *const names[] = {"window", "summary", "stream"};
  return (unsigned)m < 3 ? names[m] : "window";
}

const char *mem_embedder_name(mem_embedder e) {
  static const char *const names[] = {"hash", "openai", "ollama", "gemini"};
  return (unsigned)e < 4 ? names[e] : "hash";
}

/* English words in nearly every sentence: kept, they make unrelated memories look alike. */
static int stop_word(const unsigned char *w, size_t len) {
  static const char *const words[] = {"the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "her",
                                      "was", "one", "our", "out", "his", "has", "had", "how", "its", "who", "did",
                                      "yes", "this", "that", "with", "have", "from", "they", "will", "what", "when",
                                      "there", "their", "about", "would", "which", NULL};
  for (int i = 0; words[i]; i++)
    if (strlen(words[i]) == len && !strncasecmp((const char *)w, words[i], len)) return 1;
  return 0;
}

void mem_embed_hash(const char *text, float *out, int dim) {
  memset(out, 0, (size_t)dim * sizeof *out);
  const unsigned char *p = (const unsigned char *)text;
  while (*p) {
    while (*p && !isalnum(*p) && *p < 0x80) p++;
    /* An @mention addresses someone; it says nothing about what the message is about. */
    int mention = p > (const unsigned char *)text && p[-1] == '@';
    const unsigned char *w = p;
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the lowercased word */
    for (; *p && (isalnum(*p) || *p >= 0x80 || *p == '_' || *p == '-'); p++) h = (h ^ (uint64_t)tolower(*p)) * 1099511628211ull;
    size_t len = (size_t)(p - w);
    /* Words of one or two letters ("a", "is", "to") are in every sentence too. */
    if (len < 3 || mention || stop_word(w, len)) continue;
    out[h % (uint64_t)dim] += (h >> 63) ? -1.0f : 1.0f;
  }
  double sum = 0;
  for (int i = 0; i < dim; i++) sum += (double)out[i] * out[i];
  if (sum <= 0) return;
  float inv = (float)(1.0 / sqrt(sum));
  for (int i = 0; i < dim; i++) out[i] *= inv;
}

/* Eight lanes of floats (GCC and Clang vector extensions), four independent accumulators so that the adds
 * do not wait on each other. On x86-64 the function is built twice, for AVX2+FMA and for the baseline
 * (two SSE halves), and the loader picks the one the CPU runs (an ifunc): the binary stays portable. */
typedef float mem_v8 __attribute__((vector_size(32)));

/* Not under ThreadSanitizer: the loader runs an ifunc's resolver while it relocates, before TSan's runtime
 * is up, and the instrumented resolver crashed there (test_memory in the TSan build). */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define AGORA_NO_CLONES 1
#endif
#endif
#if defined(__x86_64__) && defined(__ELF__) && !defined(AGORA_NO_CLONES) && !defined(__SANITIZE_THREAD__)
#define MEM_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define MEM_CLONES
#endif

MEM_CLONES float mem_dot(const float *a, const float *b, size_t n) {
  mem_v8 acc[4] = {{0}};
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int k = 0; k < 4; k++) {
      mem_v8 x, y;
      memcpy(&x, a + i + 8 * k, sizeof x); /* no alignment assumed */
      memcpy(&y, b + i + 8 * k, sizeof y);
      acc[k] += x * y;
    }
  }
  mem_v8 t = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  float s = ((t[0] + t[4]) + (t[1] + t[5])) + ((t[2] + t[6]) + (t[3] + t[7]));
  for (; i < n; i++) s += a[i] * b[i];
  return s;
}

void mem_stream_init(mem_stream *s, int dim) { *s = (mem_stream){.dim = dim}; }

int mem_stream_add(mem_stream *s, const mem_entry *e, const float *vec) {
  if (s->n == s->cap) {
    size_t ncap = s->cap ? s->cap * 2 : 64;
    mem_entry *ne = realloc(s->e, ncap * sizeof *ne);
    if (!ne) return AG_ERR_NOMEM;
    s->e = ne;
    if (s->dim) { /* a stream whose dimension is not known yet keeps no vectors (mem_stream_set_dim) */
      int8_t *nc = realloc(s->codes, ncap * (size_t)s->dim);
      if (!nc) return AG_ERR_NOMEM;
      s->codes = nc;
    }
    float *ns = realloc(s->scales, ncap * sizeof *ns);
    if (!ns) return AG_ERR_NOMEM;
    s->scales = ns;
    s->cap = ncap;
  }
  uint64_t *src = NULL;
  if (e->n_sources && !(src = malloc(e->n_sources * sizeof *src))) return AG_ERR_NOMEM;
  if (src) memcpy(src, e->sources, e->n_sources * sizeof *src);
  s->e[s->n] = *e;
  s->e[s->n].sources = src;
  ag_msg_ref(e->msg);
  if (s->dim) mem_stream_set_vec(s, s->n, vec);
  else s->scales[s->n] = 0;
  s->n++;
  s->since_reflect += e->importance;
  return AG_OK;
}

int mem_stream_set_dim(mem_stream *s, int dim) {
  if (s->dim) return s->dim == dim ? AG_OK : AG_ERR_INVALID;
  if (dim < 1 || dim > MEM_DIM_MAX) return AG_ERR_INVALID;
  int8_t *c = calloc((s->cap ? s->cap : 1) * (size_t)dim, 1);
  if (!c) return AG_ERR_NOMEM;
  free(s->codes);
  s->codes = c;
  for (size_t i = 0; i < s->n; i++) s->scales[i] = 0; /* every vector zeros until given */
  s->dim = dim;
  return AG_OK;
}

int mem_stream_reset_dim(mem_stream *s, int dim) {
  if (dim < 0 || dim > MEM_DIM_MAX) return AG_ERR_INVALID;
  int8_t *c = dim ? calloc((s->cap ? s->cap : 1) * (size_t)dim, 1) : NULL;
  if (dim && !c) return AG_ERR_NOMEM;
  free(s->codes);
  s->codes = c;
  for (size_t i = 0; i < s->n; i++) s->scales[i] = 0;
  s->dim = dim;
  return AG_OK;
}

void mem_stream_set_vec(mem_stream *s, size_t i, const float *vec) {
  int8_t *codes = s->codes + i * (size_t)s->dim;
  if (vec) s->scales[i] = mem_vec_quantize(vec, s->dim, codes);
  else memset(codes, 0, (size_t)s->dim), s->scales[i] = 0;
}

void mem_stream_clear(mem_stream *s) {
  for (size_t i = 0; i < s->n; i++) {
    ag_msg_unref(s->e[i].msg);
    free(s->e[i].sources);
  }
  s->n = 0;
  s->since_reflect = 0;
}

void mem_stream_free(mem_stream *s) {
  mem_stream_clear(s);
  free(s->e);
  free(s->codes);
  free(s->scales);
  mem_stream_init(s, s->dim);
}

/* Whether a query with below looks at e: a message outside the verbatim window, or any note. */
static int looked_at(const mem_entry *e, uint64_t below) { return e->note || e->index < below; }

/* The lowest and highest of one score over the entries looked at, for min-max normalisation. */
typedef struct mem_range {
  float lo, hi;
} mem_range;

/* Compares, not fminf/fmaxf: those are library calls unless NaNs are ruled out, and this runs 3n times. */
static void range_add(mem_range *r, float v) {
  r->lo = v < r->lo ? v : r->lo;
  r->hi = v > r->hi ? v : r->hi;
}

/* v normalised to [0, 1] over r (all equal: 0, so the term decides nothing). */
static float range_norm(const mem_range *r, float v) {
  float span = r->hi - r->lo;
  return span > 0 ? (v - r->lo) / span : 0;
}

/* Inserts h into hits (best first, *n of k kept) when it is good enough. */
static void top_insert(mem_hit *hits, size_t *n, size_t k, const mem_hit *h) {
  if (*n == k && hits[k - 1].score >= h->score) return;
  size_t at = *n < k ? (*n)++ : k - 1;
  while (at > 0 && hits[at - 1].score < h->score) {
    hits[at] = hits[at - 1];
    at--;
  }
  hits[at] = *h;
}

size_t mem_stream_top(const mem_stream *s, const mem_query *q, size_t k, mem_hit *hits, float *scratch) {
  size_t n = s->n;
  if (!k || !n || s->dim > MEM_DIM_MAX) return 0; /* the query's codes are on the stack */
  float *own = scratch ? NULL : malloc(3 * n * sizeof *own);
  float *rec = scratch ? scratch : own;
  if (!rec) return 0;
  float *imp = rec + n, *rel = imp + n;
  /* Every vector is scored, those not looked at too: one straight pass over the array is what the
   * prefetchers follow, and the few left out (the verbatim window) are ignored below. (Scanning by blocks
   * of 256 or 4,096 vectors with their bookkeeping between them was measured no faster.) */
  if (q->q && s->dim) {
    int8_t qc[MEM_DIM_MAX];
    float qscale = mem_vec_quantize(q->q, s->dim, qc);
    mem_vec_scan(s->codes, s->scales, n, s->dim, qc, qscale, rel);
  } else {
    memset(rel, 0, n * sizeof *rel); /* no vectors (yet): relevance 0 */
  }
  /* The entries (56 bytes each, 5.6 MB for 100,000) are read once, for the ranges; the scores then come
   * from the three arrays, an entry not looked at marked by a NaN recency. */
  const double per_ms = log(0.995) / 3600000.0; /* 0.995 per hour */
  mem_range rr = {.lo = INFINITY, .hi = -INFINITY}, ri = rr, rl = rr;
  for (size_t i = 0; i < n; i++) {
    if (!looked_at(&s->e[i], q->below)) {
      rec[i] = NAN;
      continue;
    }
    int64_t age = q->now_ms - s->e[i].at_ms;
    rec[i] = (float)exp(per_ms * (double)(age > 0 ? age : 0));
    imp[i] = s->e[i].importance;
    range_add(&rr, rec[i]);
    range_add(&ri, imp[i]);
    range_add(&rl, rel[i]);
  }
  size_t got = 0;
  for (size_t i = 0; i < n; i++) {
    if (isnan(rec[i])) continue;
    mem_hit h = {.i = i, .recency = range_norm(&rr, rec[i]), .importance = range_norm(&ri, imp[i]),
                 .relevance = range_norm(&rl, rel[i])};
    h.score = (float)(q->w_recency * h.recency + q->w_importance * h.importance + q->w_relevance * h.relevance);
    top_insert(hits, &got, k, &h);
  }
  free(own);
  return got;
}
