/* A chat's event thread in storage: an append-only log of JSON texts the caller writes (the chat layer
 * keeps its tool steps there). Key chat id \0 be64(n), n counting from 1; deleted with its chat. */
#include "storage/store_int.h"

int store_thread_append(store_txn *t, const char *chat_id, const char *event_json) {
  return store_thread_append_all(t, chat_id, event_json, 1);
}

int store_thread_append_all(store_txn *t, const char *chat_id, const char *events, size_t n) {
  store__key prefix;
  int rc = store__writable(t);
  if (!rc) rc = store__chat_agent_key(t, &prefix, chat_id, NULL, 0);
  if (!rc && n && !events) rc = ag_fail(t->em, AG_ERR_INVALID, "thread step is missing");
  const char *e = events;
  for (size_t i = 0, len = 0; !rc && i < n; i++, e += len + 1)
    rc = store__check_len(t, "thread step", e, STORE_TEXT_LEN, &len);
  if (!rc && n) rc = store__chat_exists(t, chat_id);
  if (rc || !n) return rc;
  /* The thread's end is found once for the batch (a seek per step was a twentieth of a cached reply). */
  MDB_val key, val;
  uint64_t next = 1;
  rc = store__last_in_range(t, t->s->thread, &prefix, 8, &key, &val);
  if (rc == AG_OK) next = store__get64((const unsigned char *)key.mv_data + prefix.n) + 1;
  else if (rc != AG_ERR_NOT_FOUND) return rc;
  size_t prefix_n = prefix.n;
  for (size_t i = 0; i < n; i++, events += val.mv_size + 1) {
    prefix.n = prefix_n;
    store__key_u64(&prefix, next++);
    key = store__val(&prefix);
    val.mv_size = strlen(events);
    val.mv_data = (void *)events;
    int mrc = mdb_put(t->txn, t->s->thread, &key, &val, 0);
    if (mrc) return store__lmdb(t, mrc, "write thread step");
  }
  return AG_OK;
}

int store_thread_scan(store_txn *t, const char *chat_id, store_thread_fn fn, void *arg) {
  store__range r;
  int rc = store__chat_range(t, t->s->thread, chat_id, "scan thread", &r);
  while (rc == 0 && (rc = store__range_next(&r)) > 0) rc = fn(r.val.mv_data, r.val.mv_size, arg);
  store__range_close(&r);
  return rc > 0 ? AG_OK : rc;
}
