/* Quantised embeddings (memory_vec.h): int8 codes with a per-vector scale, and the exhaustive scan of a
 * query against all of them in portable C, AVX2 and AVX-512 VNNI, the one to use picked at load. */
#include "agents/memory_vec.h"

#include <math.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(AGORA_NO_CLONES)
#define MEM_VEC_X86 1
#include <immintrin.h>
#endif

float mem_vec_quantize(const float *v, int dim, int8_t *codes) {
  /* Eight running maxima, not one: a single one waits on the previous maxss at every element (2 µs for a
   * 1,536-dim query, a twentieth of a 1,000-memory retrieval). */
  float m[8] = {0}, max = 0;
  int j = 0;
  for (; j + 8 <= dim; j += 8)
    for (int k = 0; k < 8; k++) m[k] = fabsf(v[j + k]) > m[k] ? fabsf(v[j + k]) : m[k];
  for (; j < dim; j++) m[0] = fabsf(v[j]) > m[0] ? fabsf(v[j]) : m[0];
  for (int k = 0; k < 8; k++) max = m[k] > max ? m[k] : max;
  float scale = max / 127.0f, inv = max > 0 ? 127.0f / max : 0;
  /* Half away from zero by hand, not lrintf (a library call per element, and every query is quantised): the
   * loop vectorises. |v[j] * inv| <= 127 up to the product's rounding, so the clamp is only a guard. */
  for (j = 0; j < dim; j++) {
    float r = v[j] * inv;
    int c = (int)(r + (r < 0 ? -0.5f : 0.5f));
    codes[j] = (int8_t)(c > 127 ? 127 : c < -127 ? -127 : c);
  }
  return scale;
}

static void scan_portable(const int8_t *codes, const float *scales, size_t n, int dim, const int8_t *q, float qscale,
                          float *out) {
  for (size_t i = 0; i < n; i++) {
    const int8_t *a = codes + i * (size_t)dim;
    int32_t d = 0;
    for (int j = 0; j < dim; j++) d += (int32_t)a[j] * q[j];
    out[i] = (float)d * (scales[i] * qscale);
  }
}

#ifdef MEM_VEC_X86
/* How far ahead of the vector being scored the scan asks for lines, in bytes, and into which cache. The
 * hardware prefetcher follows the stream within a 4 KiB page but not across pages, which a 1,536-byte vector
 * crosses every few vectors. Measured on 100,000 x 1,536 (bench/README.md): no prefetch 14.1 ms, 2 KiB into
 * L1 11.7, 8-16 KiB into L2 10.2-10.5; a non-temporal hint doubles the time. */
enum { MEM_VEC_AHEAD = 8192 };
#define MEM_VEC_HINT _MM_HINT_T1

/* The address MEM_VEC_AHEAD bytes past p, as an integer: past the last vector it is outside the array, which
 * a prefetch may name (it never faults) but pointer arithmetic may not. */
static const char *ahead(const int8_t *p) { return (const char *)((uintptr_t)p + MEM_VEC_AHEAD); }

/* Eight lanes of int32 summed. */
__attribute__((target("avx2"))) static int32_t sum8(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

/* x * y for 32 pairs of bytes, summed in eight int32 lanes. maddubs multiplies unsigned by signed bytes, so
 * x's sign moves onto y: |x| * (y signed as x). Codes are never -128, so |x| <= 127 and a pair's sum
 * (<= 2 * 127 * 127) never saturates int16. */
__attribute__((target("avx2"))) static __m256i madd32(__m256i x, __m256i y) {
  __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
  return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

__attribute__((target("avx2"))) static void scan_avx2(const int8_t *codes, const float *scales, size_t n, int dim,
                                                      const int8_t *q, float qscale, float *out) {
  for (size_t i = 0; i < n; i++) {
    const int8_t *a = codes + i * (size_t)dim;
    __m256i acc0 = _mm256_setzero_si256(), acc1 = acc0;
    int j = 0;
    for (; j + 64 <= dim; j += 64) {
      _mm_prefetch(ahead(a + j), MEM_VEC_HINT);
      acc0 = _mm256_add_epi32(acc0, madd32(_mm256_loadu_si256((const void *)(a + j)),
                                           _mm256_loadu_si256((const void *)(q + j))));
      acc1 = _mm256_add_epi32(acc1, madd32(_mm256_loadu_si256((const void *)(a + j + 32)),
                                           _mm256_loadu_si256((const void *)(q + j + 32))));
    }
    for (; j + 32 <= dim; j += 32)
      acc0 = _mm256_add_epi32(acc0, madd32(_mm256_loadu_si256((const void *)(a + j)),
                                           _mm256_loadu_si256((const void *)(q + j))));
    int32_t d = sum8(_mm256_add_epi32(acc0, acc1));
    for (; j < dim; j++) d += (int32_t)a[j] * q[j];
    out[i] = (float)d * (scales[i] * qscale);
  }
}

#define MEM_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))

/* 64 bytes of codes from a (the bytes past len read as 0), made unsigned (+128) for vpdpbusd. */
MEM_VNNI static __m512i load_u8(const int8_t *a, int len) {
  __mmask64 m = len >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << len) - 1);
  return _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, a), _mm512_set1_epi8((char)0x80));
}

/* vpdpbusd multiplies unsigned by signed bytes into int32 with no intermediate saturation: the codes are
 * offset by 128 and 128 * sum(q) taken off again (padding lanes add 128 * 0). Four accumulators, as one
 * vpdpbusd waits for the previous one's result. */
MEM_VNNI static void scan_vnni(const int8_t *codes, const float *scales, size_t n, int dim, const int8_t *q,
                               float qscale, float *out) {
  int32_t bias = 0;
  for (int j = 0; j < dim; j++) bias += 128 * (int32_t)q[j];
  for (size_t i = 0; i < n; i++) {
    const int8_t *a = codes + i * (size_t)dim;
    __m512i acc[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
    int j = 0;
    for (; j + 256 <= dim; j += 256)
      for (int k = 0; k < 4; k++) {
        _mm_prefetch(ahead(a + j + 64 * k), MEM_VEC_HINT);
        acc[k] = _mm512_dpbusd_epi32(acc[k], load_u8(a + j + 64 * k, 64), _mm512_loadu_si512(q + j + 64 * k));
      }
    for (; j < dim; j += 64) {
      __mmask64 m = dim - j >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (dim - j)) - 1);
      acc[0] = _mm512_dpbusd_epi32(acc[0], load_u8(a + j, dim - j), _mm512_maskz_loadu_epi8(m, q + j));
    }
    __m512i s = _mm512_add_epi32(_mm512_add_epi32(acc[0], acc[1]), _mm512_add_epi32(acc[2], acc[3]));
    out[i] = (float)(_mm512_reduce_add_epi32(s) - bias) * (scales[i] * qscale);
  }
}
#endif

static const mem_vec_impl impls[] = {
    {.name = "portable", .scan = scan_portable},
#ifdef MEM_VEC_X86
    {.name = "avx2", .scan = scan_avx2},
    {.name = "avx512vnni", .scan = scan_vnni},
#endif
};

/* How many of impls this CPU runs (each needs what the one before it does); set once at load, before main. */
static size_t usable = 1;

#ifdef MEM_VEC_X86
__attribute__((constructor)) static void mem_vec_pick(void) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2")) return;
  usable = 2;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vnni"))
    usable = 3;
}
#endif

void mem_vec_scan(const int8_t *codes, const float *scales, size_t n, int dim, const int8_t *q, float qscale,
                  float *out) {
  impls[usable - 1].scan(codes, scales, n, dim, q, qscale, out);
}

/* Past this many bytes a scan streams from memory rather than L2 (2 MiB a core here). Measured on 100,000 x
 * 1,536 codes on huge pages, best of 15: AVX2 8.3-9.2 ms, AVX-512 VNNI 9.1-10.4 (and VNNI on 32-byte
 * registers as slow as on 64); at 1,000 x 1,536 (in L2) VNNI 22-25 us, AVX2 34-37; equal from 4.5 to 30 MB. */
#define MEM_VEC_CACHED ((size_t)4 << 20)

mem_vec_scan_fn *mem_vec_scan_for(size_t bytes) {
  return bytes > MEM_VEC_CACHED && usable == 3 ? impls[1].scan : impls[usable - 1].scan;
}

const mem_vec_impl *mem_vec_impls(size_t *n) {
  *n = usable;
  return impls;
}
