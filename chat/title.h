/* Chat titles from the first human message (docs/behaviour.md §6). Pure. */
#ifndef AG_TITLE_H
#define AG_TITLE_H

#define CHAT_TITLE_DEFAULT "New Chat"
#define CHAT_TITLE_MAX_CHARS 50 /* characters (code points) before the "…" */

/* Makes a title from text: strips markdown, leading mentions and greeting/request prefixes, collapses
 * white space, capitalises the first letter, cuts at 50 characters on a word boundary with "…".
 * On AG_OK *out is a new string (caller frees), or NULL when nothing is left (keep "New Chat"). */
int chat_title_make(const char *text, char **out);

#endif
