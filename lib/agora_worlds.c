/* libagora's worlds of a database (API version 4): listed, shown with their stored settings, and
 * deleted with their chats, with no world opened (what `agora worlds` does). */
#include "lib/agora_int.h"

#include "chat/archive.h"
#include "runtime/db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A world's row: {"id","name","agents","chats","current_chat"} (agents only for a listing). */
static cJSON *world_json(const chat_world_info *w, int agents) {
  cJSON *j = cJSON_CreateObject();
  if (!j) return NULL;
  cJSON_AddStringToObject(j, "id", w->id);
  cJSON_AddStringToObject(j, "name", w->name);
  if (agents) cJSON_AddNumberToObject(j, "agents", w->agents);
  cJSON_AddNumberToObject(j, "chats", (double)w->chats);
  if (w->current_chat[0]) cJSON_AddStringToObject(j, "current_chat", w->current_chat);
  else cJSON_AddNullToObject(j, "current_chat");
  return j;
}

static int add_world(const chat_world_info *w, void *arg) {
  cJSON *j = world_json(w, 1);
  if (!j) return AG_ERR_NOMEM;
  cJSON_AddItemToArray(arg, j);
  return 0;
}

int agora_db_worlds(agora_db *db, char **json) {
  ag_errmsg em = {""};
  cJSON *a = cJSON_CreateArray();
  int rc = !a ? ag_fail(&em, AG_ERR_NOMEM, "out of memory") : chat_worlds_each(db->st, add_world, a, &em);
  if (!rc) rc = agora__hand_out(a, json, &em);
  else cJSON_Delete(a);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

/* Finds the row of the world whose id the caller put in the out row (chat_worlds_each callback). */
static int world_row(const chat_world_info *w, void *arg) {
  chat_world_info *out = arg;
  if (strcmp(w->id, out->id)) return 0;
  *out = *w;
  return CHAT_STOP;
}

int agora_db_world(agora_db *db, const char *world, char **json) {
  ag_errmsg em = {""};
  chat_world_info wi = {.agents = 0};
  char *text = NULL;
  cJSON *j = NULL, *settings = NULL;
  int rc = world ? rt_pick_world(db->st, world, wi.id, &em) : ag_fail(&em, AG_ERR_INVALID, "agora_db_world: world is NULL");
  if (!rc) rc = chat_worlds_each(db->st, world_row, &wi, &em);
  if (!rc) rc = chat_world_settings(db->st, wi.id, &text, &em);
  if (!rc && !(settings = cJSON_Parse(text)))
    rc = ag_fail(&em, AG_ERR_STORAGE, "the stored settings of world '%s' are not JSON", wi.id);
  if (!rc && !(j = world_json(&wi, 0))) rc = ag_fail(&em, AG_ERR_NOMEM, "out of memory");
  free(text);
  if (rc) {
    cJSON_Delete(settings);
    return agora__fail(rc, &em);
  }
  cJSON_AddItemToObject(j, "settings", settings);
  rc = agora__hand_out(j, json, &em);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

int agora_db_world_delete(agora_db *db, const char *world, char id[AGORA_ID_MAX], size_t *chats) {
  ag_errmsg em = {""};
  char wid[CHAT_ID_MAX];
  size_t n = 0;
  int rc = world ? rt_pick_world(db->st, world, wid, &em) : ag_fail(&em, AG_ERR_INVALID, "agora_db_world_delete: world is NULL");
  if (!rc && agora__loop_has_world(db->loop, wid)) /* agora_loop_db: its worlds are open beside it */
    rc = ag_fail(&em, AG_ERR_STATE, "agora_db_world_delete: world '%s' is open on the loop (close it first)", wid);
  if (!rc) rc = chat_world_delete(db->st, wid, &n, &em);
  if (rc) return agora__fail(rc, &em);
  if (id) snprintf(id, AGORA_ID_MAX, "%s", wid);
  if (chats) *chats = n;
  return AG_OK;
}
