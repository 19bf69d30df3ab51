/* The memory stream (issue 26, docs/memory.md): exact top-8 retrieval over 100,000 and 1,000 memories of
 * 1,536 dimensions (a hosted embedder's size) on one core; a world of 1,000 agents with 1,000 memories each
 * (hash embedder, 256 dimensions): memory's added cost per turn (the new message embedded and added, the
 * question embedded, top-8 retrieved), bytes per memory and the process's RSS.
 * Usage: bench_memory [REPS] (default 5). */
#include "agents/memory_stream.h"
#include "agents/memory_vec.h"
#include "support/bench_stat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static uint64_t rng = 88172645463325252ull;
static float frand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (float)((double)(rng >> 11) / 9007199254740992.0) * 2.0f - 1.0f;
}

/* A random unit vector of dim floats. */
static void unit_vec(float *v, int dim) {
  double s = 0;
  for (int i = 0; i < dim; i++) v[i] = frand(), s += (double)v[i] * v[i];
  for (int i = 0; i < dim; i++) v[i] = (float)(v[i] / sqrt(s));
}

/* A stream of n memories of dim random dimensions, an hour apart, importance 1..10. */
static void fill(mem_stream *s, size_t n, int dim) {
  mem_stream_init(s, dim);
  ag_msg *m = ag_msg_new("human", "a memory", AG_KIND_HUMAN); /* shared: the text is not what is measured */
  float *v = malloc((size_t)dim * sizeof *v);
  for (size_t i = 0; i < n; i++) {
    unit_vec(v, dim);
    mem_entry e = {.msg = m, .at_ms = (int64_t)i * 3600000, .importance = (float)(1 + i % 10), .index = i};
    if (mem_stream_add(s, &e, v)) {
      fprintf(stderr, "bench_memory: out of memory at %zu memories\n", i);
      exit(1);
    }
  }
  free(v);
  ag_msg_unref(m);
}

/* The process's anonymous memory on transparent huge pages, in MiB (the codes of a large stream are advised
 * MADV_HUGEPAGE: a scan then misses the TLB once per 2 MiB instead of once per 4 KiB). */
static double huge_mib(void) {
  FILE *f = fopen("/proc/self/smaps_rollup", "r");
  char line[256];
  long kb = 0;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "AnonHugePages:", 14)) kb = atol(line + 14);
  if (f) fclose(f);
  return (double)kb / 1024.0;
}

/* Top-8 of n memories of dim dimensions: per call, in unit (1e3: ms, 1e6: µs), calls per sample. */
static void top8(const char *name, size_t n, int dim, int reps, int calls, double unit, const char *unit_name) {
  mem_stream s;
  fill(&s, n, dim);
  float *q = malloc((size_t)dim * sizeof *q), *scratch = malloc(mem_stream_scratch(n) * sizeof *scratch);
  unit_vec(q, dim);
  mem_query mq = {.q = q, .now_ms = (int64_t)n * 3600000, .below = UINT64_MAX, .w_recency = 1, .w_importance = 1,
                  .w_relevance = 1};
  mem_hit hits[8];
  double v[64], w[64];
  size_t got = 0;
  for (int r = 0; r < reps; r++) {
    double t0 = bench_now_s(), c0 = bench_thread_cpu_s();
    for (int c = 0; c < calls; c++) got += mem_stream_top(&s, &mq, 8, hits, scratch);
    v[r] = (bench_thread_cpu_s() - c0) / calls * unit;
    w[r] = (bench_now_s() - t0) / calls * unit;
  }
  if (got != (size_t)reps * calls * 8) fprintf(stderr, "bench_memory: %s: short answer\n", name);
  if (n * (size_t)dim >= ((size_t)64 << 20))
    printf("| %s: codes %.0f MiB, of the process's memory on huge pages | %.0f | | | MiB |\n", name,
           (double)n * dim / 1048576.0, huge_mib());
  char label[160];
  snprintf(label, sizeof label, "%s (CPU)", name);
  bench_row(label, unit_name, v, reps);
  snprintf(label, sizeof label, "%s (wall)", name);
  bench_row(label, unit_name, w, reps);
  free(q);
  free(scratch);
  mem_stream_free(&s);
}

/* The XOR of len bytes (len a multiple of 8), eight at a time: a pass that does nothing but read. */
static uint64_t read_all(const int8_t *p, size_t len) {
  uint64_t acc[4] = {0};
  for (size_t i = 0; i + 32 <= len; i += 32)
    for (int k = 0; k < 4; k++) {
      uint64_t w;
      memcpy(&w, p + i + 8 * k, sizeof w);
      acc[k] ^= w;
    }
  return acc[0] ^ acc[1] ^ acc[2] ^ acc[3];
}

/* The scan alone (every stored vector scored against the query, no recency, importance nor top-k), by each
 * implementation this CPU runs: what the SIMD and the int8 codes buy, and the bandwidth it reaches. */
static void scan_only(size_t n, int dim, int reps, int calls) {
  mem_stream s;
  fill(&s, n, dim);
  float *q = malloc((size_t)dim * sizeof *q), *out = malloc(n * sizeof *out);
  int8_t *qc = malloc((size_t)dim);
  unit_vec(q, dim);
  float qscale = mem_vec_quantize(q, dim, qc);
  size_t nimpl;
  const mem_vec_impl *impl = mem_vec_impls(&nimpl);
  for (size_t k = 0; k < nimpl; k++) {
    double v[64];
    for (int r = 0; r < reps; r++) {
      double c0 = bench_thread_cpu_s();
      for (int c = 0; c < calls; c++) impl[k].scan(s.codes, s.scales, n, dim, qc, qscale, out);
      v[r] = (bench_thread_cpu_s() - c0) / calls * 1e3;
    }
    char label[160];
    snprintf(label, sizeof label, "scan only, %zu x %d, %s (CPU; %.0f MB per query)", n, dim, impl[k].name,
             (double)n * dim / 1e6);
    bench_row(label, "ms", v, reps);
  }
  /* The ceiling: the same bytes only read (eight at a time, XORed), no scoring. */
  double v[64];
  uint64_t x = 0;
  for (int r = 0; r < reps; r++) {
    double c0 = bench_thread_cpu_s();
    for (int c = 0; c < calls; c++) x ^= read_all(s.codes, n * (size_t)dim);
    v[r] = (bench_thread_cpu_s() - c0) / calls * 1e3;
  }
  char label[160];
  snprintf(label, sizeof label, "read only, the same %.0f MB (CPU; checksum %llx)", (double)n * dim / 1e6,
           (unsigned long long)(x & 0xf));
  bench_row(label, "ms", v, reps);
  free(q);
  free(out);
  free(qc);
  mem_stream_free(&s);
}

static long rss_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = 0;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "VmRSS:", 6)) kb = atol(line + 6);
  if (f) fclose(f);
  return kb;
}

static const char *const words[] = {"bridge", "market", "apples", "river", "grain", "mill", "farm", "rain", "road",
                                    "mayor", "closed", "open", "tomorrow", "spring", "winter", "fish", "bread",
                                    "school", "church", "tax", "harvest", "festival", "storm", "doctor"};

/* A message of about 200 bytes from seeded words. */
static void sentence(char *out, size_t cap) {
  size_t n = 0;
  while (n + 12 < cap && n < 200) n += (size_t)snprintf(out + n, cap - n, "%s ", words[(rng >> 33) % 24]), frand();
}

/* 1,000 agents with 1,000 memories each: the turn's added cost, bytes per memory, RSS. */
static void world_scale(int reps) {
  enum { AGENTS = 1000, MEMS = 1000, TURNS = 2000 };
  long before = rss_kb();
  mem_stream *s = malloc(AGENTS * sizeof *s);
  char text[256];
  float v[MEM_HASH_DIM], q[MEM_HASH_DIM];
  ag_msg *m = ag_msg_new("human", "x", AG_KIND_HUMAN);
  m->seq = 1; /* messages, so that the verbatim window is left out as in a turn */
  for (int a = 0; a < AGENTS; a++) {
    mem_stream_init(&s[a], MEM_HASH_DIM);
    for (int i = 0; i < MEMS; i++) {
      sentence(text, sizeof text);
      mem_embed_hash(text, v, MEM_HASH_DIM);
      mem_entry e = {.msg = m, .at_ms = (int64_t)i * 60000, .importance = 3, .index = (uint64_t)i};
      mem_stream_add(&s[a], &e, v);
    }
  }
  long after = rss_kb();
  float *scratch = malloc(mem_stream_scratch(MEMS + TURNS) * sizeof *scratch);
  mem_hit hits[8];
  double t[64];
  for (int r = 0; r < reps; r++) {
    double t0 = bench_thread_cpu_s();
    for (int k = 0; k < TURNS / reps; k++) {
      mem_stream *st = &s[(rng >> 20) % AGENTS];
      frand();
      sentence(text, sizeof text); /* the message answered joins the stream */
      mem_embed_hash(text, v, MEM_HASH_DIM);
      mem_entry e = {.msg = m, .at_ms = (int64_t)(MEMS + k) * 60000, .importance = 3, .index = st->n};
      mem_stream_add(st, &e, v);
      mem_embed_hash(text, q, MEM_HASH_DIM); /* and is the query */
      mem_query mq = {.q = q, .now_ms = e.at_ms, .below = st->n > 10 ? st->n - 10 : 0, .w_recency = 1,
                      .w_importance = 1, .w_relevance = 1};
      mem_stream_top(st, &mq, 8, hits, scratch);
    }
    t[r] = (bench_thread_cpu_s() - t0) / (TURNS / reps) * 1e6;
  }
  bench_row("1,000 agents x 1,000 memories (hash, 256 dims): added cost per turn (CPU)", "us", t, reps);
  /* The entry, the codes and their scale, and what retrieval reads beside them (time, importance, key). */
  size_t per = sizeof(mem_entry) + MEM_HASH_DIM * sizeof(int8_t) + sizeof(float) + sizeof(int64_t) + sizeof(float) +
               sizeof(uint64_t);
  printf("| bytes per memory in RAM (entry + vector + retrieval's copies; the text is the message's, shared) | %zu "
         "| | | B |\n", per);
  printf("| RSS of 1,000,000 memories | %.0f | | | MiB |\n", (double)(after - before) / 1024.0);
  printf("| process RSS | %.0f | | | MiB |\n", (double)after / 1024.0);
  for (int a = 0; a < AGENTS; a++) mem_stream_free(&s[a]);
  free(s);
  free(scratch);
  ag_msg_unref(m);
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 5;
  if (reps < 1 || reps > 64) reps = 5;
  printf("| case | min | median | max | unit |\n|---|---|---|---|---|\n");
  top8("top-8 of 1,000 memories x 1,536 dims", 1000, 1536, reps, 2000, 1e6, "us");
  top8("top-8 of 100,000 memories x 1,536 dims", 100000, 1536, reps, 5, 1e3, "ms");
  top8("top-8 of 100,000 memories x 256 dims (hash)", 100000, 256, reps, 20, 1e3, "ms");
  scan_only(100000, 1536, reps, 5);
  world_scale(reps);
  return 0;
}
