/* Process-wide heap settings: applied once, by a program's main, before the first allocation of note.
 * A world of a million agents makes and frees millions of small blocks per public message; glibc's
 * defaults (grow and trim the heap 128 KiB at a time) made that cost grow with the world. */
#ifndef AG_HEAP_H
#define AG_HEAP_H

/* Bytes the heap grows by beyond a request, and keeps when it shrinks (glibc's M_TOP_PAD). */
#define AG_HEAP_TOP_PAD (64u << 20)

/* Sets the allocator's settings for this process (glibc only; elsewhere nothing). Not thread-safe:
 * call it from main before other threads start. */
void ag_heap_tune(void);

#endif
