/* Agents' versioned contexts and each chat's event thread of tool steps (issue 7), stored beside the
 * messages and deleted with their chat. */
#include "storage/store_int.h"

#include <stdlib.h>

/* chat id \0 [agent id] : the agent id is the rest of the key, as for agent states. */
static int ctx_key(store_txn *t, store__key *k, const char *chat_id, const char *agent_id) {
  int rc = store__check_id(t, "chat id", chat_id);
  if (!rc && agent_id) rc = store__check_id(t, "agent id", agent_id);
  if (rc) return rc;
  k->n = 0;
  store__key_str(k, chat_id);
  if (agent_id) store__key_bytes(k, agent_id, strlen(agent_id));
  return AG_OK;
}

int store_context_put(store_txn *t, const char *chat_id, const char *agent_id, const store_context *c) {
  store__key k;
  size_t len = 0;
  int rc = store__writable(t);
  if (!rc && !agent_id) rc = ag_fail(t->em, AG_ERR_INVALID, "a context needs an agent id");
  if (!rc) rc = ctx_key(t, &k, chat_id, agent_id);
  if (!rc) rc = store__check_len(t, "context data", c->data_json, STORE_TEXT_LEN, &len);
  if (!rc) rc = store__chat_exists(t, chat_id);
  if (rc) return rc;
  unsigned char *rec = malloc(16 + len);
  if (!rec) return AG_ERR_NOMEM;
  store__be64(rec, c->version);
  store__be64(rec + 8, (uint64_t)c->updated_at_ms);
  if (len) memcpy(rec + 16, c->data_json, len);
  MDB_val key = store__val(&k), val = {16 + len, rec};
  int mrc = mdb_put(t->txn, t->s->contexts, &key, &val, 0);
  free(rec);
  return mrc ? store__lmdb(t, mrc, "write context") : AG_OK;
}

static int ctx_decode(const MDB_val *v, store_context *c, char **owned) {
  if (v->mv_size < 16) return -1;
  const unsigned char *p = v->mv_data;
  c->version = store__get64(p);
  c->updated_at_ms = (int64_t)store__get64(p + 8);
  char *s = malloc(v->mv_size - 16 + 1);
  if (!s) return -1;
  memcpy(s, p + 16, v->mv_size - 16);
  s[v->mv_size - 16] = '\0';
  c->data_json = s;
  *owned = s;
  return 0;
}

int store_context_get(store_txn *t, const char *chat_id, const char *agent_id, store_context *out) {
  store__key k;
  memset(out, 0, sizeof *out);
  int rc = agent_id ? ctx_key(t, &k, chat_id, agent_id) : ag_fail(t->em, AG_ERR_INVALID, "a context needs an agent id");
  if (rc) return rc;
  MDB_val key = store__val(&k), val;
  int mrc = mdb_get(t->txn, t->s->contexts, &key, &val);
  if (mrc == MDB_NOTFOUND) return AG_ERR_NOT_FOUND;
  if (mrc) return store__lmdb(t, mrc, "read context");
  char *owned = NULL;
  if (ctx_decode(&val, out, &owned)) return store__corrupt(t, "context");
  out->mem_ = owned;
  return AG_OK;
}

void store_context_free(store_context *c) {
  free(c->mem_);
  memset(c, 0, sizeof *c);
}

int store_context_scan(store_txn *t, const char *chat_id, store_context_fn fn, void *arg) {
  store__key prefix;
  MDB_cursor *cur = NULL;
  int rc = ctx_key(t, &prefix, chat_id, NULL);
  if (rc) return rc;
  MDB_val key = store__val(&prefix), val;
  int mrc = mdb_cursor_open(t->txn, t->s->contexts, &cur);
  if (mrc) return store__lmdb(t, mrc, "scan contexts");
  mrc = mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE);
  while (mrc == 0 && store__has_prefix(&key, &prefix)) {
    char agent[STORE_ID_MAX];
    size_t n = key.mv_size - prefix.n;
    store_context c;
    char *owned = NULL;
    if (n == 0 || n > STORE_ID_LEN || ctx_decode(&val, &c, &owned)) {
      rc = store__corrupt(t, "context");
      goto done;
    }
    memcpy(agent, (const char *)key.mv_data + prefix.n, n);
    agent[n] = '\0';
    c.mem_ = NULL;
    rc = fn(agent, &c, arg);
    free(owned);
    if (rc) goto done;
    mrc = mdb_cursor_get(cur, &key, &val, MDB_NEXT);
  }
  if (mrc && mrc != MDB_NOTFOUND) rc = store__lmdb(t, mrc, "scan contexts");
done:
  mdb_cursor_close(cur);
  return rc > 0 ? AG_OK : rc;
}

int store_context_clear(store_txn *t, const char *chat_id, const char *agent_id) {
  store__key k;
  int rc = store__writable(t);
  if (!rc) rc = ctx_key(t, &k, chat_id, agent_id);
  if (rc) return rc;
  if (!agent_id) return store__delete_prefix(t, t->s->contexts, &k);
  MDB_val key = store__val(&k);
  int mrc = mdb_del(t->txn, t->s->contexts, &key, NULL);
  return mrc && mrc != MDB_NOTFOUND ? store__lmdb(t, mrc, "clear context") : AG_OK;
}

int store_thread_append(store_txn *t, const char *chat_id, const char *event_json) {
  store__key prefix;
  size_t len = 0;
  int rc = store__writable(t);
  if (!rc) rc = ctx_key(t, &prefix, chat_id, NULL);
  if (!rc) rc = store__check_len(t, "thread event", event_json, STORE_TEXT_LEN, &len);
  if (!rc) rc = store__chat_exists(t, chat_id);
  if (rc) return rc;
  MDB_val key, val;
  uint64_t next = 1;
  rc = store__last_in_range(t, t->s->thread, &prefix, 8, &key, &val);
  if (rc == AG_OK) next = store__get64((const unsigned char *)key.mv_data + prefix.n) + 1;
  else if (rc != AG_ERR_NOT_FOUND) return rc;
  store__key_u64(&prefix, next);
  key = store__val(&prefix);
  val.mv_size = len;
  val.mv_data = (void *)event_json;
  int mrc = mdb_put(t->txn, t->s->thread, &key, &val, 0);
  return mrc ? store__lmdb(t, mrc, "write thread event") : AG_OK;
}

int store_thread_scan(store_txn *t, const char *chat_id, store_thread_fn fn, void *arg) {
  store__key prefix;
  MDB_cursor *cur = NULL;
  int rc = ctx_key(t, &prefix, chat_id, NULL);
  if (rc) return rc;
  MDB_val key = store__val(&prefix), val;
  int mrc = mdb_cursor_open(t->txn, t->s->thread, &cur);
  if (mrc) return store__lmdb(t, mrc, "scan thread");
  mrc = mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE);
  while (mrc == 0 && store__has_prefix(&key, &prefix)) {
    rc = fn(val.mv_data, val.mv_size, arg);
    if (rc) goto done;
    mrc = mdb_cursor_get(cur, &key, &val, MDB_NEXT);
  }
  if (mrc && mrc != MDB_NOTFOUND) rc = store__lmdb(t, mrc, "scan thread");
done:
  mdb_cursor_close(cur);
  return rc > 0 ? AG_OK : rc;
}
