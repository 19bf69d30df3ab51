/* Mention parsing (docs/behaviour.md §1–2): which agents a text addresses. Everything works on byte
 * offsets into the caller's text and allocates only for the lists it returns, because the world parses
 * every published message once and reply shaping scans every reply. */
#include "agents/mention.h"

#include "common/strset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int is_hspace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
static int is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
static int is_upper(char c) { return c >= 'A' && c <= 'Z'; }
static int is_capital(char c) { return is_upper(c) || ((unsigned char)c & 0x80); }
static int is_token_char(char c) { return is_alnum(c) || c == '_' || c == '-'; }
static char to_lower(char c) { return is_upper(c) ? (char)(c - 'A' + 'a') : c; }

/* An '@' right after one of these is part of a word or an address (mail@example.com), not a mention.
 * Bytes of multi-byte UTF-8 characters count as letters: "josé@example.com" is an address too. */
static int glues_to_at(char c) {
  return is_token_char(c) || c == '.' || (unsigned char)c >= 0x80;
}

static int is_trailing_punct(char c) {
  return c == ',' || c == ':' || c == ';' || c == '.' || c == '!' || c == '?';
}

/* Decodes the UTF-8 sequence at s[0..len): its length, or 0 when it is not valid UTF-8. */
static size_t utf8_decode(const unsigned char *s, size_t len, unsigned *cp) {
  size_t n = s[0] >= 0xF0 && s[0] < 0xF5 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 && s[0] < 0xE0 ? 2 : 0;
  if (n == 0 || n > len) return 0;
  unsigned c = s[0] & (0x3F >> (n - 1));
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    c = (c << 6) | (s[i] & 0x3F);
  }
  if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10FFFF)) || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  *cp = c;
  return n;
}

/* 1 for the non-ASCII code points that end a mention like punctuation: Latin-1 signs, general and CJK
 * punctuation, full-width forms ("@bob’s", "@村長、"). Everything else counts as a letter. */
static int is_wide_punct(unsigned cp) {
  return cp < 0xC0 || cp == 0xD7 || cp == 0xF7 || (cp >= 0x2000 && cp <= 0x206F) ||
         (cp >= 0x3000 && cp <= 0x303F) || (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF20);
}

/* Length of the letter (ASCII alnum or a non-ASCII letter) at s[0..len), 0 when there is none. */
static size_t letter_len(const char *s, size_t len) {
  if (len == 0) return 0;
  if (!((unsigned char)s[0] & 0x80)) return is_alnum(s[0]) ? 1 : 0;
  unsigned cp;
  size_t n = utf8_decode((const unsigned char *)s, len, &cp);
  return n && !is_wide_punct(cp) ? n : 0;
}

/* Length of the token <letter>(<letter>|_|-)* at s (s[0..len)), 0 when there is none. */
static size_t token_len(const char *s, size_t len) {
  size_t n = letter_len(s, len), k;
  if (n == 0) return 0;
  while (n < len && ((k = letter_len(s + n, len - n)) || s[n] == '_' || s[n] == '-')) n += k ? k : 1;
  return n;
}

/* The id of the text s[0..n) as a name would have it (José → jose); text that is no valid name is
 * lower-cased as written, cut to MENTION_ID_MAX - 1 bytes. */
static void id_copy(const char *s, size_t n, char out[MENTION_ID_MAX]) {
  char name[4 * MENTION_ID_MAX];
  if (n < sizeof name) {
    memcpy(name, s, n);
    name[n] = '\0';
    if (mention_id_from_name(name, out, MENTION_ID_MAX) == AG_OK) return;
  }
  if (n > MENTION_ID_MAX - 1) n = MENTION_ID_MAX - 1;
  for (size_t i = 0; i < n; i++) out[i] = to_lower(s[i]);
  out[n] = '\0';
}

/* The ids display names are resolved against. A text may hold a display-name candidate on every line
 * and a world thousands of agents, so past a few ids they are hashed, once, on first use. */
typedef struct id_lookup {
  const char *const *ids; /* borrowed, n of them, entries may be NULL */
  size_t n;
  const mention_known *fn; /* a lookup instead of ids (its has is set), or NULL */
  const char *extra; /* one more id, or NULL */
  ag_strset set;     /* the ids hashed, when built */
  int hashed;        /* the set holds them all */
} id_lookup;

#define ID_SCAN_MAX 16 /* up to this many ids a scan is cheaper than a table */

static int id_known(id_lookup *k, const char *id) {
  if (k->extra && strcmp(k->extra, id) == 0) return 1;
  if (k->fn) return k->fn->has(k->fn->ctx, id);
  if (k->n > ID_SCAN_MAX && !k->hashed) {
    k->hashed = 1;
    for (size_t i = 0; i < k->n && k->hashed; i++) {
      int rc = k->ids[i] ? ag_strset_add(&k->set, k->ids[i]) : AG_OK;
      if (rc && rc != AG_ERR_EXISTS) k->hashed = 0; /* out of memory: scan instead */
    }
  }
  if (k->hashed) return ag_strset_has(&k->set, id);
  for (size_t i = 0; i < k->n; i++)
    if (k->ids[i] && strcmp(k->ids[i], id) == 0) return 1;
  return 0;
}

/* The optional greeting that may come before a line's first mention: hey/hi/hello/to + white space.
 * Returns the offset just past it (and its white space), or pos when there is none. */
static size_t skip_greeting(const char *line, size_t len, size_t pos) {
  static const char *const words[] = {"hey", "hi", "hello", "to"};
  for (size_t w = 0; w < sizeof words / sizeof *words; w++) {
    size_t n = strlen(words[w]);
    if (len - pos > n && strncasecmp(line + pos, words[w], n) == 0 && is_hspace(line[pos + n])) {
      pos += n;
      while (pos < len && is_hspace(line[pos])) pos++;
      return pos;
    }
  }
  return pos;
}

static int line_next(const char *line, size_t len, size_t *pos, id_lookup *known, mention_at *m) {
  size_t p = *pos;
  if (p == 0) {
    /* The first mention may follow indentation and one greeting word. */
    while (p < len && is_hspace(line[p])) p++;
    p = skip_greeting(line, len, p);
  } else if (glues_to_at(line[p - 1])) {
    return 0; /* "@alice.@bob" and "@alice@bob": the second '@' is glued to the first mention */
  }
  if (p >= len || line[p] != '@') return 0;
  size_t tok = p + 1, n = token_len(line + tok, len - tok);
  if (n == 0) return 0;

  m->start = p;
  m->end = tok + n;
  id_copy(line + tok, n, m->id);

  /* A capitalised single-word token may be the first half of a display name: "@Madame Pedagogue",
   * "@Café Crème" (a non-ASCII letter may be a capital too: the id decides). */
  if (is_capital(line[tok]) && !memchr(line + tok, '-', n) && !memchr(line + tok, '_', n)) {
    size_t w = tok + n;
    while (w < len && is_hspace(line[w])) w++;
    size_t wn = w > tok + n && w < len && is_capital(line[w]) ? token_len(line + w, len - w) : 0;
    if (wn && w + wn - tok < 4 * MENTION_ID_MAX) {
      char joined[MENTION_ID_MAX];
      id_copy(line + tok, w + wn - tok, joined);
      if (id_known(known, joined)) {
        memcpy(m->id, joined, sizeof joined);
        m->end = w + wn;
      }
    }
  }

  size_t q = m->end;
  while (q < len && (is_trailing_punct(line[q]) || is_hspace(line[q]))) q++;
  m->next = q;
  *pos = q;
  return 1;
}

/* The lookup for a mention_known: its function, or its ids. */
static id_lookup lookup_of(const mention_known *k, const char *extra) {
  int fn = k && k->has;
  return (id_lookup){.ids = k && !fn ? k->ids : NULL, .n = k && !fn ? k->n : 0, .fn = fn ? k : NULL, .extra = extra};
}

int mention_line_next_known(const char *line, size_t len, size_t *pos, const mention_known *known,
                            const char *extra_id, mention_at *m) {
  id_lookup k = lookup_of(known, extra_id);
  int found = line_next(line, len, pos, &k, m);
  ag_strset_clear(&k.set);
  return found;
}

int mention_line_next(const char *line, size_t len, size_t *pos, const char *const *agent_ids, size_t n_ids,
                      const char *extra_id, mention_at *m) {
  mention_known k = {.ids = agent_ids, .n = n_ids};
  return mention_line_next_known(line, len, pos, &k, extra_id, m);
}

int mention_is_fence(const char *line, size_t len) {
  size_t p = 0;
  while (p < len && is_hspace(line[p])) p++;
  return len - p >= 3 && line[p] == '`' && line[p + 1] == '`' && line[p + 2] == '`';
}

int mention_lines_next(mention_lines *it, mention_line *l) {
  if (!it->rest) return 0;
  const char *nl = strchr(it->rest, '\n');
  l->start = it->rest;
  l->len = nl ? (size_t)(nl - it->rest) : strlen(it->rest);
  l->has_newline = nl != NULL;
  if (mention_is_fence(l->start, l->len)) {
    it->in_fence = !it->in_fence;
    l->code = 1;
  } else {
    l->code = it->in_fence;
  }
  it->rest = nl ? nl + 1 : NULL;
  return 1;
}

int mention_list_contains(const mention_list *l, const char *id) {
  if (!l || !id) return 0;
  for (size_t i = 0; i < l->n; i++)
    if (strcasecmp(l->ids[i], id) == 0) return 1;
  return 0;
}

int mention_list_push(mention_list *l, const char *id) {
  /* Grow by one: lists hold a handful of ids, and other modules may build the array themselves,
   * so no hidden capacity is assumed. */
  char *copy = strdup(id);
  if (!copy) return AG_ERR_NOMEM;
  char **ids = realloc(l->ids, (l->n + 1) * sizeof *ids);
  if (!ids) {
    free(copy);
    return AG_ERR_NOMEM;
  }
  ids[l->n++] = copy;
  l->ids = ids;
  return AG_OK;
}

void mention_list_free(mention_list *l) {
  if (!l) return;
  for (size_t i = 0; i < l->n; i++) free(l->ids[i]);
  free(l->ids);
  l->ids = NULL;
  l->n = 0;
}

/* Appends a copy of id to l, whose array has room for *cap entries (doubled as needed: a text may
 * hold a mention on each of thousands of lines). */
static int list_add(mention_list *l, size_t *cap, const char *id) {
  if (l->n == *cap) {
    size_t ncap = *cap ? *cap * 2 : 4;
    char **ids = realloc(l->ids, ncap * sizeof *ids);
    if (!ids) return AG_ERR_NOMEM;
    l->ids = ids;
    *cap = ncap;
  }
  if (!(l->ids[l->n] = strdup(id))) return AG_ERR_NOMEM;
  l->n++;
  return AG_OK;
}

int mention_leading(const char *text, const char *const *agent_ids, size_t n_ids, mention_list *out) {
  mention_known k = {.ids = agent_ids, .n = n_ids};
  return mention_leading_known(text, &k, out);
}

int mention_leading_known(const char *text, const mention_known *k, mention_list *out) {
  int rc = AG_OK;
  mention_list l = {0};
  size_t cap = 0;
  ag_strset seen = {0}; /* the ids in l, for the duplicate check */
  id_lookup known = lookup_of(k, NULL);
  if (!text || !out) return AG_ERR_INVALID;
  mention_lines it = mention_lines_start(text);
  mention_line ln;
  while (mention_lines_next(&it, &ln)) {
    size_t pos = 0;
    mention_at m;
    while (!ln.code && line_next(ln.start, ln.len, &pos, &known, &m)) {
      if (ag_strset_has(&seen, m.id)) continue;
      if ((rc = list_add(&l, &cap, m.id)) || (rc = ag_strset_add(&seen, l.ids[l.n - 1]))) goto done;
    }
  }
done:
  ag_strset_clear(&seen);
  ag_strset_clear(&known.set);
  if (rc) {
    mention_list_free(&l);
    return rc;
  }
  *out = l;
  return AG_OK;
}

/* Length of the backtick run at s[0..len). */
static size_t tick_run(const char *s, size_t len) {
  size_t n = 0;
  while (n < len && s[n] == '`') n++;
  return n;
}

/* Where the code span opened by a run of n backticks at line[p] ends (just past its closing run of
 * exactly n backticks on the same line), or 0 when it is never closed: then the run is literal text.
 * Spans stay on one line so that one stray backtick cannot hide the rest of a message. */
static size_t span_end(const char *line, size_t len, size_t p, size_t n) {
  for (size_t q = p + n; q < len;) {
    if (line[q] != '`') {
      q++;
      continue;
    }
    size_t r = tick_run(line + q, len - q);
    if (r == n) return q + r;
    q += r;
  }
  return 0;
}

/* Appends every @token of one line outside code spans to l (mention_anywhere's rule). */
static int line_anywhere(const char *line, size_t len, mention_list *l, size_t *cap) {
  for (size_t p = 0; p < len;) {
    if (line[p] == '`') {
      size_t n = tick_run(line + p, len - p), e = span_end(line, len, p, n);
      p = e ? e : p + n;
      continue;
    }
    if (line[p] != '@' || (p > 0 && glues_to_at(line[p - 1]))) {
      p++;
      continue;
    }
    size_t n = token_len(line + p + 1, len - p - 1);
    if (n) {
      char id[MENTION_ID_MAX];
      id_copy(line + p + 1, n, id);
      int rc = list_add(l, cap, id);
      if (rc) return rc;
    }
    p += 1 + n;
  }
  return AG_OK;
}

int mention_anywhere(const char *text, mention_list *out) {
  int rc = AG_OK;
  mention_list l = {0};
  size_t cap = 0;
  if (!text || !out) return AG_ERR_INVALID;
  mention_lines it = mention_lines_start(text);
  mention_line ln;
  while (mention_lines_next(&it, &ln))
    if (!ln.code && (rc = line_anywhere(ln.start, ln.len, &l, &cap))) goto fail;
  *out = l;
  return AG_OK;
fail:
  mention_list_free(&l);
  return rc;
}

/* The ASCII letters of a Latin letter (U+00C0–U+017F), lower-cased: "é" → "e", "ß" → "ss"; NULL for
 * anything else (other scripts, signs). */
static const char *latin_fold(unsigned cp) {
  static const char *const l1[64] = {
      "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i",
      "d", "n", "o", "o", "o", "o", "o", NULL, "o", "u", "u", "u", "u", "y", "th", "ss",
      "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i",
      "d", "n", "o", "o", "o", "o", "o", NULL, "o", "u", "u", "u", "u", "y", "th", "y"};
  /* Latin Extended-A, one letter each but for three ligatures. */
  static const char ext[] = "aaaaaaccccccccddddeeeeeeeeeegggggggghhhhiiiiiiiiii..jjkkkllllllllllnnnnnnnnnoooooo..rrrrrrssssssss"
                            "ttttttuuuuuuuuuuuuwwyyyzzzzzzs";
  static char one[2];
  if (cp >= 0xC0 && cp <= 0xFF) return l1[cp - 0xC0];
  if (cp < 0x100 || cp > 0x17F) return NULL;
  if (cp == 0x132 || cp == 0x133) return "ij";
  if (cp == 0x152 || cp == 0x153) return "oe";
  one[0] = ext[cp - 0x100];
  return one;
}

/* Appends the letters for s[0..len) to key (lower-cased ASCII, folded Latin, other letters as they
 * are; *foreign set for those). Returns the bytes read, 0 when s holds no valid name character. */
static size_t key_char(const char *s, size_t len, char *key, size_t cap, size_t *k, int *foreign) {
  unsigned cp;
  size_t n = 1;
  const char *add;
  char ascii[2] = {to_lower(s[0]), '\0'};
  if (!((unsigned char)s[0] & 0x80)) {
    if (!is_token_char(s[0])) return 0;
    add = ascii;
  } else {
    if (!(n = utf8_decode((const unsigned char *)s, len, &cp))) return 0;
    add = latin_fold(cp);
    if (!add) {
      *foreign = 1;
      if (*k + n >= cap) return 0;
      memcpy(key + *k, s, n);
      *k += n;
      return n;
    }
  }
  size_t an = strlen(add);
  if (*k + an >= cap) return 0;
  memcpy(key + *k, add, an);
  *k += an;
  return n;
}

int mention_id_from_name(const char *name, char *out, size_t cap) {
  if (!name || !out || cap == 0 || !letter_len(name, strlen(name))) return AG_ERR_INVALID;
  size_t end = strlen(name);
  while (end > 0 && (is_hspace(name[end - 1]) || name[end - 1] == '\n')) end--; /* "bob " is bob */
  char key[4 * MENTION_ID_MAX];
  size_t k = 0;
  int foreign = 0;
  for (size_t i = 0; i < end;) {
    if (is_hspace(name[i]) || name[i] == '\n') {
      while (i < end && (is_hspace(name[i]) || name[i] == '\n')) i++;
      if (k + 1 >= sizeof key) return AG_ERR_INVALID;
      key[k++] = '-';
      continue;
    }
    size_t n = key_char(name + i, end - i, key, sizeof key, &k, &foreign);
    if (!n) return AG_ERR_INVALID;
    i += n;
  }
  key[k] = '\0';
  if (foreign) {
    /* Letters with no ASCII form (村長): a stable short hash of the folded name, so the id is still
     * [a-z0-9-] and the same name (any ASCII case) always gets it. FNV-1a, 32 bits. */
    unsigned h = 2166136261u;
    for (size_t i = 0; i < k; i++) h = (h ^ (unsigned char)key[i]) * 16777619u;
    if (cap < 10) return AG_ERR_INVALID;
    snprintf(out, cap, "%08x", h);
    return AG_OK;
  }
  if (k + 1 > cap) return AG_ERR_INVALID;
  memcpy(out, key, k + 1);
  return AG_OK;
}
