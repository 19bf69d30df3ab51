/* The memory stream (memory_stream.h): settings, the hash embedder, and top-k retrieval by an exhaustive
 * scan over contiguous quantised embeddings. */
#include "agents/memory_stream.h"
#include "agents/memory_vec.h"

#include "common/error.h"
#include "llm/llm.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

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

/* Code arrays from this size up are put on transparent huge pages: a scan of 100,000 x 1,536 codes crosses
 * 37,500 pages of 4 KiB, a TLB miss each, or 74 of 2 MiB (measured 11.2 -> 9.2 ms, bench/README.md). */
#define MEM_HUGE ((size_t)2 << 20)

/* A block for bytes of codes whose first used bytes are copied from old (which is freed), or NULL. Below
 * MEM_HUGE, realloc; from it, a 2 MiB-aligned block advised as huge pages (realloc keeps no alignment). */
static int8_t *codes_grow(int8_t *old, size_t used, size_t bytes) {
  size_t impls;
  mem_vec_impls(&impls);
  /* Not for the portable scan (no AVX2, or not x86): it is bound by its arithmetic, not by memory, and ran
   * 20% slower on huge pages (12.3-13.2 -> 15.3-15.5 ms for 20,000 x 1,536; why was not found). */
  if (bytes < MEM_HUGE || impls < 2) return realloc(old, bytes);
  size_t round = (bytes + MEM_HUGE - 1) / MEM_HUGE * MEM_HUGE;
  int8_t *c = aligned_alloc(MEM_HUGE, round);
  if (!c) return NULL;
#ifdef MADV_HUGEPAGE
  madvise(c, round, MADV_HUGEPAGE); /* advice only: without it (THP "never") the scan is merely slower */
#endif
  if (used) memcpy(c, old, used);
  free(old);
  return c;
}

/* Room for ncap entries in every per-entry array. */
static int stream_grow(mem_stream *s, size_t ncap) {
  mem_entry *ne = realloc(s->e, ncap * sizeof *ne);
  if (!ne) return AG_ERR_NOMEM;
  s->e = ne;
  if (s->dim) { /* a stream whose dimension is not known yet keeps no vectors (mem_stream_set_dim) */
    int8_t *nc = codes_grow(s->codes, s->n * (size_t)s->dim, ncap * (size_t)s->dim);
    if (!nc) return AG_ERR_NOMEM;
    s->codes = nc;
  }
  float *ns = realloc(s->scales, ncap * sizeof *ns);
  if (ns) s->scales = ns;
  int64_t *na = ns ? realloc(s->at_ms, ncap * sizeof *na) : NULL;
  if (na) s->at_ms = na;
  float *ni = na ? realloc(s->importance, ncap * sizeof *ni) : NULL;
  if (ni) s->importance = ni;
  uint64_t *nk = ni ? realloc(s->key, ncap * sizeof *nk) : NULL;
  if (!nk) return AG_ERR_NOMEM;
  s->key = nk;
  s->cap = ncap;
  return AG_OK;
}

/* What retrieval checks once instead of per entry: the largest scale, and whether a scale or an importance
 * that is not a finite number was ever stored (then it ranks by the plain path, mem_stream_top). */
static void stream_note(mem_stream *s, float scale, float importance) {
  s->scale_max = scale > s->scale_max ? scale : s->scale_max;
  s->nonfinite |= !(fabsf(scale) <= FLT_MAX) || !(fabsf(importance) <= FLT_MAX);
}

int mem_stream_add(mem_stream *s, const mem_entry *e, const float *vec) {
  if (s->n == s->cap) {
    int rc = stream_grow(s, s->cap ? s->cap * 2 : 64);
    if (rc) return rc;
  }
  uint64_t *src = NULL;
  if (e->n_sources && !(src = malloc(e->n_sources * sizeof *src))) return AG_ERR_NOMEM;
  if (src) memcpy(src, e->sources, e->n_sources * sizeof *src);
  size_t i = s->n;
  s->e[i] = *e;
  s->e[i].sources = src;
  s->at_ms[i] = e->at_ms;
  s->importance[i] = e->importance;
  /* An index of UINT64_MAX (a count of memories: never reached) would be looked at by below UINT64_MAX. */
  s->key[i] = e->note ? 0 : e->index < UINT64_MAX ? e->index + 1 : UINT64_MAX;
  ag_msg_ref(e->msg);
  if (s->dim) mem_stream_set_vec(s, i, vec);
  else s->scales[i] = 0, stream_note(s, 0, e->importance);
  s->n++;
  s->since_reflect += e->importance;
  return AG_OK;
}

int mem_stream_set_dim(mem_stream *s, int dim) {
  if (s->dim) return s->dim == dim ? AG_OK : AG_ERR_INVALID;
  if (dim < 1 || dim > MEM_DIM_MAX) return AG_ERR_INVALID;
  size_t bytes = (s->cap ? s->cap : 1) * (size_t)dim;
  int8_t *c = codes_grow(NULL, 0, bytes);
  if (!c) return AG_ERR_NOMEM;
  memset(c, 0, bytes);
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
  stream_note(s, s->scales[i], s->importance[i]);
}

void mem_stream_set_importance(mem_stream *s, size_t i, float importance) {
  s->e[i].importance = importance;
  s->importance[i] = importance;
  stream_note(s, 0, importance);
}

void mem_stream_clear(mem_stream *s) {
  for (size_t i = 0; i < s->n; i++) {
    ag_msg_unref(s->e[i].msg);
    free(s->e[i].sources);
  }
  s->n = 0;
  s->since_reflect = 0;
  s->scale_max = 0;
  s->nonfinite = 0;
}

void mem_stream_free(mem_stream *s) {
  mem_stream_clear(s);
  free(s->e);
  free(s->codes);
  free(s->scales);
  free(s->at_ms);
  free(s->importance);
  free(s->key);
  mem_stream_init(s, s->dim);
}

/* The lowest and highest of one score over the entries looked at, for min-max normalisation. */
typedef struct mem_range {
  float lo, hi;
} mem_range;

/* Compares, not fminf/fmaxf: those are library calls unless NaNs are ruled out, and this runs 2n times.
 * The order of the adds decides between -0 and +0 at a tie: every pass adds in ascending position. */
static void range_add(mem_range *r, float v) {
  r->lo = v < r->lo ? v : r->lo;
  r->hi = v > r->hi ? v : r->hi;
}

/* v normalised to [0, 1] over r (all equal: 0, so the term decides nothing). */
static float range_norm(const mem_range *r, float v) {
  float span = r->hi - r->lo;
  return span > 0 ? (v - r->lo) / span : 0;
}

/* Recency at now of a memory from at: 0.995 per hour of age, 1 for one from the future. per_ms is
 * log(0.995) / 3600000. Never larger for an older memory (see top_pruned). */
static float recency(double per_ms, int64_t now, int64_t at) {
  int64_t age = now - at;
  return (float)exp(per_ms * (double)(age > 0 ? age : 0));
}

/* The weighted sum of three normalised scores: the one formula of a score and of a bound on one. */
static float weighted(const mem_query *q, float rec, float imp, float rel) {
  return (float)(q->w_recency * rec + q->w_importance * imp + q->w_relevance * rel);
}

/* Entries are scanned and summarised in blocks of this many: a block's relevances are still in L1 when
 * its summary is taken, and a block whose best possible score cannot reach the top k is skipped whole. */
#define TOP_BLOCK 256

size_t mem_stream_scratch(size_t n) { return n + 3 * ((n + TOP_BLOCK - 1) / TOP_BLOCK); }

/* What pass one learns: the ranges over the entries looked at, and per block (at blk + 3 * b) the highest
 * relevance (-inf: no entry looked at), the highest importance and the recency of its newest entry. */
typedef struct top_pass {
  const mem_query *q;
  double per_ms;
  float *rel, *blk;
  mem_range rr, ri, rl;
  int64_t at_lo, at_hi;
  size_t looked;
} top_pass;

/* Adds the range of a later block to r: the same as adding its values one by one (at a tie the earlier
 * value stays, whichever of -0 and +0 it is; an infinity counts as a value, a NaN does not). */
static void range_merge(mem_range *r, const mem_range *later) {
  if (!(later->lo <= later->hi)) return; /* nothing added (or NaNs only, which range_add skips) */
  range_add(r, later->lo);
  range_add(r, later->hi);
}

/* Pass one over entries [b0, b1) (block b): their relevances (the scan) into p->rel, the ranges and the
 * block's summary. */
static void pass_block(const mem_stream *s, top_pass *p, mem_vec_scan_fn *scan, const int8_t *qc, float qscale,
                       size_t b0, size_t b1) {
  /* The block's times, importances and keys asked for now, so that they have come from memory when the scan
   * is done (the scan evicts them, and the hardware prefetcher starts over in each block): this pass's share
   * of a 100,000 x 1,536 query went from 4.0% to 2.7-3.1% of the scan's under perf. */
  for (size_t i = b0; i < b1; i += 64 / sizeof(int64_t)) {
    __builtin_prefetch(s->at_ms + i);
    __builtin_prefetch(s->key + i);
    if (!(i & 15)) __builtin_prefetch(s->importance + i);
  }
  if (qc) scan(s->codes + b0 * (size_t)s->dim, s->scales + b0, b1 - b0, s->dim, qc, qscale, p->rel + b0);
  else memset(p->rel + b0, 0, (b1 - b0) * sizeof *p->rel); /* no vectors (yet): relevance 0 */
  /* The block's own ranges in locals (stores through p could alias the arrays read), merged after. */
  mem_range ri = {.lo = INFINITY, .hi = -INFINITY}, rl = ri;
  int64_t at_lo = INT64_MAX, at_hi = INT64_MIN;
  size_t looked = 0;
  const uint64_t *key = s->key, lim = p->q->below;
  const float *imps = s->importance, *rels = p->rel;
  const int64_t *ats = s->at_ms;
  for (size_t i = b0; i < b1; i++) {
    if (key[i] > lim) continue;
    range_add(&ri, imps[i]);
    range_add(&rl, rels[i]);
    at_lo = ats[i] < at_lo ? ats[i] : at_lo;
    at_hi = ats[i] > at_hi ? ats[i] : at_hi;
    looked++;
  }
  float *blk = p->blk + 3 * (b0 / TOP_BLOCK);
  blk[0] = looked ? rl.hi : -INFINITY;
  blk[1] = ri.hi;
  blk[2] = looked ? recency(p->per_ms, p->q->now_ms, at_hi) : 0;
  if (!looked) return;
  range_merge(&p->ri, &ri);
  range_merge(&p->rl, &rl);
  p->at_lo = at_lo < p->at_lo ? at_lo : p->at_lo;
  p->at_hi = at_hi > p->at_hi ? at_hi : p->at_hi;
  p->looked += looked;
}

/* Inserts h into hits (best first, *n of k kept) when it is good enough; entries offered in ascending
 * position. Today's ranking, kept for top_plain. */
static void top_insert(mem_hit *hits, size_t *n, size_t k, const mem_hit *h) {
  if (*n == k && hits[k - 1].score >= h->score) return;
  size_t at = *n < k ? (*n)++ : k - 1;
  while (at > 0 && hits[at - 1].score < h->score) {
    hits[at] = hits[at - 1];
    at--;
  }
  hits[at] = *h;
}

/* Whether a ranks before b: a higher score, or the same and a lower position. For scores that are numbers
 * this is the order top_insert leaves, whatever the order entries are offered in. */
static int top_before(const mem_hit *a, const mem_hit *b) {
  return a->score > b->score || (a->score == b->score && a->i < b->i);
}

/* top_insert for entries offered in any order. */
static void top_offer(mem_hit *hits, size_t *n, size_t k, const mem_hit *h) {
  if (*n == k && !top_before(h, &hits[k - 1])) return;
  size_t at = *n < k ? (*n)++ : k - 1;
  while (at > 0 && top_before(h, &hits[at - 1])) {
    hits[at] = hits[at - 1];
    at--;
  }
  hits[at] = *h;
}

/* Entry i scored (its recency's exp taken here). */
static mem_hit top_score(const mem_stream *s, const top_pass *p, size_t i) {
  mem_hit h = {.i = i, .recency = range_norm(&p->rr, recency(p->per_ms, p->q->now_ms, s->at_ms[i])),
               .importance = range_norm(&p->ri, s->importance[i]), .relevance = range_norm(&p->rl, p->rel[i])};
  h.score = weighted(p->q, h.recency, h.importance, h.relevance);
  return h;
}

/* Every entry looked at scored and offered in ascending position: the ranking as it always was, for what
 * no bound covers (a NaN or an infinity, a weight that is negative or infinite). */
static size_t top_plain(const mem_stream *s, const top_pass *p, size_t k, mem_hit *hits) {
  size_t got = 0;
  for (size_t i = 0; i < s->n; i++) {
    if (s->key[i] > p->q->below) continue;
    mem_hit h = top_score(s, p, i);
    top_insert(hits, &got, k, &h);
  }
  return got;
}

/* The same top k, without the exp of most entries: recency falls with age (exp and each rounding are
 * monotonic, and two ages a millisecond apart differ by far more than exp's error), each normalisation
 * and the weighted sum rise with their inputs for weights >= 0, so a score computed from the block's
 * newest recency, highest importance and relevance bounds every score in the block, and one from the
 * block's newest recency with an entry's own importance and relevance bounds that entry's. A block or an
 * entry whose bound is below the k-th score so far cannot enter. Blocks go newest first, as memories are
 * usually added in time order: the k-th score is high early. */
static size_t top_pruned(const mem_stream *s, const top_pass *p, size_t k, mem_hit *hits) {
  size_t got = 0, nb = (s->n + TOP_BLOCK - 1) / TOP_BLOCK;
  for (size_t b = nb; b-- > 0;) {
    const float *blk = p->blk + 3 * b;
    if (blk[0] == -INFINITY) continue; /* nothing looked at */
    float brec = range_norm(&p->rr, blk[2]);
    if (got == k && weighted(p->q, brec, range_norm(&p->ri, blk[1]), range_norm(&p->rl, blk[0])) < hits[k - 1].score)
      continue;
    size_t end = (b + 1) * TOP_BLOCK < s->n ? (b + 1) * TOP_BLOCK : s->n;
    for (size_t i = b * TOP_BLOCK; i < end; i++) {
      if (s->key[i] > p->q->below) continue;
      if (got == k && weighted(p->q, brec, range_norm(&p->ri, s->importance[i]), range_norm(&p->rl, p->rel[i])) <
                          hits[k - 1].score)
        continue;
      mem_hit h = top_score(s, p, i);
      top_offer(hits, &got, k, &h);
    }
  }
  return got;
}

/* Whether the bounds hold for a weight: a finite number >= 0 (a world file's are 0 to 100). */
static int weight_ok(double w) { return w >= 0 && w <= DBL_MAX; }

size_t mem_stream_top(const mem_stream *s, const mem_query *q, size_t k, mem_hit *hits, float *scratch) {
  size_t n = s->n;
  if (!k || !n || s->dim > MEM_DIM_MAX) return 0; /* the query's codes are on the stack */
  float *own = scratch ? NULL : malloc(mem_stream_scratch(n) * sizeof *own);
  if (!scratch && !own) return 0;
  top_pass p = {.q = q, .per_ms = log(0.995) / 3600000.0, .rel = scratch ? scratch : own, .at_lo = INT64_MAX,
                .at_hi = INT64_MIN, .rr = {.lo = INFINITY, .hi = -INFINITY}};
  p.blk = p.rel + n;
  p.ri = p.rl = p.rr;
  int8_t qc[MEM_DIM_MAX];
  float qscale = q->q && s->dim ? mem_vec_quantize(q->q, s->dim, qc) : 0;
  /* Every vector is scored, those not looked at too: one straight pass over the array is what the
   * prefetchers follow, and the few left out (the verbatim window) are ignored after. */
  mem_vec_scan_fn *scan = mem_vec_scan_for(n * (size_t)s->dim);
  for (size_t b0 = 0; b0 < n; b0 += TOP_BLOCK)
    pass_block(s, &p, scan, q->q && s->dim ? qc : NULL, qscale, b0, b0 + TOP_BLOCK < n ? b0 + TOP_BLOCK : n);
  size_t got = 0;
  if (p.looked) {
    /* The recency range from the oldest and the newest entry: recency falls with age. */
    p.rr = (mem_range){.lo = recency(p.per_ms, q->now_ms, p.at_lo), .hi = recency(p.per_ms, q->now_ms, p.at_hi)};
    /* The bounds hold for numbers: a NaN (which the ranges skip) or an infinity takes the plain path. A
     * relevance is NaN only when scale * qscale is not finite (then times a dot product of 0). */
    int finite = !s->nonfinite && fabsf(s->scale_max * qscale) <= FLT_MAX && fabsf(p.ri.lo) <= FLT_MAX &&
                 fabsf(p.ri.hi) <= FLT_MAX && fabsf(p.rl.lo) <= FLT_MAX && fabsf(p.rl.hi) <= FLT_MAX;
    int bounded = finite && weight_ok(q->w_recency) && weight_ok(q->w_importance) && weight_ok(q->w_relevance);
    got = bounded ? top_pruned(s, &p, k, hits) : top_plain(s, &p, k, hits);
  }
  free(own);
  return got;
}
