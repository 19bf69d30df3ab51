/* Process-wide heap settings (see heap.h). Measured on a 1,000,000-agent world (bench_million, glibc
 * 2.36): with the default 128 KiB top pad the heap grew and was trimmed in small steps as replies
 * came and went, and the load took 9–10 s, one message reaching every agent 2.1–2.7 s, a reply 5.8 µs
 * and a mention-routed delivery after it 67–150 µs; with 64 MiB: 3.1–5.1 s, 0.5–0.8 s, 1.7–2.8 µs and
 * 4–34 µs. The cost is up to 64 MiB of address space the heap keeps after it shrinks; pages never
 * touched are not resident, so a small world's RSS does not change. */
#include "common/heap.h"

#include <limits.h>
#include <stdlib.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

static int tuned; /* ag_heap_tune ran: this process owns its heap's settings */

void ag_heap_tune(void) {
#ifdef __GLIBC__
  mallopt(M_TOP_PAD, (int)AG_HEAP_TOP_PAD);
  tuned = 1;
#endif
}

/* Blocks over glibc's small-block caches (freed, they join the heap's top at once) and under its mmap
 * threshold (so they come from the heap, not from a mapping that a free would give back). */
#define RESERVE_BLOCK (64u << 10)

void ag_heap_reserve(size_t bytes) {
#ifdef __GLIBC__
  if (!tuned || bytes < RESERVE_BLOCK) return;
  size_t n = bytes / RESERVE_BLOCK; /* under a block (a world of a hundred agents): nothing */
  void **blocks = malloc(n * sizeof *blocks);
  if (!blocks) return; /* a hint: nothing to undo */
  /* Kept when the heap shrinks: the free top may hold this much (the pad is an int). */
  if (bytes > AG_HEAP_TOP_PAD) mallopt(M_TOP_PAD, bytes < INT_MAX ? (int)bytes : INT_MAX);
  size_t got = 0;
  for (; got < n && (blocks[got] = malloc(RESERVE_BLOCK)); got++)
    for (size_t off = 0; off < RESERVE_BLOCK; off += 4096) ((volatile char *)blocks[got])[off] = 0;
  while (got > 0) free(blocks[--got]); /* newest first: each joins the top as it goes */
  free(blocks);
#else
  (void)bytes;
#endif
}
