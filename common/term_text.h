/* Text from outside (LLM replies, server errors, imported snapshots) shown on a terminal: it must not
 * drive the terminal (clear the screen, set the title, write the clipboard with OSC 52). */
#ifndef AG_TERM_TEXT_H
#define AG_TERM_TEXT_H

#include <stdio.h>

/* Writes s to f with control characters made visible, as less and git do: C0 controls and DEL in
 * caret notation (ESC as ^[, CR as ^M, DEL as ^?), C1 controls as <U+009B>, invalid UTF-8 as U+FFFD;
 * newlines and tabs are kept. s is borrowed. */
void ag_term_text_put(FILE *f, const char *s);

/* Appends text to the end-of-stream buffer tail (cap bytes, *len used, kept NUL-terminated) for a
 * live line: control characters become spaces, and when it is full the older half goes, cut at a
 * character start, so only the end is kept. text is borrowed. */
void ag_term_tail_append(char *tail, size_t cap, size_t *len, const char *text);

#endif
