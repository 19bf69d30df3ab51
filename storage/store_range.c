/* Key ranges. Every record of a chat lives under keys that start with the chat id and '\0' (and an
 * agent's under chat id \0 agent id), so scanning, clearing and "the last one" are cursor ranges over
 * a key prefix. These are the only cursor loops in storage/. */
#include "storage/store_int.h"

int store__chat_agent_key(store_txn *t, store__key *k, const char *chat_id, const char *agent_id, int terminated) {
  int rc = store__check_id(t, "chat id", chat_id);
  if (!rc && agent_id) rc = store__check_id(t, "agent id", agent_id);
  if (rc) return rc;
  k->n = 0;
  store__key_str(k, chat_id);
  if (agent_id) store__key_bytes(k, agent_id, strlen(agent_id) + (terminated ? 1 : 0));
  return AG_OK;
}

int store__key_rest_id(const MDB_val *key, size_t prefix_len, char out[STORE_ID_MAX]) {
  size_t n = key->mv_size - prefix_len;
  if (n == 0 || n > STORE_ID_LEN) return -1;
  memcpy(out, (const char *)key->mv_data + prefix_len, n);
  out[n] = '\0';
  return 0;
}

int store__range_open(store_txn *t, MDB_dbi dbi, const store__key *prefix, const store__key *start,
                      const char *what, store__range *r) {
  *r = (store__range){.t = t, .prefix = *prefix, .what = what};
  r->start = start ? *start : *prefix;
  int mrc = mdb_cursor_open(t->txn, dbi, &r->cur);
  if (mrc) {
    r->cur = NULL;
    return store__lmdb(t, mrc, what);
  }
  return AG_OK;
}

int store__chat_range(store_txn *t, MDB_dbi dbi, const char *chat_id, const char *what, store__range *r) {
  store__key prefix;
  int rc = store__chat_agent_key(t, &prefix, chat_id, NULL, 0);
  if (rc) {
    *r = (store__range){0};
    return rc;
  }
  return store__range_open(t, dbi, &prefix, NULL, what, r);
}

int store__range_next(store__range *r) {
  int mrc;
  if (!r->cur) return 0;
  if (r->started) {
    mrc = mdb_cursor_get(r->cur, &r->key, &r->val, MDB_NEXT);
  } else if (r->start.n == 0) {
    /* LMDB refuses an empty key to seek to: the whole database starts at its first record. */
    mrc = mdb_cursor_get(r->cur, &r->key, &r->val, MDB_FIRST);
  } else {
    r->key = store__val(&r->start);
    mrc = mdb_cursor_get(r->cur, &r->key, &r->val, MDB_SET_RANGE);
  }
  r->started = 1;
  if (mrc == MDB_NOTFOUND || (mrc == 0 && !store__has_prefix(&r->key, &r->prefix))) return 0;
  if (mrc) return store__lmdb(r->t, mrc, r->what);
  return 1;
}

int store__range_next_agent(store__range *r, char agent[STORE_ID_MAX], const char *what) {
  int rc = store__range_next(r);
  if (rc > 0 && store__key_rest_id(&r->key, r->prefix.n, agent)) return store__corrupt(r->t, what);
  return rc;
}

void store__range_close(store__range *r) {
  if (r->cur) mdb_cursor_close(r->cur);
  r->cur = NULL;
}

int store__delete_prefix(store_txn *t, MDB_dbi dbi, const store__key *prefix) {
  store__range r;
  int rc = store__range_open(t, dbi, prefix, NULL, "range delete", &r);
  while (rc == 0 && (rc = store__range_next(&r)) > 0) {
    /* After a delete the cursor already sits on the following record; MDB_NEXT returns it. */
    int mrc = mdb_cursor_del(r.cur, 0);
    rc = mrc ? store__lmdb(t, mrc, "range delete") : 0;
  }
  store__range_close(&r);
  return rc;
}

/* Finds the last key of dbi that is prefix followed by suffix_len bytes (keys in that range all have
 * that length): seek just past the range, then step back once. AG_ERR_NOT_FOUND when the range is empty. */
int store__last_in_range(store_txn *t, MDB_dbi dbi, const store__key *prefix, size_t suffix_len, MDB_val *key,
                         MDB_val *val) {
  store__key probe = *prefix;
  MDB_cursor *cur = NULL;
  memset(probe.b + probe.n, 0xFF, suffix_len);
  probe.n += suffix_len;
  *key = store__val(&probe);
  int rc = mdb_cursor_open(t->txn, dbi, &cur);
  if (rc) goto done;
  rc = mdb_cursor_get(cur, key, val, MDB_SET_RANGE);
  if (rc == 0 && key->mv_size == probe.n && memcmp(key->mv_data, probe.b, probe.n) == 0) goto done;
  if (rc == 0) rc = mdb_cursor_get(cur, key, val, MDB_PREV);
  else if (rc == MDB_NOTFOUND) rc = mdb_cursor_get(cur, key, val, MDB_LAST);
  if (rc == 0 && (!store__has_prefix(key, prefix) || key->mv_size != probe.n)) rc = MDB_NOTFOUND;
done:
  if (cur) mdb_cursor_close(cur);
  if (rc == MDB_NOTFOUND) return AG_ERR_NOT_FOUND; /* an empty range: the caller decides what that means */
  return rc ? store__lmdb(t, rc, "seek") : AG_OK;
}

int store__clear_agent(store_txn *t, MDB_dbi dbi, const char *chat_id, const char *agent_id, int terminated,
                       const char *what) {
  store__key k;
  int rc = store__writable(t);
  if (!rc) rc = store__chat_agent_key(t, &k, chat_id, agent_id, terminated);
  if (rc) return rc;
  /* An agent's memory is a range too (terminated); its state and context are one key. */
  if (!agent_id || terminated) return store__delete_prefix(t, dbi, &k);
  MDB_val key = store__val(&k);
  int mrc = mdb_del(t->txn, dbi, &key, NULL);
  return mrc && mrc != MDB_NOTFOUND ? store__lmdb(t, mrc, what) : AG_OK;
}
