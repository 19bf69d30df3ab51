/* Visible control characters for terminal output (see term_text.h). */
#include "common/term_text.h"

#include "common/utf8.h"

#include <string.h>

void ag_term_text_put(FILE *f, const char *s) {
  size_t n = strlen(s), i = 0;
  while (i < n) {
    unsigned char c = (unsigned char)s[i];
    size_t k = ag_utf8_seq_len(s + i, n - i);
    if (c == '\n' || c == '\t') {
      fputc(c, f);
    } else if (c < 0x20 || c == 0x7f) {
      fputc('^', f);
      fputc(c ^ 0x40, f); /* ESC (0x1b) -> '[', DEL (0x7f) -> '?' */
    } else if (!k) {
      fputs("\xEF\xBF\xBD", f);
      k = 1;
    } else if (k == 2 && c == 0xC2 && (unsigned char)s[i + 1] < 0xA0) {
      fprintf(f, "<U+%04X>", (unsigned char)s[i + 1]); /* C1: 0x9B alone is a CSI to some terminals */
    } else {
      fwrite(s + i, 1, k, f);
    }
    i += k ? k : 1;
  }
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
