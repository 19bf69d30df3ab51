/* The §6 decisions of the session manager (see rules.h). Pure. */
#include "chat/rules.h"

#include "chat/title.h"

#include <string.h>

int chat_rule_reusable(const char *title, uint64_t message_count) {
  return strcmp(title, CHAT_TITLE_DEFAULT) == 0 || message_count == 0;
}

int chat_rule_title(const char *title, ag_msg *const *msgs, size_t n, char **out) {
  *out = NULL;
  if (!title || strcmp(title, CHAT_TITLE_DEFAULT) != 0) return AG_OK;
  for (size_t i = 0; i < n && !*out; i++) {
    if (msgs[i]->kind != AG_KIND_HUMAN) continue;
    int rc = chat_title_make(msgs[i]->text, out);
    if (rc) return rc;
  }
  return AG_OK;
}
