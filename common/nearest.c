/* Nearest known name by edit distance (see nearest.h). */
#include "common/nearest.h"

#include <ctype.h>
#include <string.h>

#define NEAREST_MAX 64 /* longer words are not compared: a typo suggestion is for short names */

static int fold(char c) { return c == '-' ? '_' : tolower((unsigned char)c); }

static int min3(int a, int b, int c) { return a < b ? (a < c ? a : c) : (b < c ? b : c); }

int ag_edit_distance(const char *a, const char *b) {
  size_t n = strlen(a), m = strlen(b);
  if (n > NEAREST_MAX || m > NEAREST_MAX) return 99;
  int d[NEAREST_MAX + 1][NEAREST_MAX + 1];
  for (size_t i = 0; i <= n; i++) d[i][0] = (int)i;
  for (size_t j = 0; j <= m; j++) d[0][j] = (int)j;
  for (size_t i = 1; i <= n; i++)
    for (size_t j = 1; j <= m; j++) {
      int cost = fold(a[i - 1]) != fold(b[j - 1]);
      d[i][j] = min3(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1]) &&
          d[i - 2][j - 2] + 1 < d[i][j])
        d[i][j] = d[i - 2][j - 2] + 1;
    }
  return d[n][m];
}

const char *ag_nearest_name(const char *word, const char *const *names, const char *extra) {
  size_t len = strlen(word);
  int limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
  const char *best = NULL;
  int best_d = limit + 1;
  for (size_t i = 0; names && names[i]; i++) {
    int d = ag_edit_distance(word, names[i]);
    if (d < best_d) best_d = d, best = names[i];
  }
  if (extra && ag_edit_distance(word, extra) < best_d) best = extra;
  return best;
}
