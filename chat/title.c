/* Chat titles from the first human message (docs/behaviour.md §6): the offline rule that turns "Hello,
 * can you help me plan a trip" into "Plan a trip". Every step only shortens the text, so the title is
 * built in one buffer the size of the input. */
#include "chat/title.h"
#include "chat/title_marks.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/error.h"

static const char ellipsis[] = "\xE2\x80\xA6"; /* … */

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
static int is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
/* Bytes of multi-byte UTF-8 characters count as letters, so "hiçbir" keeps its "hi". */
static int is_word(char c) { return is_alnum(c) || c == '_' || (unsigned char)c >= 0x80; }
static int is_prefix_punct(char c) { return c && strchr(",.;:!?-", c) != NULL; }

/* When s[i] opens a markdown link "[text](url)", sets *close to its ']' and *end past its ')'.
 * The searches stop at the first bracket or white space, so scanning stays linear. */
static int link_at(const char *s, size_t i, size_t *close, size_t *end) {
  size_t j = i + 1;
  while (s[j] && s[j] != ']' && s[j] != '[') j++;
  if (s[j] != ']' || s[j + 1] != '(') return 0;
  size_t k = j + 2;
  while (s[k] && s[k] != ')' && !is_space(s[k])) k++;
  if (s[k] != ')') return 0;
  *close = j;
  *end = k + 1;
  return 1;
}

/* Copies text into out without the markdown marks in drop (chat_title_marks), links reduced to their
 * text, white space collapsed to single spaces and trimmed. Returns the length written. */
static size_t plain_text(const char *text, const unsigned char *drop, char *out) {
  size_t o = 0, close = 0, end = 0;
  int in_link = 0, space = 0;
  for (size_t i = 0; text[i];) {
    char c = text[i];
    if (in_link && i == close) {
      i = end; /* past "](url)" */
      in_link = 0;
      continue;
    }
    if (!in_link && (c == '[' || (c == '!' && text[i + 1] == '[')) && link_at(text, c == '!' ? i + 1 : i, &close, &end)) {
      i += c == '!' ? 2 : 1; /* an image keeps its alt text */
      in_link = 1;
      continue;
    }
    if (drop[i++]) continue;
    if (is_space(c)) {
      space = o > 0;
      continue;
    }
    if (space) out[o++] = ' ';
    space = 0;
    out[o++] = c;
  }
  out[o] = '\0';
  return o;
}

/* Skips the punctuation and spaces that follow a removed prefix. */
static const char *skip_after(const char *p) {
  while (*p == ' ' || is_prefix_punct(*p)) p++;
  return p;
}

/* Skips one leading mention ("@alice, "), or returns p. */
static const char *skip_mention(const char *p) {
  if (p[0] != '@' || !is_alnum(p[1])) return p;
  p++;
  while (is_alnum(*p) || *p == '-' || *p == '_') p++;
  return skip_after(p);
}

/* Skips one greeting or request prefix, a whole word or phrase ("hi" but not "hiking"), or returns p. */
static const char *skip_greeting(const char *p) {
  static const char *const prefixes[] = {"hello", "hi",     "hey",       "please", "can you",
                                         "could you", "help me", "i want to", "i need"};
  for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
    size_t n = strlen(prefixes[i]);
    if (strncasecmp(p, prefixes[i], n) == 0 && !is_word(p[n])) return skip_after(p + n);
  }
  return p;
}

/* Upper-cases the first character: ASCII, and the 2-byte Latin-1 letters à-þ (but ÷). */
static void capitalise(char *s) {
  unsigned char *u = (unsigned char *)s;
  if (u[0] >= 'a' && u[0] <= 'z') u[0] = (unsigned char)(u[0] - 'a' + 'A');
  else if (u[0] == 0xC3 && u[1] >= 0xA0 && u[1] <= 0xBE && u[1] != 0xB7) u[1] = (unsigned char)(u[1] - 0x20);
}

static int is_utf8_cont(char c) { return ((unsigned char)c & 0xC0) == 0x80; }

/* A title may end in punctuation, but a cut one should not end "plan a trip, …". Closing brackets and
 * quotes stay; dashes (ASCII, – and —) go. */
static size_t trim_cut(const char *s, size_t n) {
  for (;;) {
    if (n > 0 && (s[n - 1] == ' ' || (strchr(",.;:!?-/(&[{", s[n - 1]) && s[n - 1]))) {
      n--;
    } else if (n >= 3 && (memcmp(s + n - 3, "\xE2\x80\x93", 3) == 0 || memcmp(s + n - 3, "\xE2\x80\x94", 3) == 0 ||
                          memcmp(s + n - 3, ellipsis, 3) == 0)) {
      n -= 3;
    } else {
      return n;
    }
  }
}

/* Cuts s (len bytes, buffer room for 3 more) at CHAT_TITLE_MAX_CHARS code points on a word boundary
 * and appends "…"; leaves it alone when it fits. */
static void cut(char *s, size_t len) {
  size_t chars = 0, limit = len; /* limit: the byte just past the last code point that fits */
  for (size_t i = 0; i < len; i++) {
    if (is_utf8_cont(s[i])) continue;
    if (chars == CHAT_TITLE_MAX_CHARS) {
      limit = i;
      break;
    }
    chars++;
  }
  if (limit == len) return;
  size_t at = limit;
  if (s[limit] != ' ') { /* the word at the limit does not fit: cut before it, if it is not the first */
    size_t sp = limit;
    while (sp > 0 && s[sp] != ' ') sp--;
    if (sp > 0) at = sp;
  }
  size_t n = trim_cut(s, at);
  if (n == 0) n = at; /* all punctuation: keep it rather than lose the title */
  memcpy(s + n, ellipsis, sizeof ellipsis);
}

int chat_title_make(const char *text, char **out) {
  int rc = AG_OK;
  char *buf = NULL;
  unsigned char *drop = NULL;
  if (!text || !out) return AG_ERR_INVALID;
  *out = NULL;

  size_t len = strlen(text);
  buf = malloc(len + sizeof ellipsis);
  if (!buf) {
    rc = AG_ERR_NOMEM;
    goto fail;
  }
  if (!(drop = malloc(len + 1))) {
    rc = AG_ERR_NOMEM;
    goto fail;
  }
  chat_title_marks(text, len, drop);
  len = plain_text(text, drop, buf);

  /* Mentions and greetings may come in any order and repeat: "Hi @bob, could you please …". */
  const char *p = buf, *q, *mentions = buf;
  int greeted = 0;
  while ((q = skip_mention(mentions)) != mentions) mentions = q;
  do {
    q = p;
    p = skip_mention(p);
    const char *g = skip_greeting(p);
    greeted |= g != p;
    p = g;
  } while (p != q);
  /* "hello there" is a title as it is: one word left after a greeting ("There") would say less. */
  if (greeted && *p && !strchr(p, ' ')) p = mentions;
  len -= (size_t)(p - buf);
  memmove(buf, p, len + 1);
  if (len == 0) goto done; /* nothing left: the caller keeps "New Chat" */

  capitalise(buf);
  cut(buf, len);
  *out = buf;
  free(drop);
  return AG_OK;
fail:
done:
  free(drop);
  free(buf);
  return rc;
}
