/* Worlds and chats in storage, and the chat index that makes "chats of world W, newest first" a cursor
 * range scan: key world id \0 inv(updated_at) chat id, plus \0 inv(updated_at) chat id for the list of
 * every world's chats. Deleting a chat removes the rest of its records (messages, memories, agent
 * states, contexts, thread) by key prefix. */
#include "storage/store_int.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- Records ------------------------------------------------------------------------------------ */

/* Copies n strings into one allocation, repointing strs[i] at the copies; *mem owns it. */
static int store_copy_strs(const char **strs[], const size_t lens[], int n, void **mem) {
  size_t total = 0;
  for (int i = 0; i < n; i++) total += lens[i] + 1;
  char *p = malloc(total);
  if (!p) return AG_ERR_NOMEM;
  *mem = p;
  for (int i = 0; i < n; i++) {
    memcpy(p, *strs[i], lens[i]);
    p[lens[i]] = '\0';
    *strs[i] = p;
    p += lens[i] + 1;
  }
  return AG_OK;
}

/* World record: be64 created, be64 updated, then the strings id, name, settings_json, current_chat. */
static int store_world_decode(const MDB_val *v, store_world *w, size_t lens[4]) {
  const unsigned char *p = v->mv_data, *end = p + v->mv_size;
  if (v->mv_size < 16) return -1;
  *w = (store_world){0};
  w->created_at_ms = (int64_t)store__get64(p);
  w->updated_at_ms = (int64_t)store__get64(p + 8);
  p += 16;
  if (store__get_str(&p, end, &w->id, &lens[0]) || store__get_str(&p, end, &w->name, &lens[1]) ||
      store__get_str(&p, end, &w->settings_json, &lens[2]) ||
      store__get_str(&p, end, &w->current_chat, &lens[3]) || p != end)
    return -1;
  return 0;
}

/* Chat record: be64 created, be64 updated, be64 message_count, then the strings id, world_id, title, then
 * (when the chat has a virtual clock) the byte 'S' and be64 sim_ms. Records without the tail are the
 * older format and read as having no simulated time. */
#define CHAT_SIM_TAG 'S'
static int store_chat_decode(const MDB_val *v, store_chat *c, size_t lens[3]) {
  const unsigned char *p = v->mv_data, *end = p + v->mv_size;
  if (v->mv_size < 24) return -1;
  *c = (store_chat){0};
  c->created_at_ms = (int64_t)store__get64(p);
  c->updated_at_ms = (int64_t)store__get64(p + 8);
  c->message_count = store__get64(p + 16);
  p += 24;
  if (store__get_str(&p, end, &c->id, &lens[0]) || store__get_str(&p, end, &c->world_id, &lens[1]) ||
      store__get_str(&p, end, &c->title, &lens[2]))
    return -1;
  if (p != end && (end - p != 9 || *p != CHAT_SIM_TAG)) return -1;
  if (p != end) c->has_sim = 1, c->sim_ms = (int64_t)store__get64(p + 1);
  return 0;
}

static int store_world_read(store_txn *t, const char *id, store_world *w, size_t lens[4]) {
  MDB_val key = {strlen(id), (void *)id}, val;
  int rc = mdb_get(t->txn, t->s->worlds, &key, &val);
  if (rc == MDB_NOTFOUND) return ag_fail(t->em, AG_ERR_NOT_FOUND, "no world '%s'", id);
  if (rc) return store__lmdb(t, rc, "read world");
  if (store_world_decode(&val, w, lens)) return store__corrupt(t, "world");
  return AG_OK;
}

/* Reads chat id; the strings in *c are borrowed from the transaction. */
static int store_chat_read(store_txn *t, const char *id, store_chat *c, size_t lens[3]) {
  MDB_val key = {strlen(id), (void *)id}, val;
  int rc = mdb_get(t->txn, t->s->chats, &key, &val);
  if (rc == MDB_NOTFOUND) return ag_fail(t->em, AG_ERR_NOT_FOUND, "no chat '%s'", id);
  if (rc) return store__lmdb(t, rc, "read chat");
  if (store_chat_decode(&val, c, lens)) return store__corrupt(t, "chat");
  return AG_OK;
}

int store__chat_exists(store_txn *t, const char *chat_id) {
  MDB_val key = {strlen(chat_id), (void *)chat_id}, val;
  int rc = mdb_get(t->txn, t->s->chats, &key, &val);
  if (rc == MDB_NOTFOUND) return ag_fail(t->em, AG_ERR_NOT_FOUND, "no chat '%s'", chat_id);
  return rc ? store__lmdb(t, rc, "read chat") : AG_OK;
}

/* ---- Worlds ------------------------------------------------------------------------------------- */

static int store_world_write(store_txn *t, const store_world *w) {
  size_t lens[4];
  const char *cur = w->current_chat ? w->current_chat : "";
  int rc = store__check_id(t, "world id", w->id);
  if (!rc) rc = store__check_len(t, "world name", w->name, STORE_TITLE_LEN, &lens[1]);
  if (!rc) rc = store__check_len(t, "world settings", w->settings_json, STORE_SETTINGS_LEN, &lens[2]);
  if (!rc) rc = store__check_len(t, "current chat id", cur, STORE_ID_LEN, &lens[3]);
  if (rc) return rc;
  lens[0] = strlen(w->id);
  if (*cur) {
    store_chat c;
    size_t clens[3];
    rc = store_chat_read(t, cur, &c, clens);
    if (rc) return rc;
    if (strcmp(c.world_id, w->id) != 0)
      return ag_fail(t->em, AG_ERR_INVALID, "chat '%s' belongs to world '%s', not '%s'", cur, c.world_id, w->id);
  }
  MDB_val key = {lens[0], (void *)w->id}, val;
  val.mv_size = 16 + store__str_size(lens[0]) + store__str_size(lens[1]) + store__str_size(lens[2]) +
                store__str_size(lens[3]);
  /* MDB_RESERVE hands us the record's space in the database: encode straight into it, no copy. */
  rc = mdb_put(t->txn, t->s->worlds, &key, &val, MDB_RESERVE);
  if (rc) return store__lmdb(t, rc, "write world");
  unsigned char *p = val.mv_data;
  store__be64(p, (uint64_t)w->created_at_ms);
  store__be64(p + 8, (uint64_t)w->updated_at_ms);
  p = store__put_str(p + 16, w->id, lens[0]);
  p = store__put_str(p, w->name ? w->name : "", lens[1]);
  p = store__put_str(p, w->settings_json ? w->settings_json : "", lens[2]);
  store__put_str(p, cur, lens[3]);
  return AG_OK;
}

int store_world_put(store_txn *t, const store_world *w) {
  int rc = store__writable(t);
  return rc ? rc : store_world_write(t, w);
}

int store_world_get(store_txn *t, const char *id, store_world *out) {
  size_t lens[4];
  *out = (store_world){0};
  int rc = store__check_id(t, "world id", id);
  if (!rc) rc = store_world_read(t, id, out, lens);
  if (!rc) {
    const char **strs[4] = {&out->id, &out->name, &out->settings_json, &out->current_chat};
    rc = store_copy_strs(strs, lens, 4, &out->mem_);
    if (rc) rc = ag_fail(t->em, rc, "out of memory");
  }
  if (rc) *out = (store_world){0};
  return rc;
}

int store_world_list(store_txn *t, store_world_fn fn, void *arg) {
  store__key all = {.n = 0};
  store__range r;
  int rc = store__range_open(t, t->s->worlds, &all, NULL, "list worlds", &r);
  while (rc == 0 && (rc = store__range_next(&r)) > 0) {
    store_world w;
    size_t lens[4];
    rc = store_world_decode(&r.val, &w, lens) ? store__corrupt(t, "world") : fn(&w, arg);
  }
  store__range_close(&r);
  return rc > 0 ? AG_OK : rc;
}

int store_world_set_current(store_txn *t, const char *world_id, const char *chat_id) {
  store_world w;
  int rc = store__writable(t);
  if (!rc) rc = store_world_get(t, world_id, &w);
  if (rc) return rc;
  /* A copy, not borrowed pointers: rewriting the record could move the bytes they point at. */
  w.current_chat = chat_id ? chat_id : "";
  rc = store_world_write(t, &w);
  store_world_free(&w);
  return rc;
}

void store_world_free(store_world *w) {
  if (!w) return;
  free(w->mem_);
  *w = (store_world){0};
}

/* ---- Chats -------------------------------------------------------------------------------------- */

/* Index key: world id \0 (or just \0 for the all-worlds entry), then updated_at inverted so a forward
 * scan meets the newest first, then the chat id. The sign bit is flipped first so that ordering stays
 * right for any int64. */
static void store_index_key(store__key *k, const char *world_id, int64_t updated, const char *chat_id) {
  k->n = 0;
  store__key_str(k, world_id);
  store__key_u64(k, ~((uint64_t)updated ^ (UINT64_C(1) << 63)));
  store__key_bytes(k, chat_id, strlen(chat_id));
}

/* Adds (add=1) or removes both index entries of a chat. */
static int store_index_update(store_txn *t, const char *world_id, int64_t updated, const char *chat_id, int add) {
  const char *worlds[2] = {world_id, ""};
  for (int i = 0; i < 2; i++) {
    store__key k;
    store_index_key(&k, worlds[i], updated, chat_id);
    MDB_val key = store__val(&k), val = {0, (void *)""};
    int rc = add ? mdb_put(t->txn, t->s->index, &key, &val, 0) : mdb_del(t->txn, t->s->index, &key, NULL);
    if (rc == MDB_NOTFOUND && !add) return store__corrupt(t, "chat index");
    if (rc) return store__lmdb(t, rc, add ? "write chat index" : "delete chat index");
  }
  return AG_OK;
}

int store_chat_put(store_txn *t, const store_chat *c) {
  size_t lens[3];
  int rc = store__writable(t);
  if (!rc) rc = store__check_id(t, "chat id", c->id);
  if (!rc) rc = store__check_id(t, "world id", c->world_id);
  if (!rc) rc = store__check_len(t, "chat title", c->title, STORE_TITLE_LEN, &lens[2]);
  if (rc) return rc;
  lens[0] = strlen(c->id);
  lens[1] = strlen(c->world_id);
  MDB_val wkey = {lens[1], (void *)c->world_id}, key = {lens[0], (void *)c->id}, val;
  rc = mdb_get(t->txn, t->s->worlds, &wkey, &val);
  if (rc == MDB_NOTFOUND) return ag_fail(t->em, AG_ERR_NOT_FOUND, "no world '%s'", c->world_id);
  if (rc) return store__lmdb(t, rc, "read world");

  store_chat old;
  size_t olens[3];
  rc = store_chat_read(t, c->id, &old, olens);
  if (rc && rc != AG_ERR_NOT_FOUND) return rc;
  int exists = rc == AG_OK;
  if (exists && strcmp(old.world_id, c->world_id) != 0)
    return ag_fail(t->em, AG_ERR_INVALID, "chat '%s' belongs to world '%s', not '%s'", c->id, old.world_id,
                   c->world_id);
  /* Only the sort time can move the index entry (old.world_id == c->world_id, so no copy needed). */
  if (exists && old.updated_at_ms != c->updated_at_ms) {
    rc = store_index_update(t, c->world_id, old.updated_at_ms, c->id, 0);
    if (rc) return rc;
  }
  if (!exists || old.updated_at_ms != c->updated_at_ms) {
    rc = store_index_update(t, c->world_id, c->updated_at_ms, c->id, 1);
    if (rc) return rc;
  }
  val.mv_size = 24 + store__str_size(lens[0]) + store__str_size(lens[1]) + store__str_size(lens[2]) +
                (c->has_sim ? 9 : 0);
  rc = mdb_put(t->txn, t->s->chats, &key, &val, MDB_RESERVE);
  if (rc) return store__lmdb(t, rc, "write chat");
  unsigned char *p = val.mv_data;
  store__be64(p, (uint64_t)c->created_at_ms);
  store__be64(p + 8, (uint64_t)c->updated_at_ms);
  store__be64(p + 16, c->message_count);
  p = store__put_str(p + 24, c->id, lens[0]);
  p = store__put_str(p, c->world_id, lens[1]);
  p = store__put_str(p, c->title ? c->title : "", lens[2]);
  if (c->has_sim) *p = CHAT_SIM_TAG, store__be64(p + 1, (uint64_t)c->sim_ms);
  return AG_OK;
}

int store_chat_get(store_txn *t, const char *id, store_chat *out) {
  size_t lens[3];
  *out = (store_chat){0};
  int rc = store__check_id(t, "chat id", id);
  if (!rc) rc = store_chat_read(t, id, out, lens);
  if (!rc) {
    const char **strs[3] = {&out->id, &out->world_id, &out->title};
    rc = store_copy_strs(strs, lens, 3, &out->mem_);
    if (rc) rc = ag_fail(t->em, rc, "out of memory");
  }
  if (rc) *out = (store_chat){0};
  return rc;
}

void store_chat_free(store_chat *c) {
  if (!c) return;
  free(c->mem_);
  *c = (store_chat){0};
}

/* Walks the index entries of world_id (NULL: all worlds) newest first, calling fn with each chat id
 * (borrowed, NUL-terminated) until fn returns non-zero, which is returned. */
typedef int (*store_index_fn)(store_txn *t, const char *chat_id, void *arg);

static int store_index_walk(store_txn *t, const char *world_id, store_index_fn fn, void *arg) {
  store__key prefix = {.n = 0};
  store__range r;
  int rc = world_id ? store__check_id(t, "world id", world_id) : AG_OK;
  if (rc) return rc;
  store__key_str(&prefix, world_id ? world_id : "");
  rc = store__range_open(t, t->s->index, &prefix, NULL, "chat index", &r);
  while (rc == 0 && (rc = store__range_next(&r)) > 0) {
    char id[STORE_ID_MAX];
    /* After the prefix: the 8-byte sort time, then the chat id. */
    if (r.key.mv_size < prefix.n + 8 || store__key_rest_id(&r.key, prefix.n + 8, id))
      rc = store__corrupt(t, "chat index");
    else
      rc = fn(t, id, arg);
  }
  store__range_close(&r);
  return rc;
}

typedef struct store_list_arg {
  store_chat_fn fn;
  void *arg;
} store_list_arg;

static int store_list_one(store_txn *t, const char *chat_id, void *argp) {
  store_list_arg *a = argp;
  store_chat c;
  size_t lens[3];
  int rc = store_chat_read(t, chat_id, &c, lens);
  if (rc == AG_ERR_NOT_FOUND) return store__corrupt(t, "chat index");
  return rc ? rc : a->fn(&c, a->arg);
}

int store_chat_list(store_txn *t, const char *world_id, store_chat_fn fn, void *arg) {
  store_list_arg a = {fn, arg};
  int rc = store_index_walk(t, world_id, store_list_one, &a);
  return rc > 0 ? AG_OK : rc;
}

static int store_count_one(store_txn *t, const char *chat_id, void *arg) {
  (void)t;
  (void)chat_id;
  (*(uint64_t *)arg)++;
  return 0;
}

int store_chat_count(store_txn *t, const char *world_id, uint64_t *out) {
  *out = 0;
  if (world_id) return store_index_walk(t, world_id, store_count_one, out);
  MDB_stat st;
  int rc = mdb_stat(t->txn, t->s->chats, &st);
  if (rc) return store__lmdb(t, rc, "count chats");
  *out = st.ms_entries;
  return AG_OK;
}

static int store_latest_one(store_txn *t, const char *chat_id, void *arg) {
  int rc = store_chat_get(t, chat_id, arg);
  if (rc == AG_ERR_NOT_FOUND) return store__corrupt(t, "chat index");
  return rc ? rc : STORE_STOP;
}

int store_chat_latest(store_txn *t, const char *world_id, store_chat *out) {
  *out = (store_chat){0};
  int rc = store_index_walk(t, world_id, store_latest_one, out);
  if (rc == STORE_STOP) return AG_OK;
  if (rc) return rc;
  return ag_fail(t->em, AG_ERR_NOT_FOUND, "no chats in %s%s", world_id ? "world " : "the database",
                 world_id ? world_id : "");
}

typedef struct id_list {
  char (*ids)[STORE_ID_MAX];
  size_t n, cap;
} id_list;

static int collect_id(const store_chat *c, void *arg) {
  id_list *l = arg;
  if (l->n == l->cap) {
    size_t ncap = l->cap ? l->cap * 2 : 16;
    char (*p)[STORE_ID_MAX] = realloc(l->ids, ncap * sizeof *p);
    if (!p) return AG_ERR_NOMEM;
    l->ids = p;
    l->cap = ncap;
  }
  snprintf(l->ids[l->n++], STORE_ID_MAX, "%s", c->id);
  return 0;
}

int store_world_delete(store_txn *t, const char *id) {
  store_world w;
  id_list l = {NULL, 0, 0};
  int rc = store__writable(t);
  if (!rc) rc = store_world_get(t, id, &w);
  if (rc) return rc;
  store_world_free(&w);
  /* Ids first, deletes after: a scan must not write under itself. */
  rc = store_chat_list(t, id, collect_id, &l);
  for (size_t i = 0; !rc && i < l.n; i++) rc = store_chat_delete(t, l.ids[i]);
  free(l.ids);
  if (rc) return rc == AG_ERR_NOMEM ? ag_fail(t->em, rc, "out of memory") : rc;
  MDB_val key = {strlen(id), (void *)id};
  int mrc = mdb_del(t->txn, t->s->worlds, &key, NULL);
  return mrc ? store__lmdb(t, mrc, "delete world") : AG_OK;
}

int store_chat_clear(store_txn *t, const char *id) {
  store__key prefix = {.n = 0};
  int rc = store__writable(t);
  if (rc) return rc;
  /* Everything of the chat but its record keys on chat id \0 ...: one range delete per database. */
  store__key_str(&prefix, id);
  const MDB_dbi ranges[] = {t->s->messages, t->s->memories, t->s->states, t->s->contexts, t->s->thread};
  for (size_t i = 0; !rc && i < sizeof ranges / sizeof *ranges; i++) rc = store__delete_prefix(t, ranges[i], &prefix);
  return rc;
}

int store_chat_delete(store_txn *t, const char *id) {
  store_chat c = {0};
  store_world w = {0};
  int rc = store__writable(t);
  if (!rc) rc = store_chat_get(t, id, &c);
  if (rc) goto done;
  MDB_val key = {strlen(id), (void *)id};
  rc = store_index_update(t, c.world_id, c.updated_at_ms, id, 0);
  if (rc) goto done;
  int mrc = mdb_del(t->txn, t->s->chats, &key, NULL);
  if (mrc) {
    rc = store__lmdb(t, mrc, "delete chat");
    goto done;
  }
  if ((rc = store_chat_clear(t, id))) goto done;
  /* Never leave the world pointing at a chat that is gone; the caller picks the fallback. */
  rc = store_world_get(t, c.world_id, &w);
  if (rc == AG_ERR_NOT_FOUND) {
    rc = AG_OK;
    goto done;
  }
  if (!rc && strcmp(w.current_chat, id) == 0) {
    w.current_chat = "";
    rc = store_world_write(t, &w);
  }
done:
  store_chat_free(&c);
  store_world_free(&w);
  return rc;
}
