/* Messages and sender kinds (docs/behaviour.md §1). */
#include "agents/msg.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

ag_kind ag_sender_kind(const char *sender) {
  if (!strcasecmp(sender, "human") || !strcasecmp(sender, "user") || !strcasecmp(sender, "you"))
    return AG_KIND_HUMAN;
  if (!strcasecmp(sender, "world")) return AG_KIND_WORLD;
  if (!strcasecmp(sender, "system")) return AG_KIND_SYSTEM;
  return AG_KIND_AGENT;
}

static const char *const kind_names[] = {"human", "world", "system", "agent", "turn-limit"};

const char *ag_kind_name(ag_kind kind) {
  if ((size_t)kind < sizeof kind_names / sizeof *kind_names) return kind_names[kind];
  return "agent";
}

int ag_kind_parse(const char *name) {
  for (size_t i = 0; i < sizeof kind_names / sizeof *kind_names; i++)
    if (strcmp(name, kind_names[i]) == 0) return (int)i;
  return -1;
}

ag_msg *ag_msg_new(const char *sender, const char *text, ag_kind kind) {
  ag_msg *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->refs = 1;
  m->kind = kind;
  m->sender = strdup(sender);
  m->text = strdup(text);
  if (!m->sender || !m->text) {
    ag_msg_unref(m);
    return NULL;
  }
  return m;
}

ag_msg *ag_msg_ref(ag_msg *m) {
  m->refs++;
  return m;
}

void ag_msg_unref(ag_msg *m) {
  if (!m || --m->refs > 0) return;
  free(m->sender);
  free(m->text);
  mention_list_free(&m->leading);
  free(m);
}
