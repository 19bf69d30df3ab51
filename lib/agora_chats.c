/* libagora's chats: list, transcript, export, import, branch, delete, new, load and usage, over the
 * database the world was opened on (the same calls `agora chats` makes), handed back as JSON text. */
#include "lib/agora_int.h"

#include "chat/branch.h"
#include "agents/mention.h"
#include "chat/id_prefix.h"
#include "chat/snapshot.h"
#include "chat/transcript.h"
#include "chat/usage.h"
#include "runtime/output.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The world's database and the chat named (NULL: the current one) resolved into id. */
static int named_chat(agora_world *w, const char *chat, char id[CHAT_ID_MAX], store **st, ag_errmsg *em) {
  *st = rt_store(w->rt);
  chat_session *cs = rt_session(w->rt);
  if (!*st || !cs) return ag_fail(em, AG_ERR_STATE, "the world was opened without a database (AGORA_NO_SAVE)");
  if (chat) return chat_id_resolve(*st, chat, id, em);
  if (!chat_session_current(cs)) return ag_fail(em, AG_ERR_NOT_FOUND, "the world has no current chat");
  snprintf(id, CHAT_ID_MAX, "%s", chat_session_current(cs));
  return AG_OK;
}

int agora__hand_out(cJSON *j, char **json, ag_errmsg *em) {
  *json = j ? output_json_text(j) : NULL;
  cJSON_Delete(j);
  return *json ? AG_OK : ag_fail(em, AG_ERR_NOMEM, "out of memory");
}

const char *agora_chat_current(agora_world *w) {
  chat_session *cs = rt_session(w->rt);
  const char *c = cs ? chat_session_current(cs) : NULL;
  if (!c) return NULL;
  snprintf(w->current, sizeof w->current, "%s", c);
  return w->current;
}

int agora_chats(agora_world *w, char **json) {
  ag_errmsg em = {""};
  store *st = rt_store(w->rt);
  int rc = st ? agora__chats_json(st, world_id(w->w), json, &em)
              : ag_fail(&em, AG_ERR_STATE, "the world was opened without a database (AGORA_NO_SAVE)");
  return rc ? agora__fail(rc, &em) : AG_OK;
}

typedef struct entries_ctx {
  cJSON *a;
  const char *world, *chat;
} entries_ctx;

static int add_entry(const chat_entry *e, void *arg) {
  entries_ctx *c = arg;
  cJSON *j = e->msg ? output_message_json(c->world, c->chat, e->msg) : output_step_json(c->world, c->chat, e->kind, e->fields);
  if (!j) return AG_ERR_NOMEM;
  cJSON_AddItemToArray(c->a, j);
  return 0;
}

int agora__transcript_json(store *st, const char *id, char **json, ag_errmsg *em) {
  chat_info info;
  entries_ctx c = {.a = cJSON_CreateArray(), .chat = id};
  int rc = !c.a ? ag_fail(em, AG_ERR_NOMEM, "out of memory") : chat_info_get(st, id, &info, em);
  if (!rc) {
    c.world = info.world_id;
    rc = chat_transcript_each(st, id, add_entry, &c, em);
  }
  if (!rc) return agora__hand_out(c.a, json, em);
  cJSON_Delete(c.a);
  return rc;
}

/* The world a snapshot's chat belongs to: its chat.world, or for an older snapshot the id its world's
 * name gives (as its import would store it). */
static void snapshot_world(const cJSON *snap, char wid[CHAT_ID_MAX]) {
  const cJSON *chat = cJSON_GetObjectItemCaseSensitive(snap, "chat");
  const char *world = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(chat, "world"));
  const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(snap, "world"), "name"));
  wid[0] = '\0';
  if (world) snprintf(wid, CHAT_ID_MAX, "%s", world);
  else if (name) mention_id_from_name(name, wid, CHAT_ID_MAX);
}

int agora_snapshot_transcript(const char *snapshot_json, const char *source, char **json) {
  ag_errmsg em = {""};
  const char *label = source && *source ? source : "snapshot";
  char wid[CHAT_ID_MAX];
  cJSON *snap = NULL;
  entries_ctx c = {.a = NULL};
  int rc = json ? agora__snapshot_parse(snapshot_json, label, "agora_snapshot_transcript", &snap, &em)
                : ag_fail(&em, AG_ERR_INVALID, "agora_snapshot_transcript: json is NULL");
  if (!rc) rc = chat_snapshot_validate(snap, label, &em);
  if (rc) goto done;
  snapshot_world(snap, wid);
  c = (entries_ctx){.a = cJSON_CreateArray(), .world = wid,
                    .chat = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(snap, "chat"), "id"))};
  rc = c.a ? chat_snapshot_each(snap, add_entry, &c) : ag_fail(&em, AG_ERR_NOMEM, "out of memory");
  if (!rc) {
    rc = agora__hand_out(c.a, json, &em);
    c.a = NULL;
  }
done:
  cJSON_Delete(c.a);
  cJSON_Delete(snap);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

/* A chat of the world's (NULL: the current one) as JSON from fn. */
static int chat_json(agora_world *w, const char *chat, agora__chat_json_fn fn, char **json) {
  ag_errmsg em = {""};
  char id[CHAT_ID_MAX];
  store *st = NULL;
  int rc = named_chat(w, chat, id, &st, &em);
  if (!rc) rc = fn(st, id, json, &em);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

int agora_transcript(agora_world *w, const char *chat, char **json) {
  return chat_json(w, chat, agora__transcript_json, json);
}

/* A window of a chat's messages (API 7): from seq `from` on, or (from 0) the last max; at most max. */
typedef struct window_ctx {
  entries_ctx e;
  size_t left; /* messages still wanted; SIZE_MAX: no limit */
} window_ctx;

static int add_window(const chat_entry *e, void *arg) {
  window_ctx *c = arg;
  int rc = add_entry(e, &c->e);
  return !rc && c->left != SIZE_MAX && !--c->left ? CHAT_STOP : rc;
}

int agora__messages_json(store *st, const char *id, uint64_t from, size_t max, char **json, ag_errmsg *em) {
  chat_info info;
  window_ctx c = {.left = max ? max : SIZE_MAX};
  int rc = chat_info_get(st, id, &info, em);
  if (rc) return rc;
  if (!from) from = max && info.message_count > max ? info.message_count - max + 1 : 1;
  c.e = (entries_ctx){.a = cJSON_CreateArray(), .world = info.world_id, .chat = id};
  rc = c.e.a ? chat_messages_each(st, id, from, add_window, &c, em) : ag_fail(em, AG_ERR_NOMEM, "out of memory");
  if (!rc) return agora__hand_out(c.e.a, json, em);
  cJSON_Delete(c.e.a);
  return rc;
}

int agora_messages(agora_world *w, const char *chat, uint64_t from, size_t max, char **json) {
  ag_errmsg em = {""};
  char id[CHAT_ID_MAX];
  store *st = NULL;
  int rc = json ? named_chat(w, chat, id, &st, &em) : ag_fail(&em, AG_ERR_INVALID, "agora_messages: json is NULL");
  if (!rc) rc = agora__messages_json(st, id, from, max, json, &em);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

int agora_chat_export(agora_world *w, const char *chat, char **json) {
  return chat_json(w, chat, agora__export_json, json);
}

int agora_chat_import(agora_world *w, const char *snapshot_json, char id[AGORA_ID_MAX]) {
  ag_errmsg em = {""};
  store *st = rt_store(w->rt);
  int rc = st ? agora__import_text(st, snapshot_json, "snapshot", id, &em)
              : ag_fail(&em, AG_ERR_STATE, "the world was opened without a database (AGORA_NO_SAVE)");
  return rc ? agora__fail(rc, &em) : AG_OK;
}

int agora_chat_branch(agora_world *w, const char *chat, uint64_t seq, char id[AGORA_ID_MAX]) {
  ag_errmsg em = {""};
  char src[CHAT_ID_MAX];
  store *st = NULL;
  int rc = named_chat(w, chat, src, &st, &em);
  if (!rc) rc = agora__view_refuses(w, "agora_chat_branch", "branch", src, &em);
  if (!rc) rc = chat_branch(st, src, seq, id, &em);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

/* A session call on a chat named by the caller (not NULL: these never mean the current one); view is
 * the operation's name for a world joined over NATS (agora_view.c), where a deletion is recorded. */
static int on_chat(agora_world *w, const char *chat, const char *what, const char *view,
                   int (*op)(chat_session *cs, const char *chat_id, ag_errmsg *em)) {
  ag_errmsg em = {""};
  char id[CHAT_ID_MAX];
  store *st = NULL;
  int rc = chat ? named_chat(w, chat, id, &st, &em) : ag_fail(&em, AG_ERR_INVALID, "%s: chat is NULL", what);
  if (!rc) rc = agora__view_refuses(w, what, view, id, &em);
  if (!rc) rc = op(rt_session(w->rt), id, &em);
  if (!rc) rc = agora__view_done(w, id, NULL, !strcmp(view, "delete"), &em);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

int agora_chat_delete(agora_world *w, const char *chat) {
  return on_chat(w, chat, "agora_chat_delete", "delete", chat_session_delete);
}

int agora_chat_new(agora_world *w) {
  ag_errmsg em = {""};
  chat_session *cs = rt_session(w->rt);
  int rc = cs ? chat_session_new(cs, &em) : ag_fail(&em, AG_ERR_STATE, "the world was opened without a database (AGORA_NO_SAVE)");
  if (!rc) rc = agora__view_done(w, NULL, NULL, 0, &em);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

int agora_chat_title(agora_world *w, const char *title) {
  ag_errmsg em = {""};
  chat_session *cs = rt_session(w->rt);
  int rc = !title ? ag_fail(&em, AG_ERR_INVALID, "agora_chat_title: title is NULL")
           : !cs  ? ag_fail(&em, AG_ERR_STATE, "the world was opened without a database (AGORA_NO_SAVE)")
                  : chat_session_set_title(cs, title, &em);
  if (!rc) rc = agora__view_done(w, chat_session_current(cs), chat_session_title(cs), 1, &em);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

int agora_chat_load(agora_world *w, const char *chat) {
  return on_chat(w, chat, "agora_chat_load", "load", chat_session_load);
}

/* Usage: chat/usage.c's rows as JSON. */
int agora__usage_json(store *st, const char *id, char **json, ag_errmsg *em) {
  chat_usage u = {0};
  cJSON *a = cJSON_CreateArray();
  int rc = !a ? ag_fail(em, AG_ERR_NOMEM, "out of memory") : chat_usage_get(st, id, &u, em);
  for (size_t i = 0; !rc && i < u.n; i++) {
    cJSON *row = cJSON_CreateObject();
    if (!row) rc = ag_fail(em, AG_ERR_NOMEM, "out of memory");
    else cJSON_AddItemToArray(a, row);
    cJSON_AddStringToObject(row, "agent", u.rows[i].agent);
    cJSON_AddNumberToObject(row, "calls", (double)u.rows[i].calls);
    cJSON_AddNumberToObject(row, "input_tokens", u.rows[i].in);
    cJSON_AddNumberToObject(row, "output_tokens", u.rows[i].out);
  }
  chat_usage_free(&u);
  if (!rc) return agora__hand_out(a, json, em);
  cJSON_Delete(a);
  return rc;
}

int agora_usage(agora_world *w, const char *chat, char **json) { return chat_json(w, chat, agora__usage_json, json); }
