/* Reading the database for the commands (see archive.h): each call is one read transaction whose
 * rows are copied into the caller's plain structs before the callback sees them. */
#include "chat/archive.h"

#include "storage/store_lock.h"

#include "storage/store.h"

#include "common/clock.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(CHAT_ID_MAX == STORE_ID_MAX, "chat ids are store ids");
_Static_assert(CHAT_TITLE_MAX == STORE_TITLE_LEN + 1, "chat titles are store titles");
_Static_assert(CHAT_TEXT_LEN == STORE_TEXT_LEN, "message texts are stored whole");
_Static_assert(CHAT_STOP == STORE_STOP, "callbacks hand their result to the store's scans");

int chat_store_default_dir(char *out, size_t cap) { return store_default_dir(out, cap); }
int chat_store_open(const char *dir, store **out, ag_errmsg *em) { return store_open(dir, out, em); }
int chat_store_open_background(const char *dir, store **out, ag_errmsg *em) {
  store_options opt = {.sync = STORE_SYNC_BACKGROUND};
  return store_open_ex(dir, &opt, out, em);
}
int chat_store_background(store *st, ag_errmsg *em) { return store_set_background(st, em); }
int chat_store_open_read(const char *dir, store **out, ag_errmsg *em) { return store_open_read(dir, out, em); }
void chat_store_close(store *st) { store_close(st); }
const char *chat_store_dir(const store *st) { return store_dir(st); }

/* A lookup by id in a read transaction: what it reads into, and where its error goes. */
typedef struct lookup {
  const char *id;
  void *out; /* info_txn: a chat_info; settings_txn: a char * that gets the settings (malloc'd) */
  ag_errmsg *em;
} lookup;

/* rc of looking up a record, with em naming what is missing when it is AG_ERR_NOT_FOUND. */
static int found(int rc, ag_errmsg *em, const char *what, const char *id) {
  return rc == AG_ERR_NOT_FOUND ? ag_fail(em, rc, "no %s '%s' in the database", what, id) : rc;
}

/* ---- chats ---- */

typedef struct list_ctx {
  store_txn *t;
  chat_info_fn fn;
  void *arg;
  /* The current chat of the world last looked up: a world's chats come together, so its record is
   * read once, not once per chat. */
  char cached_world[STORE_ID_MAX];
  char cached_current[STORE_ID_MAX];
  int cached;
} list_ctx;

static void info_fill(list_ctx *lc, const store_chat *c, chat_info *out) {
  if (!lc->cached || strcmp(lc->cached_world, c->world_id) != 0) {
    store_world w;
    snprintf(lc->cached_world, sizeof lc->cached_world, "%s", c->world_id);
    lc->cached_current[0] = '\0';
    lc->cached = 1;
    if (store_world_get(lc->t, c->world_id, &w) == AG_OK) {
      snprintf(lc->cached_current, sizeof lc->cached_current, "%s", w.current_chat ? w.current_chat : "");
      store_world_free(&w);
    }
  }
  snprintf(out->id, sizeof out->id, "%s", c->id);
  snprintf(out->world_id, sizeof out->world_id, "%s", c->world_id);
  snprintf(out->title, sizeof out->title, "%s", c->title);
  out->message_count = c->message_count;
  out->created_at_ms = c->created_at_ms;
  out->updated_at_ms = c->updated_at_ms;
  out->current = strcmp(lc->cached_current, c->id) == 0;
}

static int list_row(const store_chat *c, void *arg) {
  list_ctx *lc = arg;
  chat_info info;
  info_fill(lc, c, &info);
  return lc->fn(&info, lc->arg);
}

typedef struct list_args {
  const char *world_id;
  list_ctx lc;
} list_args;

static int list_txn(store_txn *t, void *arg) {
  list_args *la = arg;
  la->lc.t = t;
  la->lc.cached = 0;
  return store_chat_list(t, la->world_id, list_row, &la->lc);
}

int chat_list(store *st, const char *world_id, chat_info_fn fn, void *arg, ag_errmsg *em) {
  list_args la = {world_id, {NULL, fn, arg, "", "", 0}};
  return store_read(st, list_txn, &la, em);
}

static int info_txn(store_txn *t, void *arg) {
  lookup *l = arg;
  store_chat c;
  int rc = found(store_chat_get(t, l->id, &c), l->em, "chat", l->id);
  if (rc) return rc;
  list_ctx lc = {t, NULL, NULL, "", "", 0};
  info_fill(&lc, &c, l->out);
  store_chat_free(&c);
  return AG_OK;
}

int chat_info_get(store *st, const char *chat_id, chat_info *out, ag_errmsg *em) {
  lookup l = {chat_id, out, em};
  return store_read(st, info_txn, &l, em);
}

typedef struct contexts_args {
  const char *chat_id;
  chat_context_fn fn;
  void *arg;
} contexts_args;

static int context_row(const char *agent_id, const store_context *c, void *arg) {
  contexts_args *ca = arg;
  context_state cx = {c->version, c->updated_at_ms, cJSON_Parse(c->data_json)};
  if (!cx.data) return AG_ERR_STORAGE;
  int rc = ca->fn(agent_id, &cx, ca->arg);
  context_free(&cx);
  return rc;
}

static int contexts_txn(store_txn *t, void *arg) {
  contexts_args *ca = arg;
  return store_context_scan(t, ca->chat_id, context_row, ca);
}

int chat_contexts_each(store *st, const char *chat_id, chat_context_fn fn, void *arg, ag_errmsg *em) {
  contexts_args ca = {chat_id, fn, arg};
  return store_read(st, contexts_txn, &ca, em);
}

/* ---- worlds ---- */

typedef struct worlds_args {
  store_txn *t;
  chat_world_fn fn;
  void *arg;
} worlds_args;

static int world_row(const store_world *w, void *arg) {
  worlds_args *wa = arg;
  chat_world_info info;
  memset(&info, 0, sizeof info);
  snprintf(info.id, sizeof info.id, "%s", w->id);
  snprintf(info.name, sizeof info.name, "%s", w->name);
  snprintf(info.current_chat, sizeof info.current_chat, "%s", w->current_chat ? w->current_chat : "");
  store_chat_count(wa->t, w->id, &info.chats);
  cJSON *settings = cJSON_Parse(w->settings_json);
  info.agents = cJSON_GetArraySize(cJSON_GetObjectItem(settings, "agents"));
  cJSON_Delete(settings);
  return wa->fn(&info, wa->arg);
}

static int worlds_txn(store_txn *t, void *arg) {
  worlds_args *wa = arg;
  wa->t = t;
  return store_world_list(t, world_row, wa);
}

int chat_worlds_each(store *st, chat_world_fn fn, void *arg, ag_errmsg *em) {
  worlds_args wa = {NULL, fn, arg};
  return store_read(st, worlds_txn, &wa, em);
}

typedef struct count_args {
  size_t n;
  char *first;
} count_args;

static int count_row(const store_world *w, void *arg) {
  count_args *ca = arg;
  if (ca->n++ == 0) snprintf(ca->first, STORE_ID_MAX, "%s", w->id);
  return 0;
}

static int count_txn(store_txn *t, void *arg) { return store_world_list(t, count_row, arg); }

int chat_worlds_count(store *st, size_t *n, char first[CHAT_ID_MAX], ag_errmsg *em) {
  count_args ca = {0, first};
  first[0] = '\0';
  int rc = store_read(st, count_txn, &ca, em);
  *n = ca.n;
  return rc;
}

static int settings_txn(store_txn *t, void *arg) {
  lookup *l = arg;
  char **settings = l->out;
  store_world w;
  int rc = found(store_world_get(t, l->id, &w), l->em, "world", l->id);
  if (rc) return rc;
  free(*settings); /* a read is not run twice, but stay restartable */
  *settings = strdup(w.settings_json);
  store_world_free(&w);
  return *settings ? AG_OK : AG_ERR_NOMEM;
}

int chat_world_spec(store *st, const char *world_id, world_spec *out, ag_errmsg *em) {
  memset(out, 0, sizeof *out);
  char *settings = NULL;
  lookup l = {world_id, &settings, em};
  int rc = store_read(st, settings_txn, &l, em);
  if (!rc) {
    char label[128];
    snprintf(label, sizeof label, "world '%s' (stored settings)", world_id);
    if ((rc = world_spec_parse(settings, strlen(settings), label, out, em))) {
      world_spec_free(out);
      memset(out, 0, sizeof *out);
    }
  }
  free(settings);
  return rc;
}

int chat_world_settings(store *st, const char *world_id, char **out, ag_errmsg *em) {
  *out = NULL;
  lookup l = {world_id, out, em};
  int rc = store_read(st, settings_txn, &l, em);
  if (rc) {
    free(*out);
    *out = NULL;
  }
  return rc;
}

/* ---- deleting a world ---- */

typedef struct world_chats {
  const char *world_id;
  store_lock **locks; /* one per chat of the world, taken before the write */
  size_t n, cap;
  store *st;
  int changed;        /* write: a chat appeared that is not locked */
  ag_errmsg *em;
} world_chats;

static int lock_row(const store_chat *c, void *arg) {
  world_chats *wc = arg;
  if (wc->n == wc->cap) {
    size_t ncap = wc->cap ? wc->cap * 2 : 16;
    store_lock **p = realloc(wc->locks, ncap * sizeof *p);
    if (!p) return AG_ERR_NOMEM;
    wc->locks = p;
    wc->cap = ncap;
  }
  long pid = 0;
  int rc = store_chat_lock(wc->st, c->id, &wc->locks[wc->n], &pid, wc->em);
  if (rc == AG_ERR_STATE)
    return ag_fail(wc->em, rc, "chat '%s' of world '%s' is in use by another agora process (pid %ld)", c->id,
                   wc->world_id, pid);
  if (!rc) wc->n++;
  return rc;
}

static int lock_txn(store_txn *t, void *arg) {
  world_chats *wc = arg;
  store_world w;
  int rc = found(store_world_get(t, wc->world_id, &w), wc->em, "world", wc->world_id);
  if (rc) return rc;
  store_world_free(&w);
  return store_chat_list(t, wc->world_id, lock_row, wc);
}

static int unlocked_row(const store_chat *c, void *arg) {
  world_chats *wc = arg;
  for (size_t i = 0; i < wc->n; i++)
    if (!strcmp(store_lock_chat(wc->locks[i]), c->id)) return 0;
  wc->changed = 1;
  return CHAT_STOP;
}

static int delete_world_txn(store_txn *t, void *arg) {
  world_chats *wc = arg;
  wc->changed = 0;
  int rc = store_chat_list(t, wc->world_id, unlocked_row, wc);
  if (rc) return rc;
  if (wc->changed)
    return ag_fail(wc->em, AG_ERR_STATE, "world '%s' is in use: a chat was just started in it", wc->world_id);
  return store_world_delete(t, wc->world_id);
}

int chat_world_delete(store *st, const char *world_id, size_t *n_chats, ag_errmsg *em) {
  world_chats wc = {world_id, NULL, 0, 0, st, 0, em};
  int rc = store_read(st, lock_txn, &wc, em);
  if (!rc) rc = store_write(st, delete_world_txn, &wc, em);
  if (n_chats) *n_chats = wc.n;
  for (size_t i = 0; i < wc.n; i++) store_chat_unlock(wc.locks[i]);
  free(wc.locks);
  return rc;
}

/* ---- a world stored without a session ---- */

typedef struct world_put {
  const world_spec *spec;
  const char *settings;
  ag_errmsg *em;
} world_put;

static int world_put_txn(store_txn *t, void *arg) {
  world_put *wp = arg;
  store_world old = {0};
  int rc = store_world_get(t, wp->spec->id, &old);
  store_world_free(&old);
  if (!rc) return ag_fail(wp->em, AG_ERR_EXISTS, "world '%s' is in the database already", wp->spec->id);
  if (rc != AG_ERR_NOT_FOUND) return rc;
  int64_t now = ag_now_ms();
  store_world nw = {.id = wp->spec->id, .name = wp->spec->name, .settings_json = wp->settings, .current_chat = "",
                    .created_at_ms = now, .updated_at_ms = now};
  return store_world_put(t, &nw);
}

int chat_world_create(store *st, const world_spec *spec, ag_errmsg *em) {
  cJSON *j = world_spec_to_json(spec);
  world_put wp = {.spec = spec, .settings = j ? cJSON_PrintUnformatted(j) : NULL, .em = em};
  cJSON_Delete(j);
  int rc = wp.settings ? store_write(st, world_put_txn, &wp, em) : AG_ERR_NOMEM;
  cJSON_free((void *)wp.settings);
  return rc;
}
