/* Process-wide heap settings: applied once, by a program's main, before the first allocation of note.
 * A world of a million agents makes and frees millions of small blocks per public message; glibc's
 * defaults (grow and trim the heap 128 KiB at a time) made that cost grow with the world. */
#ifndef AG_HEAP_H
#define AG_HEAP_H

#include <stddef.h>

/* Bytes the heap grows by beyond a request, and keeps when it shrinks (glibc's M_TOP_PAD). */
#define AG_HEAP_TOP_PAD (64u << 20)

/* Sets the allocator's settings for this process (glibc only; elsewhere nothing). Not thread-safe:
 * call it from main before other threads start. */
void ag_heap_tune(void);

/* Makes sure about bytes of free heap are already backed by memory (touched at its top), and kept
 * when the heap shrinks, so that a burst of small allocations of that size is not paid page fault by
 * page fault inside the burst: the first public message to a world of a million agents allocates about
 * 500 MB at once (WORLD_WAVE_BYTES per agent), and its page faults were a quarter of its fan-out.
 * The runtime calls it once a world is built: a load-time cost (0.25-0.4 s for 512 MB on our shared
 * 2-core VM). Called while a big input is still held (a world file's parse), it raises the peak by what
 * it touches: call it after what can be freed is freed. Only in a process whose main called ag_heap_tune (a program owns its heap; a library's
 * host keeps its settings): elsewhere, and outside glibc, nothing. The memory stays the process's: its
 * pages are resident from then on, used by the world's messages. */
void ag_heap_reserve(size_t bytes);

#endif
