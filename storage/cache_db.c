/* The response cache's LMDB environment (see cache_db.h): one per directory per process, by reference
 * count; every value is 8 bytes of its store time (ms, big-endian) and then the reply. */
#include "storage/cache_db.h"
#include "storage/store_int.h"

#include <errno.h>
#include <limits.h>
#include <lmdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CACHE_DB_MAP (4ull << 30) /* address space only: the file grows with what is stored */
#define CACHE_DB_STAMP 8

struct cache_db {
  MDB_env *env;
  MDB_dbi dbi;
  MDB_txn *rtxn; /* a read transaction kept reset between gets (renewing one is cheaper than a new one) */
  char *dir;
  int refs;
  cache_db *next;
};

static cache_db *open_dbs; /* this process's environments: LMDB allows one per directory per process */

static int env_open(cache_db *db, ag_errmsg *em) {
  MDB_txn *txn = NULL;
  int rc = store__env_create(db->dir, MDB_NOTLS | MDB_NOMETASYNC, CACHE_DB_MAP, &db->env);
  if (!rc) rc = mdb_txn_begin(db->env, NULL, 0, &txn);
  if (!rc) rc = mdb_dbi_open(txn, NULL, 0, &db->dbi);
  if (!rc) rc = mdb_txn_commit(txn);
  else if (txn) mdb_txn_abort(txn);
  if (rc) return ag_fail(em, AG_ERR_STORAGE, "%s: the LLM cache cannot be opened: %s", db->dir, mdb_strerror(rc));
  return AG_OK;
}

int cache_db_open(const char *dir, cache_db **out, ag_errmsg *em) {
  char real[PATH_MAX];
  *out = NULL;
  int rc = store_mkdir_p(dir, em);
  if (rc) return rc;
  if (!realpath(dir, real)) return ag_fail(em, AG_ERR_IO, "%s: %s", dir, strerror(errno));
  for (cache_db *d = open_dbs; d; d = d->next)
    if (!strcmp(d->dir, real)) {
      d->refs++;
      *out = d;
      return AG_OK;
    }
  cache_db *db = calloc(1, sizeof *db);
  if (!db || !(db->dir = strdup(real))) {
    free(db);
    return AG_ERR_NOMEM;
  }
  if ((rc = env_open(db, em))) {
    if (db->env) mdb_env_close(db->env); /* opened, but its main database was not */
    free(db->dir);
    free(db);
    return rc;
  }
  db->refs = 1;
  db->next = open_dbs;
  open_dbs = db;
  *out = db;
  return AG_OK;
}

void cache_db_close(cache_db *db) {
  if (!db || --db->refs > 0) return;
  for (cache_db **p = &open_dbs; *p; p = &(*p)->next)
    if (*p == db) {
      *p = db->next;
      break;
    }
  if (db->rtxn) mdb_txn_abort(db->rtxn);
  mdb_env_close(db->env);
  free(db->dir);
  free(db);
}

static int64_t stamp_of(const MDB_val *v) {
  const unsigned char *p = v->mv_data;
  uint64_t t = 0;
  for (int i = 0; i < CACHE_DB_STAMP; i++) t = t << 8 | p[i];
  return (int64_t)t;
}

int cache_db_get(cache_db *db, const uint8_t key[CACHE_DB_KEY_LEN], char **val, size_t *len) {
  MDB_val k = {CACHE_DB_KEY_LEN, (void *)key}, v;
  int rc = db->rtxn ? mdb_txn_renew(db->rtxn) : mdb_txn_begin(db->env, NULL, MDB_RDONLY, &db->rtxn);
  if (rc) return AG_ERR_STORAGE;
  MDB_txn *txn = db->rtxn;
  rc = mdb_get(txn, db->dbi, &k, &v);
  int err = rc == MDB_NOTFOUND ? AG_ERR_NOT_FOUND : rc ? AG_ERR_STORAGE : AG_OK;
  if (!err && v.mv_size < CACHE_DB_STAMP) err = AG_ERR_NOT_FOUND; /* not ours: treated as absent */
  if (!err) { /* LMDB's value dies with the transaction: copied out */
    *len = v.mv_size - CACHE_DB_STAMP;
    if (!(*val = malloc(*len + 1))) err = AG_ERR_NOMEM;
    else {
      memcpy(*val, (const char *)v.mv_data + CACHE_DB_STAMP, *len);
      (*val)[*len] = '\0';
    }
  }
  mdb_txn_reset(txn);
  return err;
}

int cache_db_put_many(cache_db *db, const cache_db_item *items, size_t n, int64_t now_ms) {
  for (size_t i = 0; i < n; i++)
    if (items[i].len > CACHE_DB_VALUE_MAX) return AG_ERR_TOO_BIG;
  MDB_txn *txn;
  if (mdb_txn_begin(db->env, NULL, 0, &txn)) return AG_ERR_STORAGE;
  int rc = 0;
  for (size_t i = 0; !rc && i < n; i++) {
    MDB_val k = {CACHE_DB_KEY_LEN, (void *)items[i].key}, v = {items[i].len + CACHE_DB_STAMP, NULL};
    if ((rc = mdb_put(txn, db->dbi, &k, &v, MDB_RESERVE))) break;
    unsigned char *p = v.mv_data;
    int64_t t = now_ms;
    for (int b = CACHE_DB_STAMP - 1; b >= 0; b--, t >>= 8) p[b] = (unsigned char)(t & 0xff);
    memcpy(p + CACHE_DB_STAMP, items[i].val, items[i].len);
  }
  if (!rc) rc = mdb_txn_commit(txn);
  else mdb_txn_abort(txn);
  return rc ? AG_ERR_STORAGE : AG_OK;
}

int cache_db_put(cache_db *db, const uint8_t key[CACHE_DB_KEY_LEN], const char *val, size_t len, int64_t now_ms) {
  cache_db_item item = {.key = key, .val = val, .len = len};
  return cache_db_put_many(db, &item, 1, now_ms);
}

int cache_db_stat(cache_db *db, cache_db_stats *out) {
  MDB_txn *txn;
  MDB_cursor *cur = NULL;
  MDB_val k, v;
  *out = (cache_db_stats){0};
  if (mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn)) return AG_ERR_STORAGE;
  int rc = mdb_cursor_open(txn, db->dbi, &cur);
  for (int op = MDB_FIRST; !rc && !(rc = mdb_cursor_get(cur, &k, &v, op)); op = MDB_NEXT) {
    if (v.mv_size < CACHE_DB_STAMP) continue;
    int64_t t = stamp_of(&v);
    out->entries++;
    out->bytes += v.mv_size - CACHE_DB_STAMP;
    if (!out->oldest_ms || t < out->oldest_ms) out->oldest_ms = t;
    if (t > out->newest_ms) out->newest_ms = t;
  }
  if (rc != MDB_NOTFOUND) out->entries = 0;
  if (cur) mdb_cursor_close(cur); /* a read-only transaction's cursor is closed by hand */
  mdb_txn_abort(txn);
  return rc == MDB_NOTFOUND ? AG_OK : AG_ERR_STORAGE;
}

int cache_db_clear(cache_db *db, int64_t before_ms, size_t *removed) {
  MDB_txn *txn;
  MDB_cursor *cur;
  MDB_val k, v;
  size_t n = 0;
  if (removed) *removed = 0;
  if (mdb_txn_begin(db->env, NULL, 0, &txn)) return AG_ERR_STORAGE;
  int rc = mdb_cursor_open(txn, db->dbi, &cur);
  if (rc) {
    mdb_txn_abort(txn);
    return AG_ERR_STORAGE;
  }
  /* After mdb_cursor_del the cursor already stands on the next entry, and LMDB's MDB_NEXT then reads that
   * one rather than moving past it. */
  for (int op = MDB_FIRST; !rc && !(rc = mdb_cursor_get(cur, &k, &v, op)); op = MDB_NEXT) {
    if (v.mv_size >= CACHE_DB_STAMP && stamp_of(&v) >= before_ms) continue;
    if ((rc = mdb_cursor_del(cur, 0))) break;
    n++;
  }
  mdb_cursor_close(cur);
  if (rc == MDB_NOTFOUND) rc = mdb_txn_commit(txn);
  else mdb_txn_abort(txn);
  if (!rc && removed) *removed = n;
  return rc ? AG_ERR_STORAGE : AG_OK;
}
