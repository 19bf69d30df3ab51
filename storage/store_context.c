/* Agents' versioned contexts in storage (issue 7): per chat and agent, a version, a time and a JSON
 * object the caller keeps. Key chat id \0 agent id (the agent id is the rest of the key); deleted with
 * their chat. */
#include "storage/store_int.h"

#include <stdlib.h>

/* Record: be64 version, be64 updated_at_ms, then the JSON text (no NUL). */
int store_context_put(store_txn *t, const char *chat_id, const char *agent_id, const store_context *c) {
  store__key k;
  size_t len = 0;
  int rc = store__writable(t);
  if (!rc && !agent_id) rc = ag_fail(t->em, AG_ERR_INVALID, "a context needs an agent id");
  if (!rc) rc = store__chat_agent_key(t, &k, chat_id, agent_id, 0);
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

/* Decodes a record into *c with its JSON copied (NUL-terminated) into *owned, which the caller frees. */
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
  int rc = agent_id ? store__chat_agent_key(t, &k, chat_id, agent_id, 0)
                    : ag_fail(t->em, AG_ERR_INVALID, "a context needs an agent id");
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
  store__range r;
  int rc = store__chat_range(t, t->s->contexts, chat_id, "scan contexts", &r);
  char agent[STORE_ID_MAX];
  while (rc == 0 && (rc = store__range_next_agent(&r, agent, "context")) > 0) {
    store_context c;
    char *owned = NULL;
    if (ctx_decode(&r.val, &c, &owned)) {
      rc = store__corrupt(t, "context");
      break;
    }
    c.mem_ = NULL;
    rc = fn(agent, &c, arg);
    free(owned);
  }
  store__range_close(&r);
  return rc > 0 ? AG_OK : rc;
}

int store_context_clear(store_txn *t, const char *chat_id, const char *agent_id) {
  return store__clear_agent(t, t->s->contexts, chat_id, agent_id, 0, "clear context");
}
