/* UTF-8 validity: text from outside (LLM replies, snapshots) may hold any bytes; what Agora prints as
 * JSON must be valid UTF-8. Pure. */
#ifndef AG_UTF8_H
#define AG_UTF8_H

#include <stddef.h>

/* The length (1-4) of the valid UTF-8 sequence at p (n bytes available), or 0 when p does not start
 * one (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, cut short). */
size_t ag_utf8_seq_len(const char *p, size_t n);

/* A copy of the NUL-terminated s with every invalid sequence replaced by U+FFFD (caller frees), or
 * NULL when s is already valid (nothing to do) or memory ran out (*nomem set). */
char *ag_utf8_fix(const char *s, int *nomem);

/* Rewrites, in the JSON text p (n bytes), each "\u0000" escape into "\uFFFD" (same length), so that a
 * NUL inside a string does not silently end it once parsed into a C string. Escaped backslashes
 * ("\\u0000" is text) are respected. Returns the number replaced. */
size_t ag_json_replace_nul_escapes(char *p, size_t n);

/* Whether the JSON text p (n bytes) holds a "\u0000" escape in a string; if so field gets the name of
 * the object key nearest before it ("" at the top level), cut to fit cap (cap > 0). For loaders that
 * refuse such input rather than let the NUL silently cut a name or a text. */
int ag_json_find_nul_escape(const char *p, size_t n, char *field, size_t cap);

#endif
