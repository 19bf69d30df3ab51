/* Secret scrubbing for server error text (see redact.h). Works token by token so that what remains
 * reads as the server wrote it, with only the secret-shaped words replaced. */
#include "llm/redact.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define REDACT_MARK "[redacted]"
#define REDACT_WINDOW 8 /* consecutive key characters that make a token the key's */

static int redact_is_sep(unsigned char c) {
  return c <= ' ' || c == '"' || c == '\'' || c == '`' || c == '(' || c == ')' || c == '[' || c == ']' ||
         c == '{' || c == '}' || c == '<' || c == '>' || c == ',' || c == ';' || c == '=';
}

static int redact_is_alnum(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Length of the mask character at p ('*' or the 3-byte '•'), 0 if none. */
static size_t redact_mask_at(const char *p, const char *end) {
  if (*p == '*') return 1;
  if (end - p >= 3 && !memcmp(p, "\xe2\x80\xa2", 3)) return 3;
  return 0;
}

/* 3+ mask characters with 4+ letters or digits right before or right after them. */
static int redact_masked(const char *p, size_t n) {
  const char *end = p + n;
  for (const char *q = p; q < end;) {
    size_t m = redact_mask_at(q, end), run = 0;
    if (!m) {
      q++;
      continue;
    }
    const char *start = q;
    while (q < end && (m = redact_mask_at(q, end)) != 0) q += m, run++;
    size_t before = 0, after = 0;
    for (const char *b = start; b > p && redact_is_alnum((unsigned char)b[-1]); b--) before++;
    for (const char *a = q; a < end && redact_is_alnum((unsigned char)*a); a++) after++;
    if (run >= 3 && (before >= 4 || after >= 4)) return 1;
  }
  return 0;
}

/* Shaped like a provider's key: a known prefix and 16 or more key characters after it. */
static int redact_keylike(const char *p, size_t n) {
  static const char *const prefixes[] = {"sk-", "sk_", "AIza"};
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
    size_t k = strlen(prefixes[i]), body = 0;
    if (n < k || memcmp(p, prefixes[i], k)) continue;
    for (size_t j = k; j < n; j++)
      if (redact_is_alnum((unsigned char)p[j]) || p[j] == '-' || p[j] == '_') body++;
    if (body >= 16) return 1;
  }
  return 0;
}

static int redact_has_key(const char *p, size_t n, const char *key, size_t klen) {
  if (!klen) return 0;
  if (klen < REDACT_WINDOW) return n == klen && !memcmp(p, key, n);
  for (size_t i = 0; i + REDACT_WINDOW <= klen; i++)
    if (n >= REDACT_WINDOW && memmem(p, n, key + i, REDACT_WINDOW)) return 1;
  return 0;
}

void llm_redact(char *s, size_t cap, const char *key) {
  if (!s || !cap) return;
  char *out = malloc(cap);
  if (!out) {
    s[0] = '\0'; /* cannot check it: say nothing rather than risk a secret */
    return;
  }
  size_t klen = key ? strlen(key) : 0, o = 0;
  int after_bearer = 0;
  const char *p = s;
  while (*p && o + 1 < cap) {
    if (redact_is_sep((unsigned char)*p)) {
      out[o++] = *p++;
      continue;
    }
    size_t n = 0;
    while (p[n] && !redact_is_sep((unsigned char)p[n])) n++;
    size_t word = n; /* the token without trailing sentence punctuation */
    while (word > 1 && (p[word - 1] == '.' || p[word - 1] == ':')) word--;
    int hit = after_bearer || redact_has_key(p, word, key, klen) || redact_masked(p, word) || redact_keylike(p, word);
    after_bearer = word == 6 && !strncasecmp(p, "bearer", 6);
    const char *src = hit ? REDACT_MARK : p;
    size_t len = hit ? strlen(REDACT_MARK) : word;
    for (size_t i = 0; i < len && o + 1 < cap; i++) out[o++] = src[i];
    for (size_t i = word; i < n && o + 1 < cap; i++) out[o++] = p[i];
    p += n;
  }
  out[o] = '\0';
  memcpy(s, out, o + 1);
  free(out);
}
