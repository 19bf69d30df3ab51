/* A chat's messages, and its agents' memories and turn states, in storage. Every key starts with the chat
 * id and '\0', so a chat's data is one contiguous key range per database: scans are cursor ranges and
 * "the last one" is a single cursor step back from the end of the range. */
#include "storage/store_int.h"

#include <stdlib.h>

#define STORE_STATE_SIZE 13 /* be32 turn_count, u8 notice_sent, be64 reply_counter */

static void store_message_key(store__key *k, const char *chat_id, uint64_t seq) {
  k->n = 0;
  store__key_str(k, chat_id);
  store__key_u64(k, seq);
}

/* Finds the last key of dbi that is prefix followed by suffix_len bytes (keys in that range all have
 * that length): seek just past the range, then step back once. AG_ERR_NOT_FOUND when the range is empty. */
int store__last_in_range(store_txn *t, MDB_dbi dbi, const store__key *prefix, size_t suffix_len,
                               MDB_val *key, MDB_val *val) {
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
  if (rc == MDB_NOTFOUND) return AG_ERR_NOT_FOUND; /* no message: the caller decides what that means */
  return rc ? store__lmdb(t, rc, "seek") : AG_OK;
}

/* ---- Messages ----------------------------------------------------------------------------------- */

/* Message record: be64 ts_ms, u8 kind, then the strings sender and text. */
static int store_message_decode(const MDB_val *v, store_message *m) {
  const unsigned char *p = v->mv_data, *end = p + v->mv_size;
  if (v->mv_size < 9 || p[8] > STORE_KIND_TURN_LIMIT) return -1;
  m->ts_ms = (int64_t)store__get64(p);
  m->kind = (store_kind)p[8];
  p += 9;
  if (store__get_str(&p, end, &m->sender, NULL) || store__get_str(&p, end, &m->text, &m->text_len) || p != end)
    return -1;
  m->mem_ = NULL;
  return 0;
}

int store_message_put(store_txn *t, const char *chat_id, const store_message *m) {
  size_t slen, tlen;
  store__key k;
  int rc = store__writable(t);
  if (!rc) rc = store__check_id(t, "chat id", chat_id);
  if (!rc) rc = store__check_id(t, "message sender", m->sender);
  if (!rc) rc = store__check_len(t, "message text", m->text, STORE_TEXT_LEN, &tlen);
  if (rc) return rc;
  if (m->seq == 0) return ag_fail(t->em, AG_ERR_INVALID, "message seq must be at least 1");
  if ((unsigned)m->kind > STORE_KIND_TURN_LIMIT)
    return ag_fail(t->em, AG_ERR_INVALID, "unknown message kind %d", (int)m->kind);
  rc = store__chat_exists(t, chat_id);
  if (rc) return rc;
  slen = strlen(m->sender);
  store_message_key(&k, chat_id, m->seq);
  MDB_val key = store__val(&k), val;
  val.mv_size = 9 + store__str_size(slen) + store__str_size(tlen);
  int mrc = mdb_put(t->txn, t->s->messages, &key, &val, MDB_NOOVERWRITE | MDB_RESERVE);
  if (mrc == MDB_KEYEXIST)
    return ag_fail(t->em, AG_ERR_EXISTS, "chat '%s' already has message %llu", chat_id,
                   (unsigned long long)m->seq);
  if (mrc) return store__lmdb(t, mrc, "write message");
  unsigned char *p = val.mv_data;
  store__be64(p, (uint64_t)m->ts_ms);
  p[8] = (unsigned char)m->kind;
  p = store__put_str(p + 9, m->sender, slen);
  store__put_str(p, m->text ? m->text : "", tlen);
  return AG_OK;
}

int store_message_get(store_txn *t, const char *chat_id, uint64_t seq, store_message *out) {
  store__key k;
  MDB_val key, val;
  *out = (store_message){0};
  int rc = store__check_id(t, "chat id", chat_id);
  if (rc) return rc;
  store_message_key(&k, chat_id, seq);
  key = store__val(&k);
  int mrc = mdb_get(t->txn, t->s->messages, &key, &val);
  if (mrc == MDB_NOTFOUND)
    return ag_fail(t->em, AG_ERR_NOT_FOUND, "chat '%s' has no message %llu", chat_id, (unsigned long long)seq);
  if (mrc) return store__lmdb(t, mrc, "read message");
  store_message m;
  if (store_message_decode(&val, &m)) return store__corrupt(t, "message");
  size_t slen = strlen(m.sender);
  char *mem = malloc(slen + 1 + m.text_len + 1);
  if (!mem) return ag_fail(t->em, AG_ERR_NOMEM, "out of memory");
  memcpy(mem, m.sender, slen + 1);
  memcpy(mem + slen + 1, m.text, m.text_len + 1);
  *out = m;
  out->seq = seq;
  out->sender = mem;
  out->text = mem + slen + 1;
  out->mem_ = mem;
  return AG_OK;
}

void store_message_free(store_message *m) {
  if (!m) return;
  free(m->mem_);
  *m = (store_message){0};
}

int store_message_scan(store_txn *t, const char *chat_id, uint64_t from_seq, store_message_fn fn, void *arg) {
  store__key prefix = {.n = 0}, start;
  MDB_cursor *cur = NULL;
  int rc = store__check_id(t, "chat id", chat_id);
  if (rc) return rc;
  store__key_str(&prefix, chat_id);
  store_message_key(&start, chat_id, from_seq);
  MDB_val key = store__val(&start), val;
  int mrc = mdb_cursor_open(t->txn, t->s->messages, &cur);
  if (mrc) return store__lmdb(t, mrc, "scan messages");
  mrc = mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE);
  while (mrc == 0 && store__has_prefix(&key, &prefix)) {
    store_message m;
    if (key.mv_size != prefix.n + 8 || store_message_decode(&val, &m)) {
      rc = store__corrupt(t, "message");
      goto done;
    }
    m.seq = store__get64((const unsigned char *)key.mv_data + prefix.n);
    rc = fn(&m, arg);
    if (rc) goto done;
    mrc = mdb_cursor_get(cur, &key, &val, MDB_NEXT);
  }
  if (mrc && mrc != MDB_NOTFOUND) rc = store__lmdb(t, mrc, "scan messages");
done:
  mdb_cursor_close(cur);
  return rc > 0 ? AG_OK : rc;
}

int store_message_last_seq(store_txn *t, const char *chat_id, uint64_t *out) {
  store__key prefix = {.n = 0};
  MDB_val key, val;
  *out = 0;
  int rc = store__check_id(t, "chat id", chat_id);
  if (rc) return rc;
  store__key_str(&prefix, chat_id);
  rc = store__last_in_range(t, t->s->messages, &prefix, 8, &key, &val);
  if (rc == AG_ERR_NOT_FOUND) return AG_OK;
  if (rc) return rc;
  *out = store__get64((const unsigned char *)key.mv_data + prefix.n);
  return AG_OK;
}

/* ---- Memories ----------------------------------------------------------------------------------- */

/* chat id \0 agent id \0: the range of one agent's memory (with be32 index after it). */
static int store_memory_prefix(store_txn *t, store__key *k, const char *chat_id, const char *agent_id) {
  int rc = store__check_id(t, "chat id", chat_id);
  if (!rc && agent_id) rc = store__check_id(t, "agent id", agent_id);
  if (rc) return rc;
  k->n = 0;
  store__key_str(k, chat_id);
  if (agent_id) store__key_str(k, agent_id);
  return AG_OK;
}

int store_memory_append(store_txn *t, const char *chat_id, const char *agent_id, uint64_t seq) {
  store__key prefix, mk;
  MDB_val key, val;
  uint32_t index = 0;
  int rc = store__writable(t);
  if (!rc && !agent_id) rc = ag_fail(t->em, AG_ERR_INVALID, "memory append needs an agent id");
  if (!rc) rc = store_memory_prefix(t, &prefix, chat_id, agent_id);
  if (rc) return rc;
  /* A memory may only name a stored message of the same chat (which implies the chat exists). */
  store_message_key(&mk, chat_id, seq);
  key = store__val(&mk);
  int mrc = mdb_get(t->txn, t->s->messages, &key, &val);
  if (mrc == MDB_NOTFOUND)
    return ag_fail(t->em, AG_ERR_NOT_FOUND, "chat '%s' has no message %llu", chat_id, (unsigned long long)seq);
  if (mrc) return store__lmdb(t, mrc, "read message");
  rc = store__last_in_range(t, t->s->memories, &prefix, 4, &key, &val);
  if (rc == AG_OK) {
    index = store__get32((const unsigned char *)key.mv_data + prefix.n);
    if (index == UINT32_MAX)
      return ag_fail(t->em, AG_ERR_TOO_BIG, "memory of %s in chat '%s' is full", agent_id, chat_id);
    index++;
  } else if (rc != AG_ERR_NOT_FOUND) {
    return rc;
  }
  unsigned char seqb[8];
  store__be64(seqb, seq);
  store__be32(prefix.b + prefix.n, index);
  prefix.n += 4;
  key = store__val(&prefix);
  val.mv_size = 8;
  val.mv_data = seqb;
  mrc = mdb_put(t->txn, t->s->memories, &key, &val, 0);
  return mrc ? store__lmdb(t, mrc, "write memory") : AG_OK;
}

int store_memory_scan(store_txn *t, const char *chat_id, const char *agent_id, store_memory_fn fn, void *arg) {
  store__key prefix;
  MDB_cursor *cur = NULL;
  int rc = agent_id ? store_memory_prefix(t, &prefix, chat_id, agent_id)
                    : ag_fail(t->em, AG_ERR_INVALID, "memory scan needs an agent id");
  if (rc) return rc;
  MDB_val key = store__val(&prefix), val;
  int mrc = mdb_cursor_open(t->txn, t->s->memories, &cur);
  if (mrc) return store__lmdb(t, mrc, "scan memory");
  mrc = mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE);
  while (mrc == 0 && store__has_prefix(&key, &prefix)) {
    if (key.mv_size != prefix.n + 4 || val.mv_size != 8) {
      rc = store__corrupt(t, "memory");
      goto done;
    }
    rc = fn(store__get64(val.mv_data), arg);
    if (rc) goto done;
    mrc = mdb_cursor_get(cur, &key, &val, MDB_NEXT);
  }
  if (mrc && mrc != MDB_NOTFOUND) rc = store__lmdb(t, mrc, "scan memory");
done:
  mdb_cursor_close(cur);
  return rc > 0 ? AG_OK : rc;
}

int store_memory_clear(store_txn *t, const char *chat_id, const char *agent_id) {
  store__key prefix;
  int rc = store__writable(t);
  if (!rc) rc = store_memory_prefix(t, &prefix, chat_id, agent_id);
  return rc ? rc : store__delete_prefix(t, t->s->memories, &prefix);
}

/* ---- Agent states ------------------------------------------------------------------------------- */

/* chat id \0 agent id (no separator after it: the agent id is the rest of the key). */
static int store_state_key(store_txn *t, store__key *k, const char *chat_id, const char *agent_id) {
  int rc = store_memory_prefix(t, k, chat_id, agent_id);
  if (!rc && agent_id) k->n--; /* drop the agent id's '\0' */
  return rc;
}

static void store_state_decode(const unsigned char *p, store_agent_state *st) {
  st->turn_count = (int32_t)store__get32(p);
  st->notice_sent = p[4];
  st->reply_counter = store__get64(p + 5);
}

int store_agent_state_put(store_txn *t, const char *chat_id, const char *agent_id, const store_agent_state *st) {
  store__key k;
  unsigned char rec[STORE_STATE_SIZE];
  int rc = store__writable(t);
  if (!rc && !agent_id) rc = ag_fail(t->em, AG_ERR_INVALID, "agent state needs an agent id");
  if (!rc) rc = store_state_key(t, &k, chat_id, agent_id);
  if (!rc) rc = store__chat_exists(t, chat_id);
  if (rc) return rc;
  store__be32(rec, (uint32_t)st->turn_count);
  rec[4] = st->notice_sent;
  store__be64(rec + 5, st->reply_counter);
  MDB_val key = store__val(&k), val = {sizeof rec, rec};
  int mrc = mdb_put(t->txn, t->s->states, &key, &val, 0);
  return mrc ? store__lmdb(t, mrc, "write agent state") : AG_OK;
}

int store_agent_state_get(store_txn *t, const char *chat_id, const char *agent_id, store_agent_state *out) {
  store__key k;
  MDB_val key, val;
  *out = (store_agent_state){0};
  int rc = agent_id ? store_state_key(t, &k, chat_id, agent_id)
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
  store__key prefix;
  MDB_cursor *cur = NULL;
  int rc = store_state_key(t, &prefix, chat_id, NULL);
  if (rc) return rc;
  MDB_val key = store__val(&prefix), val;
  int mrc = mdb_cursor_open(t->txn, t->s->states, &cur);
  if (mrc) return store__lmdb(t, mrc, "scan agent states");
  mrc = mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE);
  while (mrc == 0 && store__has_prefix(&key, &prefix)) {
    char agent[STORE_ID_MAX];
    size_t n = key.mv_size - prefix.n;
    if (n == 0 || n > STORE_ID_LEN || val.mv_size != STORE_STATE_SIZE) {
      rc = store__corrupt(t, "agent state");
      goto done;
    }
    memcpy(agent, (const char *)key.mv_data + prefix.n, n);
    agent[n] = '\0';
    store_agent_state st;
    store_state_decode(val.mv_data, &st);
    rc = fn(agent, &st, arg);
    if (rc) goto done;
    mrc = mdb_cursor_get(cur, &key, &val, MDB_NEXT);
  }
  if (mrc && mrc != MDB_NOTFOUND) rc = store__lmdb(t, mrc, "scan agent states");
done:
  mdb_cursor_close(cur);
  return rc > 0 ? AG_OK : rc;
}

int store_agent_state_clear(store_txn *t, const char *chat_id, const char *agent_id) {
  store__key k;
  int rc = store__writable(t);
  if (!rc) rc = store_state_key(t, &k, chat_id, agent_id);
  if (rc) return rc;
  if (!agent_id) return store__delete_prefix(t, t->s->states, &k);
  MDB_val key = store__val(&k);
  int mrc = mdb_del(t->txn, t->s->states, &key, NULL);
  return mrc && mrc != MDB_NOTFOUND ? store__lmdb(t, mrc, "delete agent state") : AG_OK;
}
