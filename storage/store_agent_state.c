/* Agents' per-chat state in storage: a small fixed record per chat and agent that the caller gives
 * meaning to. Key chat id \0 agent id (the agent id is the rest of the key). */
#include "storage/store_int.h"

#define STORE_STATE_SIZE 13 /* be32 turn_count, u8 notice_sent, be64 counter */

static void store_state_decode(const unsigned char *p, store_agent_state *st) {
  st->turn_count = (int32_t)store__get32(p);
  st->notice_sent = p[4];
  st->counter = store__get64(p + 5);
}

int store_agent_state_put(store_txn *t, const char *chat_id, const char *agent_id, const store_agent_state *st) {
  store__key k;
  unsigned char rec[STORE_STATE_SIZE];
  int rc = store__writable(t);
  if (!rc && !agent_id) rc = ag_fail(t->em, AG_ERR_INVALID, "agent state needs an agent id");
  if (!rc) rc = store__chat_agent_key(t, &k, chat_id, agent_id, 0);
  if (!rc) rc = store__chat_exists(t, chat_id);
  if (rc) return rc;
  store__be32(rec, (uint32_t)st->turn_count);
  rec[4] = st->notice_sent;
  store__be64(rec + 5, st->counter);
  MDB_val key = store__val(&k), val = {sizeof rec, rec};
  int mrc = mdb_put(t->txn, t->s->states, &key, &val, 0);
  return mrc ? store__lmdb(t, mrc, "write agent state") : AG_OK;
}

int store_agent_state_get(store_txn *t, const char *chat_id, const char *agent_id, store_agent_state *out) {
  store__key k;
  MDB_val key, val;
  *out = (store_agent_state){0};
  int rc = agent_id ? store__chat_agent_key(t, &k, chat_id, agent_id, 0)
                    : ag_fail(t->em, AG_ERR_INVALID, "agent state needs an agent id");
  if (rc) return rc;
  key = store__val(&k);
  int mrc = mdb_get(t->txn, t->s->states, &key, &val);
  if (mrc == MDB_NOTFOUND)
    return ag_fail(t->em, AG_ERR_NOT_FOUND, "no state for %s in chat '%s'", agent_id, chat_id);
  if (mrc) return store__lmdb(t, mrc, "read agent state");
  if (val.mv_size != STORE_STATE_SIZE) return store__corrupt(t, "agent state");
  store_state_decode(val.mv_data, out);
  return AG_OK;
}

int store_agent_state_scan(store_txn *t, const char *chat_id, store_agent_state_fn fn, void *arg) {
  store__range r;
  int rc = store__chat_range(t, t->s->states, chat_id, "scan agent states", &r);
  char agent[STORE_ID_MAX];
  while (rc == 0 && (rc = store__range_next_agent(&r, agent, "agent state")) > 0) {
    store_agent_state st;
    if (r.val.mv_size != STORE_STATE_SIZE) {
      rc = store__corrupt(t, "agent state");
      break;
    }
    store_state_decode(r.val.mv_data, &st);
    rc = fn(agent, &st, arg);
  }
  store__range_close(&r);
  return rc > 0 ? AG_OK : rc;
}

int store_agent_state_clear(store_txn *t, const char *chat_id, const char *agent_id) {
  return store__clear_agent(t, t->s->states, chat_id, agent_id, 0, "delete agent state");
}
