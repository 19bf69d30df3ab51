/* The LLM response cache's database (issue 25 §3): its own LMDB environment in a directory (by default
 * DB/llm-cache beside the chats, or --cache-db DIR), keyed by the 32-byte SHA-256 of a canonical request,
 * each value the stored reply prefixed with the time it was stored. Several processes may share one
 * directory (LMDB's own locking); within a process one directory is opened once and shared by reference
 * count, because LMDB forbids opening an environment twice in one process.
 *
 * Entries are never secret-bearing by construction: the key is a hash of the request without its headers
 * (no API key), the value is the model's reply. Commits do not wait for the metadata page to reach the
 * disk (MDB_NOMETASYNC): a system crash may lose the last entries, never corrupt the older ones. */
#ifndef AG_STORAGE_CACHE_DB_H
#define AG_STORAGE_CACHE_DB_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define CACHE_DB_KEY_LEN 32
#define CACHE_DB_VALUE_MAX (8u << 20) /* one reply with its tool calls; bigger ones are not cached */

typedef struct cache_db cache_db;

/* Opens (creating it, 0700) dir, or takes another reference to it when this process has it open.
 * AG_ERR_IO / AG_ERR_STORAGE with em naming the directory. */
int cache_db_open(const char *dir, cache_db **out, ag_errmsg *em);
/* Drops a reference; the environment closes with the last. NULL: nothing. */
void cache_db_close(cache_db *db);

/* The value stored under key, copied into a malloc'd buffer (*val, caller frees; NUL-terminated beyond
 * *len). AG_ERR_NOT_FOUND when there is none. */
int cache_db_get(cache_db *db, const uint8_t key[CACHE_DB_KEY_LEN], char **val, size_t *len);
/* Stores val under key with the time now_ms (replacing an older entry). AG_ERR_TOO_BIG past the cap. */
int cache_db_put(cache_db *db, const uint8_t key[CACHE_DB_KEY_LEN], const char *val, size_t len, int64_t now_ms);
/* One entry of cache_db_put_many; all borrowed. */
typedef struct cache_db_item {
  const uint8_t *key; /* CACHE_DB_KEY_LEN bytes */
  const char *val;
  size_t len;
} cache_db_item;
/* Stores the n items in one transaction (one commit, one sync: a hosted embedder's batch of vectors), all
 * or none. AG_ERR_TOO_BIG when one is past the cap (nothing stored). */
int cache_db_put_many(cache_db *db, const cache_db_item *items, size_t n, int64_t now_ms);

typedef struct cache_db_stats {
  size_t entries;
  uint64_t bytes;            /* the values' bytes */
  int64_t oldest_ms, newest_ms; /* 0 when empty */
} cache_db_stats;
int cache_db_stat(cache_db *db, cache_db_stats *out);
/* Removes the entries stored before before_ms (INT64_MAX: all); *removed (may be NULL) counts them. */
int cache_db_clear(cache_db *db, int64_t before_ms, size_t *removed);

#endif
