/* Markdown marks for titles (see title_marks.h): a small subset of CommonMark's delimiter rules, enough
 * to tell "**bold**" from "C_API_VERSION". One pass over the runs with a stack of open runs per kind. */
#include "chat/title_marks.h"

#include <string.h>

#define OPEN_MAX 32 /* open emphasis runs remembered; deeper nesting stays as text */

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
static int is_word(char c) {
  unsigned char u = (unsigned char)c;
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || u >= 0x80;
}
static int is_mark(char c) { return c == '#' || c == '*' || c == '_' || c == '`'; }

/* Whether only spaces come between the start of the line and i. */
static int line_start(const char *t, size_t i) {
  while (i > 0 && (t[i - 1] == ' ' || t[i - 1] == '\t')) i--;
  return i == 0 || t[i - 1] == '\n' || t[i - 1] == '\r';
}

#define PROTECTED 2 /* in drop[]: inside a URL, never a mark (reset to 0 at the end) */

/* Marks the URL tokens ("scheme://..." or "www....") as protected: nothing inside them is a mark. */
static void protect_urls(const char *t, size_t len, unsigned char *drop) {
  for (size_t i = 0; i < len;) {
    while (i < len && is_space(t[i])) i++;
    size_t s = i;
    while (i < len && !is_space(t[i])) i++;
    int url = (i - s > 4 && !strncmp(t + s, "www.", 4));
    for (size_t k = s; !url && k + 3 <= i; k++) url = !memcmp(t + k, "://", 3);
    if (url) memset(drop + s, PROTECTED, i - s);
  }
}

typedef struct open_run {
  size_t at, n;
  char c;
} open_run;

/* A '*' or '_' run [i, j): drops it as a bullet, or pairs it with an open run of the same kind. */
static void emphasis_run(const char *t, size_t len, size_t i, size_t j, unsigned char *drop, open_run *open,
                         size_t *n_open) {
  char prev = i > 0 ? t[i - 1] : ' ', next = j < len ? t[j] : ' ';
  if (t[i] == '*' && j - i == 1 && is_space(next) && line_start(t, i)) { /* "* item" */
    drop[i] = 1;
    return;
  }
  if (is_word(prev) && is_word(next)) return; /* inside a word or a number */
  int opens = !is_space(next) && !is_word(prev), closes = !is_space(prev) && !is_word(next);
  if (closes) {
    for (size_t k = *n_open; k-- > 0;) {
      if (open[k].c != t[i] || open[k].n != j - i) continue;
      memset(drop + open[k].at, 1, open[k].n);
      memset(drop + i, 1, j - i);
      *n_open = k; /* runs opened inside the pair and never closed stay as text */
      return;
    }
  }
  if (opens && *n_open < OPEN_MAX) open[(*n_open)++] = (open_run){i, j - i, t[i]};
}

void chat_title_marks(const char *t, size_t len, unsigned char *drop) {
  open_run open[OPEN_MAX];
  size_t n_open = 0;
  memset(drop, 0, len);
  protect_urls(t, len, drop);
  for (size_t i = 0; i < len;) {
    if (drop[i] == PROTECTED || !is_mark(t[i])) {
      i++;
      continue;
    }
    size_t j = i;
    while (j < len && t[j] == t[i] && drop[j] != PROTECTED) j++;
    size_t end = i; /* a token of marks alone opening a line: "**__##", "##" */
    while (end < len && is_mark(t[end]) && drop[end] != PROTECTED) end++;
    if (line_start(t, i) && (end == len || is_space(t[end]))) {
      memset(drop + i, 1, end - i);
      i = end;
      continue;
    }
    if (t[i] == '`') memset(drop + i, 1, j - i);
    else if (t[i] == '*' || t[i] == '_') emphasis_run(t, len, i, j, drop, open, &n_open);
    i = j;
  }
  for (size_t i = 0; i < len; i++)
    if (drop[i] == PROTECTED) drop[i] = 0;
}
