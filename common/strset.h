/* A set of strings for duplicate checks over input of any size (agent ids in a world file or a
 * snapshot, mentions in a message): open addressing, so adding n strings costs O(n), not O(n²). */
#ifndef AG_STRSET_H
#define AG_STRSET_H

#include <stddef.h>

/* The set borrows its strings: each must outlive the set (or its next ag_strset_clear). A zeroed
 * struct is an empty set. */
typedef struct ag_strset {
  const char **slots;
  size_t cap, n;
} ag_strset;

/* Adds s (borrowed). Returns AG_OK when added, AG_ERR_EXISTS when an equal string is already in,
 * AG_ERR_NOMEM. */
int ag_strset_add(ag_strset *set, const char *s);
/* 1 when a string equal to s is in the set. */
int ag_strset_has(const ag_strset *set, const char *s);
/* Frees the table; the set is empty and may be used again. */
void ag_strset_clear(ag_strset *set);

#endif
