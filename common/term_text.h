/* Text from outside (LLM replies, server errors, imported snapshots, titles, NATS records) shown on a
 * terminal: it must not drive the terminal (clear the screen, set the title, write the clipboard with
 * OSC 52), reorder what is shown around it (bidi overrides), nor pass for a line Agora wrote. */
#ifndef AG_TERM_TEXT_H
#define AG_TERM_TEXT_H

#include <stdio.h>

/* How ag_term_text_write lays text out. */
enum {
  AG_TERM_ONE_LINE = 1, /* newlines and tabs shown too (^J, ^I): a title or a name stays on its row */
  AG_TERM_INDENT = 2    /* each line after the first starts with two spaces: a message or a tool result
                           cannot put a line of its own ("human: ...") at the left margin */
};

/* Writes s to f with control characters made visible, as less and git do: C0 controls and DEL in
 * caret notation (ESC as ^[, CR as ^M, DEL as ^?), C1 controls as <U+009B>, the bidi controls (U+061C,
 * U+200E/F, U+202A-E, U+2066-9) and the line/paragraph separators (U+2028/9) as <U+202E>, invalid
 * UTF-8 as U+FFFD; newlines and tabs are kept unless flags has AG_TERM_ONE_LINE. s is borrowed. */
void ag_term_text_write(FILE *f, const char *s, int flags);
/* ag_term_text_write(f, s, 0). */
void ag_term_text_put(FILE *f, const char *s);
/* Writes s as ag_term_text_write does when f is a terminal, and as it is otherwise (a pipe or a file
 * gets the stored bytes). The one call for a stored string printed by a command. */
void ag_term_fputs(FILE *f, const char *s, int flags);
/* s as ag_term_text_write would write it: a new string (caller frees), or NULL when out of memory. For
 * text that goes through a printf-style function. */
char *ag_term_text_dup(const char *s, int flags);

/* Appends text to the end-of-stream buffer tail (cap bytes, *len used, kept NUL-terminated) for a
 * live line: control characters become spaces, and when it is full the older half goes, cut at a
 * character start, so only the end is kept. text is borrowed. */
void ag_term_tail_append(char *tail, size_t cap, size_t *len, const char *text);

#endif
