/* Process-wide heap settings (see heap.h). Measured on a 1,000,000-agent world (bench_million, glibc
 * 2.36): with the default 128 KiB top pad the heap grew and was trimmed in small steps as replies
 * came and went, and the load took 9–10 s, one message reaching every agent 2.1–2.7 s, a reply 5.8 µs
 * and a mention-routed delivery after it 67–150 µs; with 64 MiB: 3.1–5.1 s, 0.5–0.8 s, 1.7–2.8 µs and
 * 4–34 µs. The cost is up to 64 MiB of address space the heap keeps after it shrinks; pages never
 * touched are not resident, so a small world's RSS does not change. */
#include "common/heap.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

void ag_heap_tune(void) {
#ifdef __GLIBC__
  mallopt(M_TOP_PAD, (int)AG_HEAP_TOP_PAD);
#endif
}
