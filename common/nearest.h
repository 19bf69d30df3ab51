/* "Did you mean ...?": the known name nearest to a misspelt one, by edit distance, for error messages
 * that name an unknown field or option. Pure, no allocation beyond the call. */
#ifndef AG_NEAREST_H
#define AG_NEAREST_H

#include <stddef.h>

/* Edit distance (insert, delete, substitute, swap of neighbours) between a and b, ASCII
 * case-insensitive, '_' and '-' equal; capped at 99 for long inputs. */
int ag_edit_distance(const char *a, const char *b);

/* The name of names (NULL-terminated, borrowed) nearest to word, or NULL when none is close enough:
 * at most 1 edit for words of up to 4 characters, 2 up to 8, else 3. extra (may be NULL) is one more
 * candidate. The result points into names (or is extra). */
const char *ag_nearest_name(const char *word, const char *const *names, const char *extra);

#endif
