/* Reply shaping (docs/behaviour.md §5): what an agent publishes from the LLM's raw text. Pure. */
#ifndef AG_SHAPE_H
#define AG_SHAPE_H

#include <stddef.h>

#include "agents/mention.h"

typedef enum shape_outcome {
  SHAPE_PUBLISH = 0, /* *out holds the text to publish */
  SHAPE_EMPTY = 1,   /* the raw reply was only white space: publish nothing, emit an error event */
  SHAPE_SILENT = 2   /* nothing left once tags and self-mentions were removed: publish nothing */
} shape_outcome;

/* Shapes raw, the reply of agent agent_id answering sender. agent_ids (borrowed) are the world's agent
 * ids, used to resolve display names in leading mentions. auto_reply is the agent's setting (§5.4).
 * On AG_OK, *outcome says what happened and *out is a new string the caller frees (NULL unless
 * SHAPE_PUBLISH). The published text has no leading or trailing white space. */
int shape_reply(const char *raw, const char *agent_id, const char *sender, int auto_reply,
                const char *const *agent_ids, size_t n_ids, shape_outcome *outcome, char **out);
/* The same with the known ids as a mention_known (borrowed): a world's index, O(1) per name. */
int shape_reply_known(const char *raw, const char *agent_id, const char *sender, int auto_reply,
                      const mention_known *known, shape_outcome *outcome, char **out);

#endif
