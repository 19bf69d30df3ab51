/* Agents' memories in storage: per chat and agent, an ordered list of message seqs of that chat. Key
 * chat id \0 agent id \0 be32(index) → be64(seq), so one agent's memory is one key range in order. */
#include "storage/store_int.h"

int store_memory_append(store_txn *t, const char *chat_id, const char *agent_id, uint64_t seq) {
  return store_memory_append_all(t, chat_id, agent_id, &seq, 1);
}

int store_memory_append_all(store_txn *t, const char *chat_id, const char *agent_id, const uint64_t *seqs,
                            size_t n) {
  store__key prefix;
  MDB_val key, val;
  uint64_t index = 0; /* the first new entry's */
  int rc = store__writable(t);
  if (!rc && !agent_id) rc = ag_fail(t->em, AG_ERR_INVALID, "memory append needs an agent id");
  if (!rc) rc = store__chat_agent_key(t, &prefix, chat_id, agent_id, 1);
  /* A memory may only name a stored message of the same chat (which implies the chat exists). */
  for (size_t i = 0; !rc && i < n; i++) rc = store__message_exists(t, chat_id, seqs[i]);
  if (rc || !n) return rc;
  /* The memory's end is found once for them all (a seek per entry was a twentieth of a cached reply). */
  rc = store__last_in_range(t, t->s->memories, &prefix, 4, &key, &val);
  if (rc == AG_OK) index = (uint64_t)store__get32((const unsigned char *)key.mv_data + prefix.n) + 1;
  else if (rc != AG_ERR_NOT_FOUND) return rc;
  if (n - 1 > UINT32_MAX || index > UINT32_MAX - (uint64_t)(n - 1)) /* the last index would pass UINT32_MAX */
    return ag_fail(t->em, AG_ERR_TOO_BIG, "memory of %s in chat '%s' is full", agent_id, chat_id);
  size_t prefix_n = prefix.n;
  for (size_t i = 0; i < n; i++) {
    unsigned char seqb[8];
    store__be64(seqb, seqs[i]);
    prefix.n = prefix_n;
    store__be32(prefix.b + prefix.n, (uint32_t)index++);
    prefix.n += 4;
    key = store__val(&prefix);
    val.mv_size = 8;
    val.mv_data = seqb;
    int mrc = mdb_put(t->txn, t->s->memories, &key, &val, 0);
    if (mrc) return store__lmdb(t, mrc, "write memory");
  }
  return AG_OK;
}

int store_memory_scan(store_txn *t, const char *chat_id, const char *agent_id, store_memory_fn fn, void *arg) {
  store__key prefix;
  store__range r;
  int rc = agent_id ? store__chat_agent_key(t, &prefix, chat_id, agent_id, 1)
                    : ag_fail(t->em, AG_ERR_INVALID, "memory scan needs an agent id");
  if (rc) return rc;
  rc = store__range_open(t, t->s->memories, &prefix, NULL, "scan memory", &r);
  while (rc == 0 && (rc = store__range_next(&r)) > 0) {
    if (r.key.mv_size != prefix.n + 4 || r.val.mv_size != 8) {
      rc = store__corrupt(t, "memory");
      break;
    }
    rc = fn(store__get64(r.val.mv_data), arg);
  }
  store__range_close(&r);
  return rc > 0 ? AG_OK : rc;
}

int store_memory_clear(store_txn *t, const char *chat_id, const char *agent_id) {
  return store__clear_agent(t, t->s->memories, chat_id, agent_id, 1, "clear memory");
}
