/* A chat's messages in storage: key chat id \0 be64(seq), so a chat's messages are one key range in seq
 * order, scans are cursor ranges and the last seq is one cursor step back from the end of the range. */
#include "storage/store_int.h"

#include <stdlib.h>

static void store_message_key(store__key *k, const char *chat_id, uint64_t seq) {
  k->n = 0;
  store__key_str(k, chat_id);
  store__key_u64(k, seq);
}

/* Message record: be64 ts_ms, u8 kind (the caller's, never interpreted), then the strings sender and text,
 * then, only for a world on a virtual clock, 'S' and be64 sim_ms (records without it, as every database
 * before issue 13 holds, read as they always did). */
#define SIM_TAG 'S'
#define SIM_SIZE 9
static int store_message_decode(const MDB_val *v, store_message *m) {
  const unsigned char *p = v->mv_data, *end = p + v->mv_size;
  if (v->mv_size < 9) return -1;
  m->ts_ms = (int64_t)store__get64(p);
  m->kind = p[8];
  p += 9;
  if (store__get_str(&p, end, &m->sender, NULL) || store__get_str(&p, end, &m->text, &m->text_len)) return -1;
  m->has_sim = end - p == SIM_SIZE && *p == SIM_TAG;
  m->sim_ms = m->has_sim ? (int64_t)store__get64(p + 1) : 0;
  if (p + (m->has_sim ? SIM_SIZE : 0) != end) return -1;
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
  rc = store__chat_exists(t, chat_id);
  if (rc) return rc;
  slen = strlen(m->sender);
  store_message_key(&k, chat_id, m->seq);
  MDB_val key = store__val(&k), val;
  val.mv_size = 9 + store__str_size(slen) + store__str_size(tlen) + (m->has_sim ? SIM_SIZE : 0);
  int mrc = mdb_put(t->txn, t->s->messages, &key, &val, MDB_NOOVERWRITE | MDB_RESERVE);
  if (mrc == MDB_KEYEXIST)
    return ag_fail(t->em, AG_ERR_EXISTS, "chat '%s' already has message %llu", chat_id,
                   (unsigned long long)m->seq);
  if (mrc) return store__lmdb(t, mrc, "write message");
  unsigned char *p = val.mv_data;
  store__be64(p, (uint64_t)m->ts_ms);
  p[8] = m->kind;
  p = store__put_str(p + 9, m->sender, slen);
  p = store__put_str(p, m->text ? m->text : "", tlen);
  if (m->has_sim) {
    *p = SIM_TAG;
    store__be64(p + 1, (uint64_t)m->sim_ms);
  }
  return AG_OK;
}

int store__message_exists(store_txn *t, const char *chat_id, uint64_t seq) {
  store__key k;
  MDB_val key, val;
  store_message_key(&k, chat_id, seq);
  key = store__val(&k);
  int mrc = mdb_get(t->txn, t->s->messages, &key, &val);
  if (mrc == MDB_NOTFOUND)
    return ag_fail(t->em, AG_ERR_NOT_FOUND, "chat '%s' has no message %llu", chat_id, (unsigned long long)seq);
  return mrc ? store__lmdb(t, mrc, "read message") : AG_OK;
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
  store__key prefix, start;
  store__range r;
  int rc = store__chat_agent_key(t, &prefix, chat_id, NULL, 0);
  if (rc) return rc;
  store_message_key(&start, chat_id, from_seq);
  rc = store__range_open(t, t->s->messages, &prefix, &start, "scan messages", &r);
  while (rc == 0 && (rc = store__range_next(&r)) > 0) {
    store_message m;
    if (r.key.mv_size != prefix.n + 8 || store_message_decode(&r.val, &m)) {
      rc = store__corrupt(t, "message");
      break;
    }
    m.seq = store__get64((const unsigned char *)r.key.mv_data + prefix.n);
    rc = fn(&m, arg);
  }
  store__range_close(&r);
  return rc > 0 ? AG_OK : rc;
}

int store_message_last_seq(store_txn *t, const char *chat_id, uint64_t *out) {
  store__key prefix;
  MDB_val key, val;
  *out = 0;
  int rc = store__chat_agent_key(t, &prefix, chat_id, NULL, 0);
  if (rc) return rc;
  rc = store__last_in_range(t, t->s->messages, &prefix, 8, &key, &val);
  if (rc == AG_ERR_NOT_FOUND) return AG_OK;
  if (rc) return rc;
  *out = store__get64((const unsigned char *)key.mv_data + prefix.n);
  return AG_OK;
}
