/* Visible control characters for terminal output (see term_text.h). */
#include "common/term_text.h"

#include "common/utf8.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The code point of the valid k-byte sequence at p when it is a bidi control or a line/paragraph
 * separator (shown, not obeyed: U+202E turns "gnp.exe" into what reads as "exe.png"), else 0. */
static unsigned bidi_control(const unsigned char *p, size_t k) {
  unsigned cp = 0;
  if (k == 2) cp = ((p[0] & 0x1Fu) << 6) | (p[1] & 0x3Fu);
  else if (k == 3) cp = ((p[0] & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
  int bidi = cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x2028 && cp <= 0x202E) ||
             (cp >= 0x2066 && cp <= 0x2069);
  return bidi ? cp : 0;
}

void ag_term_text_write(FILE *f, const char *s, int flags) {
  size_t n = strlen(s), i = 0;
  while (i < n) {
    unsigned char c = (unsigned char)s[i];
    size_t k = ag_utf8_seq_len(s + i, n - i);
    unsigned bidi = k ? bidi_control((const unsigned char *)s + i, k) : 0;
    if ((c == '\n' || c == '\t') && !(flags & AG_TERM_ONE_LINE)) {
      fputc(c, f);
      if (c == '\n' && (flags & AG_TERM_INDENT) && i + 1 < n && s[i + 1] != '\n') fputs("  ", f);
    } else if (c < 0x20 || c == 0x7f) {
      fputc('^', f);
      fputc(c ^ 0x40, f); /* ESC (0x1b) -> '[', DEL (0x7f) -> '?' */
    } else if (!k) {
      fputs("\xEF\xBF\xBD", f);
      k = 1;
    } else if (k == 2 && c == 0xC2 && (unsigned char)s[i + 1] < 0xA0) {
      fprintf(f, "<U+%04X>", (unsigned char)s[i + 1]); /* C1: 0x9B alone is a CSI to some terminals */
    } else if (bidi) {
      fprintf(f, "<U+%04X>", bidi);
    } else {
      fwrite(s + i, 1, k, f);
    }
    i += k ? k : 1;
  }
}

void ag_term_text_put(FILE *f, const char *s) { ag_term_text_write(f, s, 0); }

void ag_term_fputs(FILE *f, const char *s, int flags) {
  if (isatty(fileno(f))) ag_term_text_write(f, s, flags);
  else fputs(s, f);
}

char *ag_term_text_dup(const char *s, int flags) {
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  if (!f) return NULL;
  ag_term_text_write(f, s, flags);
  if (fclose(f)) {
    free(out);
    return NULL;
  }
  return out;
}

void ag_term_tail_append(char *tail, size_t cap, size_t *len, const char *text) {
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    if (*len + 1 >= cap) {
      size_t drop = cap / 2;
      while (drop < *len && ((unsigned char)tail[drop] & 0xC0) == 0x80) drop++;
      memmove(tail, tail + drop, *len - drop);
      *len -= drop;
    }
    tail[(*len)++] = (char)(*p < 0x20 || *p == 0x7f ? ' ' : *p);
  }
  tail[*len] = '\0';
}
