/* Internals shared by the storage files: the handle, key building, record coding, key ranges and LMDB
 * error mapping. Not for use outside storage/. The files: store.c (environment and transactions),
 * store_range.c (key ranges), store_chat.c (worlds, chats and the chat index), store_message.c,
 * store_memory.c, store_agent_state.c, store_context.c and store_thread.c (a chat's records),
 * store_sync.c (background sync). */
#ifndef AG_STORE_INT_H
#define AG_STORE_INT_H

#include <lmdb.h>
#include <stdint.h>
#include <string.h>

#include "storage/store.h"

typedef struct store_syncer store_syncer;

struct store {
  MDB_env *env;
  store_syncer *bg;  /* STORE_SYNC_BACKGROUND's thread (store_sync.c); NULL in the other modes */
  uint64_t commits;  /* store_writes committed through this handle */
  char *dir;       /* owned copy of the directory, for messages */
  int busy;        /* a transaction callback is running: refuse nesting */
  MDB_dbi meta;    /* "schema_version" → decimal text */
  MDB_dbi worlds;  /* world id → world record */
  MDB_dbi chats;   /* chat id → chat record */
  MDB_dbi index;   /* world id \0 inv(updated) chat id → "" ; and \0 inv(updated) chat id for all worlds */
  MDB_dbi messages;/* chat id \0 be64(seq) → message record */
  MDB_dbi memories;/* chat id \0 agent id \0 be32(index) → be64(seq) */
  MDB_dbi states;  /* chat id \0 agent id → agent state record */
  MDB_dbi contexts;/* chat id \0 agent id → be64 version, be64 updated_at, data JSON text */
  MDB_dbi thread;  /* chat id \0 be64(n) → event JSON text: the chat's tool steps, in order */
};

struct store_txn {
  store *s;
  MDB_txn *txn;
  int rdonly;
  int map_full;    /* an operation hit MDB_MAP_FULL: store_write grows the map and runs fn again */
  int failed;      /* an LMDB call failed: the transaction can only be aborted */
  ag_errmsg *em;   /* where operations write their detail; may be NULL */
};

/* Opening (store_check.c). store__check_dir: dir, if it exists, is a directory. store__check_data: dir/data.mdb, if present, is an LMDB file whose meta pages agree
 * with its size (AG_ERR_INVALID, file untouched, otherwise); *exists = it holds a database. A file left
 * by a creation killed half-way is emptied unless read_only. store__env_open: s->env opened on s->dir. */
int store__check_dir(const char *dir, ag_errmsg *em);
int store__check_data(const char *dir, int read_only, int *exists, ag_errmsg *em);
int store__env_open(store *s, unsigned flags, size_t map_size, ag_errmsg *em);
/* The LMDB environment every store of this folder opens (the chats' and the LLM cache's): up to 16 named
 * databases, a map of map_size bytes (0: the size the file was last grown to), dir opened with flags
 * (mode 0600), then the reader slots of killed processes freed (they pin old pages). 0 or LMDB's code;
 * on failure *out is NULL (a handle LMDB could not open is closed). */
int store__env_create(const char *dir, unsigned flags, size_t map_size, MDB_env **out);

/* Background sync (store_sync.c): start the thread; stop it (syncing what is left); count a commit. */
int store__syncer_start(store *s, ag_errmsg *em);
void store__syncer_stop(store *s);
void store__syncer_committed(store *s);
/* mdb_strerror(rc), except that a failed write on a file system with no space left says so: LMDB turns a
 * short write (what a full disk gives) into EIO, which would read as a broken disk. */
const char *store__strerror(const store *s, int rc);

/* Longest key: chat id \0 agent id \0 be32, or world id \0 be64 chat id. Well under LMDB's 511. */
#define STORE__KEY_MAX (2 * STORE_ID_LEN + 16)

typedef struct store__key {
  unsigned char b[STORE__KEY_MAX];
  size_t n;
} store__key;

static inline void store__be64(unsigned char *p, uint64_t v) {
  for (int i = 7; i >= 0; i--, v >>= 8) p[i] = (unsigned char)v;
}
static inline uint64_t store__get64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = v << 8 | p[i];
  return v;
}
static inline void store__be32(unsigned char *p, uint32_t v) {
  for (int i = 3; i >= 0; i--, v >>= 8) p[i] = (unsigned char)v;
}
static inline uint32_t store__get32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Key building: callers validated lengths first, so these never overflow STORE__KEY_MAX. */
static inline void store__key_bytes(store__key *k, const void *p, size_t n) {
  memcpy(k->b + k->n, p, n);
  k->n += n;
}
/* A string followed by its '\0' separator: ids cannot contain '\0', so "a\0" is never a prefix of "ab\0". */
static inline void store__key_str(store__key *k, const char *s) {
  store__key_bytes(k, s, strlen(s) + 1);
}
static inline void store__key_u64(store__key *k, uint64_t v) {
  store__be64(k->b + k->n, v);
  k->n += 8;
}
static inline MDB_val store__val(const store__key *k) {
  MDB_val v = {k->n, (void *)k->b};
  return v;
}
static inline int store__has_prefix(const MDB_val *key, const store__key *prefix) {
  return key->mv_size >= prefix->n && memcmp(key->mv_data, prefix->b, prefix->n) == 0;
}

/* Record strings: be32 length, the bytes, '\0' — the NUL lets scans hand out pointers into the map. */
static inline size_t store__str_size(size_t len) { return 4 + len + 1; }
static inline unsigned char *store__put_str(unsigned char *p, const char *s, size_t len) {
  store__be32(p, (uint32_t)len);
  if (len) memcpy(p + 4, s, len);
  p[4 + len] = '\0';
  return p + 4 + len + 1;
}
/* Reads a string at *p (< end); 0 on success, -1 when the record is malformed. */
static inline int store__get_str(const unsigned char **p, const unsigned char *end, const char **s,
                                 size_t *len) {
  if (end - *p < 5) return -1;
  uint32_t n = store__get32(*p);
  if ((size_t)(end - *p) - 5 < n || (*p)[4 + n] != '\0') return -1;
  *s = (const char *)*p + 4;
  if (len) *len = n;
  *p += 4 + (size_t)n + 1;
  return 0;
}

/* Maps an LMDB result: MDB_NOTFOUND → AG_ERR_NOT_FOUND, MDB_KEYEXIST → AG_ERR_EXISTS (neither harms the
 * transaction); anything else → AG_ERR_STORAGE and marks t failed (MDB_MAP_FULL also marks map_full).
 * Writes "<dir>: <what>: <lmdb message>" into t->em. */
int store__lmdb(store_txn *t, int rc, const char *what);
/* AG_ERR_STATE with a message when t is read-only. */
int store__writable(store_txn *t);
/* Validates an id: non-empty (AG_ERR_INVALID) and ≤ STORE_ID_LEN (AG_ERR_TOO_BIG). what names it. */
int store__check_id(store_txn *t, const char *what, const char *id);
/* Validates a string against a cap (NULL counts as ""); writes its length into *len. */
int store__check_len(store_txn *t, const char *what, const char *s, size_t cap, size_t *len);
/* AG_ERR_STORAGE for a record that does not decode. */
int store__corrupt(store_txn *t, const char *what);
/* AG_ERR_NOT_FOUND (with a message) unless chat id exists. */
int store__chat_exists(store_txn *t, const char *chat_id);
/* AG_ERR_NOT_FOUND (with a message) unless chat_id (validated) has message seq. */
int store__message_exists(store_txn *t, const char *chat_id, uint64_t seq);

/* ---- Key ranges (store_range.c) ---------------------------------------------------------------- */

/* chat id \0, then agent id when not NULL, followed by '\0' when terminated: a chat's range, an agent's
 * range (terminated: memories) or an agent's one key (not terminated: the agent id is the rest of the
 * key, as for states and contexts). Validates both ids (AG_ERR_INVALID / AG_ERR_TOO_BIG). */
int store__chat_agent_key(store_txn *t, store__key *k, const char *chat_id, const char *agent_id, int terminated);
/* Copies what follows the first prefix_len bytes of key into out as an id; -1 when that is empty or
 * longer than STORE_ID_LEN (a corrupt key). */
int store__key_rest_id(const MDB_val *key, size_t prefix_len, char out[STORE_ID_MAX]);

/* A forward scan over the keys of one database that start with a prefix:
 *
 *   store__range r;
 *   int rc = store__range_open(t, dbi, &prefix, NULL, "scan things", &r);
 *   while (rc == 0 && (rc = store__range_next(&r)) > 0) rc = use(r.key, r.val);  // 0 goes on
 *   store__range_close(&r);
 *
 * key and val are borrowed from the transaction until the next step. */
typedef struct store__range {
  store_txn *t;
  MDB_cursor *cur;
  store__key prefix, start;
  const char *what;  /* names the scan in error messages */
  int started;
  MDB_val key, val;  /* the current record */
} store__range;

/* Opens a scan of chat_id's records in dbi (the keys starting with chat id \0; r->prefix.n is the
 * length of that prefix), validating chat_id first. */
int store__chat_range(store_txn *t, MDB_dbi dbi, const char *chat_id, const char *what, store__range *r);
/* Opens a scan of the keys of dbi starting with prefix (copied; may be empty: the whole database), from
 * the first key ≥ start (copied; NULL: from the prefix). AG_OK, or a storage error (the range is then
 * closed already; closing it again is fine). */
int store__range_open(store_txn *t, MDB_dbi dbi, const store__key *prefix, const store__key *start,
                      const char *what, store__range *r);
/* Steps to the next record: 1 with r->key and r->val set, 0 past the range's end, or a negative ag_err. */
int store__range_next(store__range *r);
/* store__range_next for keys chat id \0 agent id: also copies the agent id into agent; a key whose rest
 * is no id is a corrupt `what` record (AG_ERR_STORAGE). */
int store__range_next_agent(store__range *r, char agent[STORE_ID_MAX], const char *what);
void store__range_close(store__range *r);
/* Deletes every key of dbi starting with prefix (a cursor range, no full scan). */
int store__delete_prefix(store_txn *t, MDB_dbi dbi, const store__key *prefix);
/* Deletes the agent's record(s) in chat_id from dbi (absent is fine), or every agent's when agent_id is
 * NULL; terminated as for store__chat_agent_key. Fails in a read transaction. */
int store__clear_agent(store_txn *t, MDB_dbi dbi, const char *chat_id, const char *agent_id, int terminated,
                       const char *what);
/* The last key of dbi that is prefix followed by suffix_len more bytes (one cursor step):
 * AG_ERR_NOT_FOUND when there is none. */
int store__last_in_range(store_txn *t, MDB_dbi dbi, const store__key *prefix, size_t suffix_len, MDB_val *key,
                         MDB_val *val);

#endif
