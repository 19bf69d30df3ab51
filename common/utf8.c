/* UTF-8 checking and repair (see utf8.h), after the table in RFC 3629 section 4. */
#include "common/utf8.h"

#include <stdlib.h>
#include <string.h>

#define UTF8_REPLACEMENT "\xEF\xBF\xBD"

static int in(unsigned char c, unsigned lo, unsigned hi) { return c >= lo && c <= hi; }

size_t ag_utf8_seq_len(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  if (n == 0) return 0;
  if (p[0] < 0x80) return 1;
  size_t len;
  unsigned lo = 0x80, hi = 0xBF; /* the range of the second byte */
  if (in(p[0], 0xC2, 0xDF)) len = 2;
  else if (in(p[0], 0xE0, 0xEF)) len = 3, lo = p[0] == 0xE0 ? 0xA0 : 0x80, hi = p[0] == 0xED ? 0x9F : 0xBF;
  else if (in(p[0], 0xF0, 0xF4)) len = 4, lo = p[0] == 0xF0 ? 0x90 : 0x80, hi = p[0] == 0xF4 ? 0x8F : 0xBF;
  else return 0;
  if (n < len || !in(p[1], lo, hi)) return 0;
  for (size_t i = 2; i < len; i++)
    if (!in(p[i], 0x80, 0xBF)) return 0;
  return len;
}

char *ag_utf8_fix(const char *s, int *nomem) {
  size_t n = strlen(s), i = 0, bad = 0;
  *nomem = 0;
  for (size_t k; i < n; i += k ? k : 1)
    if (!(k = ag_utf8_seq_len(s + i, n - i))) bad++;
  if (!bad) return NULL;
  char *out = malloc(n + 2 * bad + 1), *o = out;
  if (!out) {
    *nomem = 1;
    return NULL;
  }
  for (i = 0; i < n;) {
    size_t k = ag_utf8_seq_len(s + i, n - i);
    if (k) memcpy(o, s + i, k), o += k, i += k;
    else memcpy(o, UTF8_REPLACEMENT, 3), o += 3, i++;
  }
  *o = '\0';
  return out;
}

size_t ag_json_replace_nul_escapes(char *p, size_t n) {
  size_t count = 0;
  for (size_t i = 0; i + 6 <= n; i++) {
    if (p[i] != '\\') continue;
    if (!memcmp(p + i + 1, "u0000", 5)) {
      memcpy(p + i + 1, "uFFFD", 5);
      count++;
    }
    i++; /* the escaped character is never the start of another escape */
  }
  return count;
}

