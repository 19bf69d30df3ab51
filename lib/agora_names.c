/* libagora's naming rules for a command-line program (API version 9): the id a display name makes, a
 * chat's id from a prefix, and whether a value of an agora_options string field is one the library knows
 * — so that a program checks its arguments before it opens anything, with the core's own lists. */
#include "lib/agora_int.h"

#include "agents/mention.h"
#include "chat/id_prefix.h"
#include "llm/cache.h"
#include "llm/llm.h"

#include <stdio.h>
#include <string.h>

_Static_assert(AGORA_ID_MAX > MENTION_ID_MAX - 1, "a name's id fits agora.h's id buffers");

int agora_name_id(const char *name, char id[AGORA_ID_MAX]) {
  ag_errmsg em = {""};
  int rc = !name || !id ? ag_fail(&em, AG_ERR_INVALID, "agora_name_id: %s is NULL", name ? "id" : "name")
                        : mention_id_from_name(name, id, MENTION_ID_MAX);
  if (rc && !em.text[0])
    ag_fail(&em, rc, "agora_name_id: '%s' makes no id (a letter or digit first, then letters, digits, '_', '-', "
                     "spaces; at most %d characters)", name, MENTION_ID_MAX - 1);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

int agora_option_check(const char *field, const char *value) {
  ag_errmsg em = {""};
  llm_cache_mode mode;
  llm_provider_kind kind;
  int rc = AG_OK;
  if (!field || !value) rc = ag_fail(&em, AG_ERR_INVALID, "agora_option_check: %s is NULL", field ? "value" : "field");
  else if (!strcmp(field, "provider") && llm_provider_parse(value, &kind))
    rc = ag_fail(&em, AG_ERR_INVALID, "unknown provider '%s' (expected script, openai, anthropic, gemini or ollama)",
                 value);
  else if (!strcmp(field, "llm_cache") && llm_cache_mode_parse(value, &mode))
    rc = ag_fail(&em, AG_ERR_INVALID, "unknown mode '%s' (expected off, use or replay)", value);
  else if (strcmp(field, "provider") && strcmp(field, "llm_cache"))
    rc = ag_fail(&em, AG_ERR_INVALID, "agora_option_check: no field '%s' (provider or llm_cache)", field);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

int agora_db_chat_id(agora_db *db, const char *chat, char id[AGORA_ID_MAX]) {
  ag_errmsg em = {""};
  int rc = !db || !chat || !id ? ag_fail(&em, AG_ERR_INVALID, "agora_db_chat_id: %s is NULL",
                                         !db ? "db" : !chat ? "chat" : "id")
                               : chat_id_resolve(db->st, chat, id, &em);
  return rc ? agora__fail(rc, &em) : AG_OK;
}
