/* The memory stream's quantised vectors (issue 26, agents/memory_vec.h, docs/memory.md "Stored vectors"):
 * quantising, the SIMD scans against the portable one, and the quantised ranking against the float32 one it
 * replaced. Pure: no world, no server. */
#include "agents/memory_stream.h"
#include "agents/memory_vec.h"

#include "support/unit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 88172645463325252ull;
/* A seeded value in [-1, 1): the same vectors on every run. */
static float rng_float(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return (float)((double)(rng_state >> 11) / 9007199254740992.0) * 2.0f - 1.0f;
}

/* Every SIMD scan this CPU runs gives bit for bit the portable scan's scores, at lengths that leave tails
 * of every size and with the extreme codes (127 * -127 in every lane would saturate int16 if -128 were a
 * code); and the portable scan is the integer dot product scaled. */
static void quantised_scan_implementations_agree(void) {
  static const int dims[] = {1, 31, 32, 63, 64, 100, 255, 256, 257, 1536, 1537};
  enum { N = 37 };
  size_t nimpl;
  const mem_vec_impl *impl = mem_vec_impls(&nimpl);
  CHECK(nimpl >= 1 && !strcmp(impl[0].name, "portable"));
  for (size_t d = 0; d < sizeof dims / sizeof *dims; d++) {
    int dim = dims[d];
    int8_t *codes = malloc((size_t)N * dim), *q = malloc((size_t)dim);
    float scales[N], want[N], got[N];
    for (size_t i = 0; i < (size_t)N * dim; i++) codes[i] = (int8_t)(rng_float() * 127.4f);
    for (int j = 0; j < dim; j++) q[j] = (int8_t)(rng_float() * 127.4f);
    for (int j = 0; j < dim; j++) codes[j] = -127, q[j] = j % 2 ? 127 : q[j]; /* vector 0 at the int16 edge */
    for (int i = 0; i < N; i++) scales[i] = 0.001f * (float)(i + 1);
    impl[0].scan(codes, scales, N, dim, q, 0.5f, want);
    for (int i = 0; i < N; i++) {
      int32_t dot = 0;
      for (int j = 0; j < dim; j++) dot += codes[(size_t)i * dim + j] * q[j];
      CHECK(want[i] == (float)dot * (scales[i] * 0.5f));
    }
    for (size_t k = 1; k < nimpl; k++) {
      impl[k].scan(codes, scales, N, dim, q, 0.5f, got);
      for (int i = 0; i < N; i++)
        if (got[i] != want[i])
          unit_fail_(__FILE__, __LINE__, "%s, dim %d, vector %d: %g, portable %g", impl[k].name, dim, i, got[i], want[i]);
    }
    free(codes);
    free(q);
  }
}

/* Quantising one vector: codes within [-127, 127], the largest |v| at +-127, v rebuilt within scale / 2. */
static void quantise_is_symmetric_max_abs(void) {
  float v[5] = {0.5f, -1.0f, 0.25f, 0.0f, 0.999f}, zero[3] = {0};
  int8_t c[5];
  float scale = mem_vec_quantize(v, 5, c);
  CHECK(fabsf(scale - 1.0f / 127) < 1e-9f && c[1] == -127 && c[3] == 0 && c[4] == 127);
  for (int j = 0; j < 5; j++) CHECK(fabsf(c[j] * scale - v[j]) <= scale / 2 + 1e-7f);
  CHECK(mem_vec_quantize(zero, 3, c) == 0.0f && c[0] == 0 && c[2] == 0);
}

/* The float32 cosines of q with the n vectors at v (dim each), into out. */
static void float_cosines(const float *v, size_t n, int dim, const float *q, float *out) {
  for (size_t i = 0; i < n; i++) out[i] = mem_dot(v + i * (size_t)dim, q, (size_t)dim);
}

static int desc(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x < y) - (x > y);
}

/* One query of the ranking comparison: the quantised top-8 by relevance against the float32 top-8, each
 * rank's float32 cosine compared. Adds the top-8 members in common to *same; returns the largest gap. */
static float top8_gap(const mem_stream *s, const float *v, const float *q, float *cos, size_t *same) {
  size_t n = s->n;
  mem_hit hits[8];
  mem_query mq = {.q = q, .now_ms = 0, .below = UINT64_MAX, .w_relevance = 1};
  CHECK_INT(mem_stream_top(s, &mq, 8, hits, NULL), 8);
  float_cosines(v, n, s->dim, q, cos);
  float picked[8], best[8], gap = 0;
  for (int r = 0; r < 8; r++) picked[r] = cos[hits[r].i];
  qsort(picked, 8, sizeof *picked, desc);
  qsort(cos, n, sizeof *cos, desc);
  memcpy(best, cos, sizeof best);
  for (int r = 0; r < 8; r++) {
    gap = fmaxf(gap, best[r] - picked[r]);
    for (int t = 0; t < 8; t++) /* a member of both sets: its float cosine is among the float top-8's */
      if (picked[r] == best[t]) {
        ++*same;
        break;
      }
  }
  return gap;
}

/* Quantised retrieval against the float32 ranking it replaced (docs/memory.md "Stored vectors"), on random
 * unit vectors of 1,536 dimensions (the hardest case: cosines crowd near 0, the top-8 within 0.01 of each
 * other) and on the hash embedder's vectors of generated sentences. Tolerance: at every rank, the float32
 * cosine of the quantised top-8's member is within 0.01 of the float32 top-8's; and on average at least 7
 * of the 8 are the same memories. The figures are printed for bench/README.md. */
static void quantised_top8_matches_float32(void) {
  enum { N = 2000, QUERIES = 40 };
  static const char *const words[] = {"bridge", "market", "apples", "river", "grain", "mill", "farm", "rain",
                                      "road", "mayor", "closed", "open", "tomorrow", "spring", "winter", "fish",
                                      "bread", "school", "church", "tax", "harvest", "festival", "storm", "doctor"};
  for (int kind = 0; kind < 2; kind++) {
    int dim = kind ? MEM_HASH_DIM : 1536;
    float *v = malloc((size_t)N * dim * sizeof *v), *q = malloc((size_t)dim * sizeof *q), *cos = malloc(N * sizeof *cos);
    mem_stream s;
    mem_stream_init(&s, dim);
    ag_msg *m = ag_msg_new("human", "x", AG_KIND_HUMAN);
    for (size_t i = 0; i <= N; i++) { /* the last one is a query */
      float *x = i < N ? v + i * (size_t)dim : q;
      if (kind) {
        char text[128] = "";
        for (int w = 0; w < 6; w++) strcat(strcat(text, words[(size_t)((rng_float() + 1) * 12) % 24]), " ");
        mem_embed_hash(text, x, dim);
      } else {
        for (int j = 0; j < dim; j++) x[j] = rng_float();
        float norm = sqrtf(mem_dot(x, x, (size_t)dim));
        for (int j = 0; j < dim; j++) x[j] /= norm;
      }
      mem_entry e = {.msg = m, .at_ms = 0, .importance = 3, .index = i};
      if (i < N) CHECK_INT(mem_stream_add(&s, &e, x), 0);
      if (i < N) continue;
      size_t same = 0;
      float gap = 0;
      for (int k = 0; k < QUERIES; k++) {
        if (k) /* the next query: the first one shifted, a fresh vector for the same stream */
          for (int j = 0; j < dim; j++) q[j] = kind ? q[(j + 1) % dim] : rng_float() / sqrtf((float)dim) * 1.732f;
        gap = fmaxf(gap, top8_gap(&s, v, q, cos, &same));
      }
      fprintf(stderr, "  %s, %d memories x %d: top-8 members shared with float32 %.2f of 8, largest cosine gap %.4f\n",
              kind ? "hash embedder" : "random unit vectors", N, dim, (double)same / QUERIES, gap);
      CHECK(gap <= 0.01f);
      CHECK(same >= 7 * QUERIES);
    }
    ag_msg_unref(m);
    mem_stream_free(&s);
    free(v);
    free(q);
    free(cos);
  }
}

/* The ranking as mem_stream_top computed it before the bounds and the per-entry arrays (commit a976273):
 * every entry looked at scored from its mem_entry, offered in ascending position. The reference the
 * faster retrieval must equal bit for bit. */
static size_t top_before_bounds(const mem_stream *s, const mem_query *q, size_t k, mem_hit *hits) {
  size_t n = s->n, got = 0;
  float *rec = malloc(3 * n * sizeof *rec + 1), *imp = rec + n, *rel = imp + n;
  if (q->q && s->dim) {
    int8_t qc[MEM_DIM_MAX];
    float qscale = mem_vec_quantize(q->q, s->dim, qc);
    mem_vec_scan(s->codes, s->scales, n, s->dim, qc, qscale, rel);
  } else {
    memset(rel, 0, n * sizeof *rel);
  }
  const double per_ms = log(0.995) / 3600000.0;
  float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (size_t i = 0; i < n; i++) {
    if (!(s->e[i].note || s->e[i].index < q->below)) {
      rec[i] = NAN;
      continue;
    }
    int64_t age = q->now_ms - s->e[i].at_ms;
    rec[i] = (float)exp(per_ms * (double)(age > 0 ? age : 0));
    imp[i] = s->e[i].importance;
    float v[3] = {rec[i], imp[i], rel[i]};
    for (int c = 0; c < 3; c++) lo[c] = v[c] < lo[c] ? v[c] : lo[c], hi[c] = v[c] > hi[c] ? v[c] : hi[c];
  }
  for (size_t i = 0; i < n; i++) {
    if (isnan(rec[i])) continue;
    float v[3] = {rec[i], imp[i], rel[i]}, norm[3];
    for (int c = 0; c < 3; c++) norm[c] = hi[c] - lo[c] > 0 ? (v[c] - lo[c]) / (hi[c] - lo[c]) : 0;
    mem_hit h = {.i = i, .recency = norm[0], .importance = norm[1], .relevance = norm[2]};
    h.score = (float)(q->w_recency * h.recency + q->w_importance * h.importance + q->w_relevance * h.relevance);
    if (got == k && hits[k - 1].score >= h.score) continue;
    size_t at = got < k ? got++ : k - 1;
    for (; at > 0 && hits[at - 1].score < h.score; at--) hits[at] = hits[at - 1];
    hits[at] = h;
  }
  free(rec);
  return got;
}

/* mem_stream_top and top_before_bounds on q: the same hits, bit for bit (NaNs included); 1 when equal. */
static int same_top(const mem_stream *s, const mem_query *q, size_t k) {
  mem_hit *want = calloc(k, sizeof *want), *got = calloc(k, sizeof *got);
  size_t nw = top_before_bounds(s, q, k, want), ng = mem_stream_top(s, q, k, got, NULL);
  int same = nw == ng;
  for (size_t r = 0; same && r < ng; r++)
    same = want[r].i == got[r].i && !memcmp(&want[r].recency, &got[r].recency, sizeof(float)) &&
           !memcmp(&want[r].importance, &got[r].importance, sizeof(float)) &&
           !memcmp(&want[r].relevance, &got[r].relevance, sizeof(float)) &&
           !memcmp(&want[r].score, &got[r].score, sizeof(float));
  if (!same)
    fprintf(stderr, "  n %zu, k %zu, below %llu: %zu hits, before %zu; first: %zu (%.9g), before %zu (%.9g)\n", s->n, k,
            (unsigned long long)q->below, ng, nw, ng ? got[0].i : 0, ng ? (double)got[0].score : 0.0,
            nw ? want[0].i : 0, nw ? (double)want[0].score : 0.0);
  free(want);
  free(got);
  return same;
}

/* A random stream of n entries of dim dimensions (0: none) for case c: times in order, shuffled, tied or
 * in the future; importances tied or not; notes; repeated and zero vectors (tied relevances). */
static void random_stream(mem_stream *s, size_t n, int dim, int c, ag_msg *m) {
  mem_stream_init(s, dim);
  float *v = calloc((size_t)dim + 1, sizeof *v);
  for (size_t i = 0; i < n; i++) {
    float u = (rng_float() + 1) / 2;
    int64_t at = c % 3 == 0 ? (int64_t)i * 3600000 : c % 3 == 1 ? (int64_t)(u * 1e11) : (int64_t)(i / 7) * 60000;
    float imp = c % 2 ? (float)(1 + (int)(u * 10) % 10) : 1 + 9 * (rng_float() + 1) / 2;
    mem_entry e = {.msg = m, .at_ms = at, .importance = imp, .index = i, .note = rng_float() > 0.8f};
    if (e.note) e.index = 0;
    if (i % 5 == 0 || !(i % 11)) { /* every fifth vector repeats the one before; every eleventh is zero */
    } else {
      for (int j = 0; j < dim; j++) v[j] = rng_float();
    }
    if (!(i % 11))
      for (int j = 0; j < dim; j++) v[j] = 0;
    CHECK_INT(mem_stream_add(s, &e, dim ? v : NULL), 0);
  }
  free(v);
}

/* Retrieval with its bounds and its per-entry arrays ranks exactly as the plain pass over every entry did:
 * random streams (sizes around the 256-entry blocks), times, importances, notes, windows, weights (zeros
 * included), k, a missing query, ties; after importances change (the rating path); and with a NaN
 * importance (a block of them), an infinite one, a negative or an infinite weight, which take the plain path. */
static void top_k_is_the_plain_ranking_bit_for_bit(void) {
  /* 9,000 x 256: codes past 2 MiB (huge pages); 20,000 x 256: past 4 MiB (the scan for memory, mem_vec_scan_for) */
  static const size_t sizes[] = {1, 2, 7, 255, 256, 257, 1000, 3000, 9000, 20000};
  static const int dims[] = {0, 16, 256};
  ag_msg *m = ag_msg_new("human", "x", AG_KIND_HUMAN);
  float *q = malloc(256 * sizeof *q);
  size_t cases = 0, same = 0;
  for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
    for (int d = 0; d < 3; d++)
      for (int c = 0; c < 6; c++) {
        size_t n = sizes[z];
        mem_stream s;
        random_stream(&s, n, dims[d], c, m);
        for (int j = 0; j < 256; j++) q[j] = rng_float();
        for (int t = 0; t < 12; t++) {
          static const uint64_t belows[] = {0, 1, 5, UINT64_MAX};
          mem_query mq = {.q = t % 4 == 3 ? NULL : q, .now_ms = (int64_t)n * 3600000 - (t % 2) * 100000000000,
                          .below = t % 5 == 4 ? n / 2 : t % 5 == 3 ? (n > 10 ? n - 10 : 0) : belows[t % 4],
                          .w_recency = t % 3 ? (rng_float() + 1) * 1.5 : 0, .w_importance = (rng_float() + 1) * 1.5,
                          .w_relevance = t % 6 == 5 ? 0 : (rng_float() + 1) * 1.5};
          size_t k = t % 4 == 0 ? 1 : t % 4 == 1 ? 8 : t % 4 == 2 ? 50 : n < 4000 ? n + 5 : 300; /* n + 5: all, in order */
          cases++, same += same_top(&s, &mq, k);
          if (t == 6) /* the rating path: importances changed after the adds */
            for (size_t i = 0; i < n; i += 3) mem_stream_set_importance(&s, i, (float)(1 + (i * 7) % 10));
        }
        mem_query odd = {.q = q, .now_ms = 0, .below = UINT64_MAX, .w_recency = -1, .w_importance = 1,
                         .w_relevance = 1};
        cases++, same += same_top(&s, &odd, 8); /* a negative weight */
        odd.w_recency = INFINITY;
        cases++, same += same_top(&s, &odd, 8); /* an infinite one */
        odd.w_recency = 1;
        mem_stream_set_importance(&s, n - 1, -INFINITY);
        cases++, same += same_top(&s, &odd, 8); /* an infinite importance */
        for (size_t i = 0; i < n && i < 300; i++) mem_stream_set_importance(&s, i, NAN);
        cases++, same += same_top(&s, &odd, 8); /* NaN importances, a whole block of them */
        mem_stream_free(&s);
      }
  fprintf(stderr, "  %zu of %zu retrievals identical to the plain ranking\n", same, cases);
  CHECK(same == cases);
  ag_msg_unref(m);
  free(q);
}

static const unit_test tests[] = {
    UNIT(quantise_is_symmetric_max_abs),
    UNIT(quantised_scan_implementations_agree),
    UNIT(quantised_top8_matches_float32),
    UNIT(top_k_is_the_plain_ranking_bit_for_bit),
};

int main(int argc, char **argv) { return unit_main(argc, argv, tests, sizeof tests / sizeof *tests); }
