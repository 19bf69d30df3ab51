/* A growable FIFO ring of fixed-size items (defer's calls, the bus's pending items, an agent's inbox).
 * Pushes and pops are O(1) and allocation-free once the ring has grown to its working size; items are
 * copied in and out by value, so a ring of pointers holds pointers and never owns what they point at.
 * The struct is public so it can be embedded; touch it only through these functions. */
#ifndef AG_RING_H
#define AG_RING_H

#include <stddef.h>
#include <string.h>

typedef struct ag_ring {
  unsigned char *items; /* cap slots of size bytes each, NULL until the first push */
  size_t size;          /* bytes per item */
  size_t first_cap;     /* slots allocated by the first push (a power of two) */
  size_t cap, head, len;
} ag_ring;

/* Starts an empty ring of items of item_size bytes; the first push allocates first_cap slots (rounded
 * up to a power of two, at least 1) and the ring doubles when full. Allocates nothing. */
void ag_ring_init(ag_ring *r, size_t item_size, size_t first_cap);
/* Frees the slots; items still queued are dropped without a look (release what they own first, e.g.
 * with ag_ring_pop until it returns 0). The ring is empty and reusable afterwards. */
void ag_ring_free(ag_ring *r);
/* Grows the ring (internal to push; exposed only so push can be inline). */
int ag_ring_grow_(ag_ring *r);

/* Pushes and pops are inline: they sit on the bus's and the defer queue's hot path. */
static inline unsigned char *ag_ring_slot_(const ag_ring *r, size_t i) {
  return r->items + ((r->head + i) & (r->cap - 1)) * r->size;
}

/* Copies item (size bytes) in at the tail. AG_ERR_NOMEM when growing fails (the ring is unchanged). */
static inline int ag_ring_push(ag_ring *r, const void *item) {
  if (r->len == r->cap) {
    int rc = ag_ring_grow_(r);
    if (rc) return rc;
  }
  memcpy(ag_ring_slot_(r, r->len), item, r->size);
  r->len++;
  return 0;
}

/* Copies the head item into *out (may be NULL to just drop it) and removes it; 0 when empty, else 1. */
static inline int ag_ring_pop(ag_ring *r, void *out) {
  if (r->len == 0) return 0;
  if (out) memcpy(out, r->items + r->head * r->size, r->size);
  r->head = (r->head + 1) & (r->cap - 1);
  r->len--;
  return 1;
}

/* The i-th queued item counted from the head (0 is the next to pop), in place, or NULL past the end.
 * Valid until the next push or pop: edit in place, e.g. to mark an item cancelled. */
static inline void *ag_ring_at(const ag_ring *r, size_t i) { return i < r->len ? ag_ring_slot_(r, i) : NULL; }

/* Items queued. */
static inline size_t ag_ring_len(const ag_ring *r) { return r->len; }

#endif
