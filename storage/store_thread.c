/* A chat's event thread in storage: an append-only log of JSON texts the caller writes (the chat layer
 * keeps its tool steps there). Key chat id \0 be64(n), n counting from 1; deleted with its chat. */
#include "storage/store_int.h"

int store_thread_append(store_txn *t, const char *chat_id, const char *event_json) {
  store__key prefix;
  size_t len = 0;
  int rc = store__writable(t);
  if (!rc) rc = store__chat_agent_key(t, &prefix, chat_id, NULL, 0);
  if (!rc) rc = store__check_len(t, "thread step", event_json, STORE_TEXT_LEN, &len);
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
  return mrc ? store__lmdb(t, mrc, "write thread step") : AG_OK;
}

int store_thread_scan(store_txn *t, const char *chat_id, store_thread_fn fn, void *arg) {
  store__range r;
  int rc = store__chat_range(t, t->s->thread, chat_id, "scan thread", &r);
  while (rc == 0 && (rc = store__range_next(&r)) > 0) rc = fn(r.val.mv_data, r.val.mv_size, arg);
  store__range_close(&r);
  return rc > 0 ? AG_OK : rc;
}
