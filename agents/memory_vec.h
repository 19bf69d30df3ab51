/* Quantised embeddings for the memory stream (issue 26, docs/memory.md "Stored vectors"): each vector is kept
 * as dim signed bytes and one float scale (symmetric, per-vector max-abs), a quarter of float32's bytes, and
 * a query is scored against every stored vector (an exhaustive scan, no index) with integer dot products.
 * The scan is written three times (portable C, AVX2, AVX-512 VNNI); the fastest the CPU runs is picked
 * when the program loads. Pure: no I/O, no state but that choice. */
#ifndef AG_MEMORY_VEC_H
#define AG_MEMORY_VEC_H

#include <stddef.h>
#include <stdint.h>

/* codes[j] = round(v[j] / scale) in [-127, 127] (never -128, which the AVX2 scan relies on), with
 * scale = max |v[j]| / 127, so that v[j] ~ scale * codes[j] within scale / 2. An all-zero v gives all-zero
 * codes and scale 0. Returns the scale. */
float mem_vec_quantize(const float *v, int dim, int8_t *codes);

/* out[i] = scales[i] * qscale * (the integer dot product of codes + i * dim and q), for i < n: the cosine
 * of stored vector i and the query, both quantised by mem_vec_quantize. Every implementation computes the
 * same integers and the same float product, so their results are bit-identical. */
typedef void mem_vec_scan_fn(const int8_t *codes, const float *scales, size_t n, int dim, const int8_t *q,
                             float qscale, float *out);

/* The scan by the implementation picked at load. */
void mem_vec_scan(const int8_t *codes, const float *scales, size_t n, int dim, const int8_t *q, float qscale,
                  float *out);

/* The implementation for a scan over bytes of codes in all (a query's whole scan, even when it is done in
 * parts): the fastest the CPU runs while the codes fit in its caches; past them AVX2 when the CPU has it,
 * whose 32-byte loads stream from memory faster here than AVX-512's 64-byte ones (bench/README.md). */
mem_vec_scan_fn *mem_vec_scan_for(size_t bytes);

/* One implementation, for tests and benchmarks. */
typedef struct mem_vec_impl {
  const char *name; /* "portable", "avx2", "avx512vnni" */
  mem_vec_scan_fn *scan;
} mem_vec_impl;

/* The implementations this CPU runs, portable first and the one mem_vec_scan uses last; *n set. Static. */
const mem_vec_impl *mem_vec_impls(size_t *n);

#endif
