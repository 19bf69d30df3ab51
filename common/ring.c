/* The FIFO ring (see ring.h). Capacities are powers of two, so a slot index is a mask, not a division. */
#include "common/ring.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

void ag_ring_init(ag_ring *r, size_t item_size, size_t first_cap) {
  size_t c = 1;
  while (c < first_cap) c <<= 1;
  *r = (ag_ring){.size = item_size, .first_cap = c};
}

void ag_ring_free(ag_ring *r) {
  free(r->items);
  r->items = NULL;
  r->cap = r->head = r->len = 0;
}

/* Doubles the slots, moving the queued items to the front in order. */
int ag_ring_grow_(ag_ring *r) {
  size_t ncap = r->cap ? r->cap * 2 : r->first_cap;
  if (ncap < r->cap || ncap > SIZE_MAX / r->size) return AG_ERR_NOMEM;
  unsigned char *p = malloc(ncap * r->size);
  if (!p) return AG_ERR_NOMEM;
  /* The queued items are at most two runs: head..end of the slots, then the start. */
  size_t first = r->cap - r->head < r->len ? r->cap - r->head : r->len;
  if (first) memcpy(p, r->items + r->head * r->size, first * r->size);
  if (r->len > first) memcpy(p + first * r->size, r->items, (r->len - first) * r->size);
  free(r->items);
  r->items = p;
  r->cap = ncap;
  r->head = 0;
  return AG_OK;
}
