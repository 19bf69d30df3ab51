/* Mention parsing (docs/behaviour.md §1–2): who a text addresses. Pure functions, no I/O, no world. */
#ifndef AG_MENTION_H
#define AG_MENTION_H

#include <stddef.h>

#include "common/error.h"

#define MENTION_ID_MAX 64 /* longest id kept; longer tokens are cut to this (ids are validated shorter) */

/* A list of lower-cased ids. Owned by whoever holds the struct; release with mention_list_free.
 * A zeroed struct is a valid empty list. */
typedef struct mention_list {
  size_t n;
  char **ids;
} mention_list;

/* The ids display names are resolved against: ids[0..n) (borrowed, entries may be NULL; hashed once
 * per call past a few), or, when has is set, has(ctx, id) alone: a world's index, so that resolving a
 * name costs the same in a world of a million agents as in one of ten. A zeroed struct knows no id. */
typedef struct mention_known {
  const char *const *ids;
  size_t n;
  int (*has)(void *ctx, const char *id); /* 1 when id (lower-case) is an agent's */
  void *ctx;
} mention_known;

/* Leading mentions of text (§2): the mentions that open any line outside ``` fences, in order, without
 * duplicates, display names ("@Madame Pedagogue") resolved against agent_ids (borrowed, n_ids of them;
 * may be NULL/0). On success *out holds a new list the caller frees. */
int mention_leading(const char *text, const char *const *agent_ids, size_t n_ids, mention_list *out);
/* The same with the known ids as a mention_known (borrowed). */
int mention_leading_known(const char *text, const mention_known *known, mention_list *out);

/* Every @token outside code anywhere in text, lower-cased, as written (no display-name joining), in
 * order of appearance, duplicates kept; an '@' after a letter, digit, '.', '_' or '-' is no mention. */
int mention_anywhere(const char *text, mention_list *out);

/* 1 when id (lower-case) is in the list. */
int mention_list_contains(const mention_list *l, const char *id);
/* Appends a copy of id (no duplicate check). */
int mention_list_push(mention_list *l, const char *id);
void mention_list_free(mention_list *l);

/* One mention opening a line, for callers that edit lines (reply shaping). Offsets are into the line. */
typedef struct mention_at {
  size_t start;            /* the '@' */
  size_t end;              /* just after the token (or the display name's second word) */
  size_t next;             /* after the ,:;.!? and white space that follow it */
  char id[MENTION_ID_MAX]; /* lower-cased id, display name resolved */
} mention_at;

/* Iterates the mentions that open one line (§2): line[0..len) holds no '\n'. Start with *pos = 0; each
 * call that finds one fills *m, advances *pos and returns 1; 0 means no more. Display names are joined
 * when the id is in agent_ids (borrowed, may be NULL/0) or equals extra_id (may be NULL). No allocation. */
int mention_line_next(const char *line, size_t len, size_t *pos, const char *const *agent_ids, size_t n_ids,
                      const char *extra_id, mention_at *m);
/* The same with the known ids as a mention_known (borrowed). */
int mention_line_next_known(const char *line, size_t len, size_t *pos, const mention_known *known,
                            const char *extra_id, mention_at *m);

/* 1 when the line (no '\n' within len) opens or closes a ``` fence: its first non-blank chars are ```. */
int mention_is_fence(const char *line, size_t len);

/* The lines of a text, as the mention rules see them (§2): a ``` fence line and the lines between an
 * opening fence and its closing one are code. Iterate with
 *
 *   mention_lines it = mention_lines_start(text);
 *   mention_line l;
 *   while (mention_lines_next(&it, &l)) if (!l.code) ...;
 *
 * No allocation; the lines point into text (borrowed, must outlive the iteration). */
typedef struct mention_line {
  const char *start; /* the line's first byte */
  size_t len;        /* its length without the '\n' */
  int has_newline;   /* a '\n' follows (0 for the text's last line) */
  int code;          /* a fence line or inside a fence */
} mention_line;
typedef struct mention_lines {
  const char *rest; /* NULL once every line was returned */
  int in_fence;
} mention_lines;
static inline mention_lines mention_lines_start(const char *text) { return (mention_lines){text, 0}; }
/* Fills *l with the next line and returns 1; 0 when there is none left. */
int mention_lines_next(mention_lines *it, mention_line *l);

/* The id of a display name (§1): lower-cased, runs of white space replaced by '-'. Fails with
 * AG_ERR_INVALID when the name does not start with a letter or digit, or the id would contain anything
 * but [a-z0-9_-], or is longer than cap-1 (cap at most MENTION_ID_MAX is the rule for agents). */
int mention_id_from_name(const char *name, char *out, size_t cap);

#endif
