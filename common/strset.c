/* String set (see strset.h): FNV-1a hash, linear probing, the table kept at most half full. */
#include "common/strset.h"

#include "common/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t strset_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  /* FNV's low bits depend only on the low bits of the bytes, and the table is indexed by its low
   * bits: ids like "m1".."m99999" would pile into clusters. Mix the high bits down (murmur3's). */
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return (size_t)h;
}

/* The slot holding s, or the empty slot where it would go. cap is a power of two, never full. */
static size_t strset_slot(const char *const *slots, size_t cap, const char *s) {
  size_t i = strset_hash(s) & (cap - 1);
  while (slots[i] && strcmp(slots[i], s) != 0) i = (i + 1) & (cap - 1);
  return i;
}

static int strset_grow(ag_strset *set) {
  size_t cap = set->cap ? set->cap * 2 : 16;
  const char **slots = calloc(cap, sizeof *slots);
  if (!slots) return AG_ERR_NOMEM;
  for (size_t i = 0; i < set->cap; i++)
    if (set->slots[i]) slots[strset_slot(slots, cap, set->slots[i])] = set->slots[i];
  free(set->slots);
  set->slots = slots;
  set->cap = cap;
  return AG_OK;
}

int ag_strset_add(ag_strset *set, const char *s) {
  if ((set->n + 1) * 2 > set->cap) {
    int rc = strset_grow(set);
    if (rc) return rc;
  }
  size_t i = strset_slot(set->slots, set->cap, s);
  if (set->slots[i]) return AG_ERR_EXISTS;
  set->slots[i] = s;
  set->n++;
  return AG_OK;
}

int ag_strset_has(const ag_strset *set, const char *s) {
  return set->cap && set->slots[strset_slot(set->slots, set->cap, s)] != NULL;
}

void ag_strset_clear(ag_strset *set) {
  free(set->slots);
  set->slots = NULL;
  set->cap = set->n = 0;
}
