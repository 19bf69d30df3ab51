/* Which bytes of a message are Markdown marks for the title rule (docs/behaviour.md §6): emphasis only
 * where it is emphasis, so identifiers, numbers and URLs keep their '_' and '*'. Internal to chat/. */
#ifndef AG_CHAT_TITLE_MARKS_H
#define AG_CHAT_TITLE_MARKS_H

#include <stddef.h>

/* Sets drop[i] = 1 for each byte of text (len bytes) that is a mark to remove, 0 otherwise:
 * - backticks;
 * - '#' runs that open a line (headings) and '*' bullets ("* item");
 * - a token of marks alone at the start of a line ("**__##");
 * - '*' and '_' runs that open emphasis at the start of a word and are closed by the same run at the
 *   end of a later word ("**Bold**", "_plan_"), never a run between two letters or digits
 *   ("my_variable_name", "5*3*2") and nothing inside a URL. */
void chat_title_marks(const char *text, size_t len, unsigned char *drop);

#endif
