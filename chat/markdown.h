/* Markdown export (issue 13): a chat snapshot (chat/snapshot.h) as a readable document — the world's
 * settings, its agents with provider, model and prompt, then the transcript with speaker headings, tool
 * calls as collapsible <details> and other thread events as quiet lines. In chat/ (pure text over a
 * snapshot) so that `chats export --format md` and agora serve's export share it. */
#ifndef AG_CHAT_MARKDOWN_H
#define AG_CHAT_MARKDOWN_H

#include <cjson/cJSON.h>

/* The document for snap (borrowed, as chat_snapshot_export makes it); caller frees; NULL: no memory. */
char *markdown_chat(const cJSON *snap);
/* The settings part alone for a world in world-file form (borrowed); caller frees. */
char *markdown_world(const cJSON *world);

#endif
