/* Shared by the libFuzzer harnesses: a reader that takes control bytes (flags, split points) off
 * the front of an input and leaves the rest as the text under test, and a NUL-terminated copy. */
#ifndef AG_FUZZ_UTIL_H
#define AG_FUZZ_UTIL_H

#include "common/error.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The input as control bytes then payload: *data and *size advance past what was taken. */
typedef struct fuzz_in {
  const uint8_t *data;
  size_t size;
} fuzz_in;

/* One control byte (0 when the input is used up). */
static inline uint8_t fuzz_byte(fuzz_in *in) {
  if (!in->size) return 0;
  in->size--;
  return *in->data++;
}

/* The rest of the input as a new NUL-terminated string (caller frees; embedded NULs cut it, as they
 * would for the C strings these functions take). Aborts without memory: a harness has no other way. */
static inline char *fuzz_cstr(const uint8_t *p, size_t n) {
  char *s = malloc(n + 1);
  if (!s) abort();
  memcpy(s, p, n);
  s[n] = '\0';
  return s;
}

/* A tiny deterministic generator seeded from the input, for chunk splits that vary with the input
 * without spending its bytes. */
static inline uint32_t fuzz_rand(uint32_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 17;
  *state ^= *state << 5;
  return *state;
}

/* Feeds p[0..n) to feed(ud, piece, len) in pieces of 1..17 bytes drawn from split (0: whole), stopping
 * at the first non-zero result, which it returns: a parser must not care where the network cuts. */
static inline int fuzz_feed_pieces(const uint8_t *p, size_t n, uint32_t split,
                                   int (*feed)(void *ud, const char *piece, size_t len), void *ud) {
  int rc = AG_OK;
  for (size_t off = 0; off < n && !rc;) {
    size_t piece = split ? 1 + fuzz_rand(&split) % 17 : n;
    if (piece > n - off) piece = n - off;
    rc = feed(ud, (const char *)p + off, piece);
    off += piece;
  }
  return rc;
}

#endif
