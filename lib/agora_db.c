/* libagora's database handle (include/agora.h, agora_db_*): the chats of every world a database holds,
 * with no world opened — what `agora chats` does. A world's own chat calls (agora_chats.c) share the
 * helpers at the end of this file, over the database the world was opened on. */
#include "lib/agora_int.h"

#include "chat/branch.h"
#include "chat/id_prefix.h"
#include "chat/snapshot.h"
#include "agents/context.h"
#include "common/jsonnum.h"
#include "runtime/db.h"
#include "runtime/output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(AGORA_ID_MAX == CHAT_ID_MAX, "agora.h's id buffers are the store's");

int agora_db_open(const char *db_dir, unsigned flags, agora_db **out) {
  ag_errmsg em = {""};
  agora_db *db = NULL;
  int rc = AG_OK;
  if (!out) return agora__fail(AG_ERR_INVALID, &(ag_errmsg){"agora_db_open: out is NULL"});
  *out = NULL;
  if (!(db = calloc(1, sizeof *db))) {
    rc = ag_fail(&em, AG_ERR_NOMEM, "out of memory");
    goto fail;
  }
  if (db_dir && !(db->dir = strdup(db_dir))) {
    rc = ag_fail(&em, AG_ERR_NOMEM, "out of memory");
    goto fail;
  }
  rc = flags & AGORA_DB_READ ? rt_store_open_read(db_dir, &db->st, &em) : rt_store_open(db_dir, &db->st, &em);
  if (rc) goto fail;
  *out = db;
  return AG_OK;
fail:
  if (db) free(db->dir);
  free(db);
  return agora__fail(rc, &em);
}

void agora_db_close(agora_db *db) {
  if (!db) return;
  if (db->loop) agora__loop_db_close(db);
  else chat_store_close(db->st);
  free(db->dir);
  free(db);
}

static int add_chat(const chat_info *c, void *arg) {
  cJSON *j = output_chat_json(c);
  if (!j) return AG_ERR_NOMEM;
  cJSON_AddItemToArray(arg, j);
  return 0;
}

int agora__chats_json(store *st, const char *world_id, char **json, ag_errmsg *em) {
  cJSON *a = cJSON_CreateArray();
  int rc = a ? chat_list(st, world_id, add_chat, a, em) : ag_fail(em, AG_ERR_NOMEM, "out of memory");
  if (!rc) return agora__hand_out(a, json, em);
  cJSON_Delete(a);
  return rc;
}

int agora_db_chats(agora_db *db, const char *world, char **json) {
  ag_errmsg em = {""};
  char wid[CHAT_ID_MAX];
  int rc = world ? rt_pick_world(db->st, world, wid, &em) : AG_OK;
  if (!rc) rc = agora__chats_json(db->st, world ? wid : NULL, json, &em);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

int agora__export_json(store *st, const char *id, char **json, ag_errmsg *em) {
  cJSON *snap = NULL;
  int rc = chat_snapshot_export(st, id, &snap, em);
  if (!rc && !(*json = cJSON_PrintUnformatted(snap))) rc = ag_fail(em, AG_ERR_NOMEM, "out of memory");
  cJSON_Delete(snap);
  return rc;
}

/* A chat (an id or a unique prefix; NULL is refused, naming the call fn) as JSON from make. */
static int chat_json(agora_db *db, const char *chat, const char *fn, agora__chat_json_fn make, char **json) {
  ag_errmsg em = {""};
  char id[CHAT_ID_MAX];
  int rc = chat ? chat_id_resolve(db->st, chat, id, &em) : ag_fail(&em, AG_ERR_INVALID, "%s: chat is NULL", fn);
  if (!rc) rc = make(db->st, id, json, &em);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

int agora_db_chat_export(agora_db *db, const char *chat, char **json) {
  return chat_json(db, chat, "agora_db_chat_export", agora__export_json, json);
}

int agora__json_parse(const char *text, size_t max, const char *fn, const char *arg, const char *source, cJSON **out,
                      ag_errmsg *em) {
  size_t len = text ? strlen(text) : 0;
  int rc = AG_OK;
  *out = NULL;
  if (!text) rc = ag_fail(em, AG_ERR_INVALID, "%s: %s is NULL", fn, arg);
  else if (len > max) rc = ag_fail(em, AG_ERR_TOO_BIG, "%s: %zu bytes, at most %zu", source, len, max);
  else if (!(*out = cJSON_ParseWithLength(text, len))) rc = ag_fail(em, AG_ERR_INVALID, "%s: malformed JSON", source);
  else rc = ag_json_check_nul(text, len, source, em); /* cJSON would cut a string at \u0000 */
  if (rc) cJSON_Delete(*out), *out = NULL;
  return rc;
}

int agora__snapshot_parse(const char *text, const char *source, const char *fn, cJSON **snap, ag_errmsg *em) {
  return agora__json_parse(text, SNAPSHOT_MAX, fn, "snapshot_json", source, snap, em);
}

int agora__import_text(store *st, const char *text, const char *source, char id[AGORA_ID_MAX], ag_errmsg *em) {
  cJSON *snap = NULL;
  int rc = agora__snapshot_parse(text, source, "agora_chat_import", &snap, em);
  if (!rc) rc = chat_snapshot_import(st, snap, source, id, em);
  cJSON_Delete(snap);
  return rc;
}

int agora_db_chat_import(agora_db *db, const char *snapshot_json, const char *source, char id[AGORA_ID_MAX]) {
  ag_errmsg em = {""};
  int rc = agora__import_text(db->st, snapshot_json, source && *source ? source : "snapshot", id, &em);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

int agora_db_chat_branch(agora_db *db, const char *chat, uint64_t seq, char id[AGORA_ID_MAX]) {
  ag_errmsg em = {""};
  char src[CHAT_ID_MAX];
  int rc = chat ? chat_id_resolve(db->st, chat, src, &em) : ag_fail(&em, AG_ERR_INVALID, "agora_db_chat_branch: chat is NULL");
  if (!rc) rc = chat_branch(db->st, src, seq, id, &em);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

/* A stored world with its session attached, for chat operations: no chat taken (another process may
 * hold the current one), nothing started. */
static int open_stored(store *st, const char *world_id, runtime **rt, ag_errmsg *em) {
  return rt_open(&(rt_opts){.cmd = NULL, .world = world_id, .from_store = 1, .inert = 1, .st = st,
                            .pick = RT_CHAT_ATTACH}, rt, em);
}

/* The world's current chat as stored ("" when none). */
static int current_row(const chat_world_info *w, void *arg) {
  char *id = arg;
  if (strcmp(w->id, id)) return 0;
  snprintf(id, CHAT_ID_MAX, "%s", w->current_chat);
  return CHAT_STOP;
}

int agora_db_chat_delete(agora_db *db, const char *chat, char current[AGORA_ID_MAX]) {
  ag_errmsg em = {""};
  char id[CHAT_ID_MAX], wid[CHAT_ID_MAX];
  runtime *rt = NULL;
  int rc = chat ? chat_id_resolve(db->st, chat, id, &em) : ag_fail(&em, AG_ERR_INVALID, "agora_db_chat_delete: chat is NULL");
  if (!rc && !(rc = rt_chat_world(db->st, id, wid, &em)) && !(rc = open_stored(db->st, wid, &rt, &em)))
    rc = chat_session_delete(rt_session(rt), id, &em);
  rt_close(rt);
  if (!rc && current) {
    snprintf(current, AGORA_ID_MAX, "%s", wid);
    if ((rc = chat_worlds_each(db->st, current_row, current, &em)) || !strcmp(current, wid)) current[0] = '\0';
  }
  return rc ? agora__fail(rc, &em) : AG_OK;
}

int agora_db_chat_new(agora_db *db, const char *world, char id[AGORA_ID_MAX]) {
  ag_errmsg em = {""};
  char wid[CHAT_ID_MAX];
  runtime *rt = NULL;
  int rc = rt_pick_world(db->st, world, wid, &em);
  if (!rc && !(rc = open_stored(db->st, wid, &rt, &em)) && !(rc = chat_session_new(rt_session(rt), &em)))
    snprintf(id, AGORA_ID_MAX, "%s", chat_session_current(rt_session(rt)));
  rt_close(rt);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

/* ---- a chat as `agora chats show` prints it (API version 3) ---- */

static int info_json(store *st, const char *id, char **json, ag_errmsg *em) {
  chat_info c;
  int rc = chat_info_get(st, id, &c, em);
  return rc ? rc : agora__hand_out(output_chat_json(&c), json, em);
}

static int add_state(const char *agent_id, const context_state *cx, void *arg) {
  cJSON *j = context_to_json(cx);
  if (!j) return AG_ERR_NOMEM;
  cJSON_AddStringToObject(j, "agent", agent_id);
  cJSON_AddItemToArray(arg, j);
  return 0;
}

static int state_json(store *st, const char *id, char **json, ag_errmsg *em) {
  cJSON *a = cJSON_CreateArray();
  int rc = !a ? ag_fail(em, AG_ERR_NOMEM, "out of memory") : chat_contexts_each(st, id, add_state, a, em);
  if (!rc) return agora__hand_out(a, json, em);
  cJSON_Delete(a);
  return rc;
}

int agora_db_chat_info(agora_db *db, const char *chat, char **json) {
  return chat_json(db, chat, "agora_db_chat_info", info_json, json);
}
int agora_db_transcript(agora_db *db, const char *chat, char **json) {
  return chat_json(db, chat, "agora_db_transcript", agora__transcript_json, json);
}
int agora_db_usage(agora_db *db, const char *chat, char **json) {
  return chat_json(db, chat, "agora_db_usage", agora__usage_json, json);
}
int agora_db_chat_state(agora_db *db, const char *chat, char **json) {
  return chat_json(db, chat, "agora_db_chat_state", state_json, json);
}
