/* What the console reads of the world: the JSON libagora hands back (agents, settings, chats) read into
 * the few values a command shows, and the library's refusals put in the console's words. */
#include "console/console_int.h"

#include <stdlib.h>
#include <string.h>

/* The library names its function in front of a refusal ("agora_chat_load: no chat 'x'"): the person
 * typed a command, so the command is named instead, by the caller, and the function goes. This is the
 * one place that translates (docs/decisions.md "The console on agora.h"). */
int con_lib_fail(int rc, ag_errmsg *em) {
  const char *m = agora_errmsg();
  if (!strncmp(m, "agora_", 6)) {
    size_t n = strspn(m, "abcdefghijklmnopqrstuvwxyz_");
    if (!strncmp(m + n, ": ", 2)) m += n + 2;
  }
  return ag_fail(em, rc, "%s", m[0] ? m : agora_strerror(rc));
}

cJSON *con_json_take(int rc, char *text, ag_errmsg *em) {
  if (rc) {
    con_lib_fail(rc, em);
    return NULL;
  }
  cJSON *j = cJSON_Parse(text);
  agora_free(text);
  if (!j) ag_fail(em, AG_ERR_NOMEM, "out of memory");
  return j;
}

cJSON *con_agents(console *c, ag_errmsg *em) {
  char *s = NULL;
  int rc = agora_agents(c->w, &s);
  return con_json_take(rc, s, em);
}

cJSON *con_settings(console *c, ag_errmsg *em) {
  char *s = NULL;
  int rc = agora_settings(c->w, &s);
  return con_json_take(rc, s, em);
}

const char *con_str(const cJSON *j, const char *name) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, name));
}

double con_num(const cJSON *j, const char *name, double dflt) {
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(j, name);
  return cJSON_IsNumber(n) ? n->valuedouble : dflt;
}

const cJSON *con_agent_find(const cJSON *agents, const char *name, ag_errmsg *em) {
  if (name[0] == '@') name++;
  const cJSON *a;
  cJSON_ArrayForEach(a, agents) {
    const char *id = con_str(a, "id"), *n = con_str(a, "name");
    if (name[0] && ((id && !strcmp(id, name)) || (n && !strcmp(n, name)))) return a;
  }
  ag_fail(em, AG_ERR_NOT_FOUND, "no agent '%s' in this world (see /agents)", name);
  return NULL;
}

int con_turn_limit(console *c) {
  ag_errmsg em = {""};
  cJSON *s = con_settings(c, &em);
  int n = (int)con_num(s, "turn_limit", 0);
  cJSON_Delete(s);
  return n;
}

cJSON *con_current_chat(console *c) {
  const char *id = agora_chat_current(c->w);
  char *s = NULL, cur[AGORA_ID_MAX];
  if (!id) return NULL;
  snprintf(cur, sizeof cur, "%s", id);
  ag_errmsg em = {""};
  int rc = agora_chats(c->w, &s);
  cJSON *list = con_json_take(rc, s, &em), *row, *found = NULL;
  cJSON_ArrayForEach(row, list) {
    const char *rid = con_str(row, "id");
    if (rid && !strcmp(rid, cur)) found = row;
  }
  if (found) cJSON_DetachItemViaPointer(list, found);
  cJSON_Delete(list);
  return found;
}

void con_title_refresh(console *c) {
  cJSON *row = con_current_chat(c);
  const char *t = con_str(row, "title");
  snprintf(c->title, sizeof c->title, "%s", t ? t : "no chat");
  cJSON_Delete(row);
}

cJSON *con_event_new(console *c, const char *kind) {
  cJSON *j = cJSON_CreateObject();
  const char *chat = agora_chat_current(c->w);
  if (!j) return NULL;
  cJSON_AddStringToObject(j, "type", "event");
  cJSON_AddStringToObject(j, "event", kind);
  cJSON_AddStringToObject(j, "world", agora_world_id(c->w));
  if (chat) cJSON_AddStringToObject(j, "chat", chat);
  else cJSON_AddNullToObject(j, "chat");
  return j;
}
