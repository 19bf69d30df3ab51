/* The storage environment: opening a data directory (creation, file modes, schema version, stale
 * readers), running callbacks inside LMDB transactions with map growth on MDB_MAP_FULL, the default data
 * directory and chat ids. Record operations are in the other store_*.c files (list in store_int.h). */
#include "storage/store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define STORE_DEFAULT_MAP ((size_t)64 << 20)
/* Doubling stops here: far beyond any chat history, and it keeps a runaway writer from eating the disk. */
#define STORE_MAP_LIMIT ((size_t)1 << (sizeof(size_t) > 4 ? 40 : 30))

int store__lmdb(store_txn *t, int rc, const char *what) {
  if (rc == MDB_NOTFOUND) return ag_fail(t->em, AG_ERR_NOT_FOUND, "%s: not found", what);
  if (rc == MDB_KEYEXIST) return ag_fail(t->em, AG_ERR_EXISTS, "%s: already exists", what);
  t->failed = 1;
  if (rc == MDB_MAP_FULL) t->map_full = 1;
  return ag_fail(t->em, AG_ERR_STORAGE, "%s: %s: %s", t->s->dir, what, mdb_strerror(rc));
}

int store__writable(store_txn *t) {
  if (t->rdonly) return ag_fail(t->em, AG_ERR_STATE, "write operation inside store_read");
  return AG_OK;
}

int store__check_len(store_txn *t, const char *what, const char *s, size_t cap, size_t *len) {
  /* strnlen bounds the work on a huge input: we only need to know it is past the cap. */
  size_t n = s ? strnlen(s, cap + 1) : 0;
  if (n > cap) return ag_fail(t->em, AG_ERR_TOO_BIG, "%s is longer than %zu bytes", what, cap);
  if (len) *len = n;
  return AG_OK;
}

int store__check_id(store_txn *t, const char *what, const char *id) {
  size_t n = 0;
  int rc = store__check_len(t, what, id, STORE_ID_LEN, &n);
  if (rc) return rc;
  if (n == 0) return ag_fail(t->em, AG_ERR_INVALID, "%s is empty", what);
  return AG_OK;
}

int store__corrupt(store_txn *t, const char *what) {
  t->failed = 1;
  return ag_fail(t->em, AG_ERR_STORAGE, "%s: corrupt %s record", t->s->dir, what);
}

/* ---- Opening ------------------------------------------------------------------------------------ */

/* mkdir -p: every missing component is created private (0700), as XDG asks of its data directory. */
int store_mkdir_p(const char *dir, ag_errmsg *em) {
  char path[PATH_MAX];
  size_t n = strlen(dir);
  if (n >= sizeof path) return ag_fail(em, AG_ERR_TOO_BIG, "%s: path too long", dir);
  memcpy(path, dir, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (path[i] != '/' && path[i] != '\0') continue;
    char c = path[i];
    path[i] = '\0';
    if (mkdir(path, 0700) != 0 && errno != EEXIST)
      return ag_fail(em, AG_ERR_IO, "%s: cannot create directory: %s", path, strerror(errno));
    path[i] = c;
  }
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return ag_fail(em, AG_ERR_INVALID, "%s: not a directory", dir);
  return AG_OK;
}

typedef struct store_schema_arg {
  store *s;
  MDB_dbi dbi[9];
} store_schema_arg;

static const char *const store_db_names[9] = {"meta",     "worlds",   "chats",       "chat_index", "messages",
                                              "memories", "agent_state", "contexts", "thread"};

/* Checks the schema version and opens the named databases. Run first in a read transaction, so that
 * opening an existing database never waits for another process's writer; when something is missing it
 * returns AG_ERR_NOT_FOUND and runs again in a write transaction that creates it. A newer version is
 * refused before anything is written. */
static int store_schema(store_txn *t, void *argp) {
  store_schema_arg *a = argp;
  MDB_dbi main_dbi;
  MDB_val key = {14, (void *)"schema_version"}, val;
  char text[16];
  int rc = mdb_dbi_open(t->txn, "meta", 0, &a->dbi[0]);
  if (rc == MDB_NOTFOUND && t->rdonly) return AG_ERR_NOT_FOUND;
  if (rc == MDB_NOTFOUND) {
    /* No meta database: a new environment, unless LMDB's main database already holds something. */
    MDB_stat st;
    rc = mdb_dbi_open(t->txn, NULL, 0, &main_dbi);
    if (!rc) rc = mdb_stat(t->txn, main_dbi, &st);
    if (rc) return store__lmdb(t, rc, "open");
    if (st.ms_entries > 0)
      return ag_fail(t->em, AG_ERR_INVALID, "%s holds an LMDB database that is not Agora's", t->s->dir);
    rc = mdb_dbi_open(t->txn, "meta", MDB_CREATE, &a->dbi[0]);
    if (rc) return store__lmdb(t, rc, "create meta");
    int n = snprintf(text, sizeof text, "%d", STORE_SCHEMA_VERSION);
    val.mv_size = (size_t)n;
    val.mv_data = text;
    rc = mdb_put(t->txn, a->dbi[0], &key, &val, 0);
    if (rc) return store__lmdb(t, rc, "write schema version");
  } else if (rc) {
    return store__lmdb(t, rc, "open meta");
  } else {
    rc = mdb_get(t->txn, a->dbi[0], &key, &val);
    if (rc == MDB_NOTFOUND)
      return ag_fail(t->em, AG_ERR_INVALID, "%s: database has no schema version", t->s->dir);
    if (rc) return store__lmdb(t, rc, "read schema version");
    long version = 0;
    int ok = val.mv_size > 0 && val.mv_size < sizeof text;
    for (size_t i = 0; ok && i < val.mv_size; i++) {
      char c = ((const char *)val.mv_data)[i];
      ok = c >= '0' && c <= '9' && version < 100000000;
      version = version * 10 + (c - '0');
    }
    if (!ok) return ag_fail(t->em, AG_ERR_INVALID, "%s: unreadable schema version", t->s->dir);
    if (version > STORE_SCHEMA_VERSION)
      return ag_fail(t->em, AG_ERR_VERSION,
                     "%s: database schema version %ld was written by a newer Agora; this one reads up to "
                     "version %d",
                     t->s->dir, version, STORE_SCHEMA_VERSION);
    /* Older versions would be migrated here; version 1 is the first. */
  }
  for (int i = 1; i < 9; i++) {
    rc = mdb_dbi_open(t->txn, store_db_names[i], t->rdonly ? 0 : MDB_CREATE, &a->dbi[i]);
    if (rc == MDB_NOTFOUND && t->rdonly) return AG_ERR_NOT_FOUND;
    if (rc) return store__lmdb(t, rc, store_db_names[i]);
  }
  return AG_OK;
}

static int store_open_mode(const char *dir, const store_options *opt, int read_only, store **out, ag_errmsg *em);

int store_open(const char *dir, store **out, ag_errmsg *em) { return store_open_ex(dir, NULL, out, em); }

int store_open_ex(const char *dir, const store_options *opt, store **out, ag_errmsg *em) {
  return store_open_mode(dir, opt, 0, out, em);
}

int store_open_read(const char *dir, store **out, ag_errmsg *em) { return store_open_mode(dir, NULL, 1, out, em); }

static int store_open_mode(const char *dir, const store_options *opt, int read_only, store **out, ag_errmsg *em) {
  store_options defaults = {0};
  store *s = NULL;
  int rc;
  *out = NULL;
  if (!opt) opt = &defaults;
  if (!dir || !*dir) return ag_fail(em, AG_ERR_INVALID, "no data directory");
  int exists = 0;
  rc = read_only ? store__check_dir(dir, em) : store_mkdir_p(dir, em);
  if (!rc) rc = store__check_data(dir, read_only, &exists, em);
  if (!rc && read_only && !exists)
    rc = ag_fail(em, AG_ERR_NOT_FOUND, "%s: no database there yet (nothing has been saved)", dir);
  if (rc) goto fail;
  s = calloc(1, sizeof *s);
  if (!s || !(s->dir = strdup(dir))) {
    rc = ag_fail(em, AG_ERR_NOMEM, "out of memory");
    goto fail;
  }
  unsigned flags = MDB_NOTLS; /* read transactions are not tied to a thread's TLS slot */
  if (opt->sync == STORE_SYNC_NOMETA) flags |= MDB_NOMETASYNC;
  if (opt->sync == STORE_SYNC_NONE || opt->sync == STORE_SYNC_BACKGROUND) flags |= MDB_NOSYNC;
  if (opt->write_map) flags |= MDB_WRITEMAP;
  if (read_only) flags |= MDB_RDONLY;
  rc = store__env_open(s, flags, opt->map_size, em);
  if (rc) goto fail;
  int mrc = 0;
  if (!opt->map_size && store_map_size(s) < STORE_DEFAULT_MAP) mrc = mdb_env_set_mapsize(s->env, STORE_DEFAULT_MAP);
  if (mrc) {
    rc = ag_fail(em, AG_ERR_STORAGE, "%s: %s", dir, mdb_strerror(mrc));
    goto fail;
  }
  store_schema_arg a = {.s = s};
  rc = store_read(s, store_schema, &a, em);
  if (rc == AG_ERR_NOT_FOUND && read_only)
    rc = ag_fail(em, AG_ERR_NOT_FOUND, "%s: the database is not complete yet (open it once with a command that saves)",
                 dir);
  else if (rc == AG_ERR_NOT_FOUND) rc = store_write(s, store_schema, &a, em);
  if (rc) goto fail;
  s->meta = a.dbi[0];
  s->worlds = a.dbi[1];
  s->chats = a.dbi[2];
  s->index = a.dbi[3];
  s->messages = a.dbi[4];
  s->memories = a.dbi[5];
  s->states = a.dbi[6];
  s->contexts = a.dbi[7];
  s->thread = a.dbi[8];
  if (opt->sync == STORE_SYNC_BACKGROUND && !read_only && (rc = store__syncer_start(s, em))) goto fail;
  *out = s;
  return AG_OK;
fail:
  store_close(s);
  return rc;
}

void store_close(store *s) {
  if (!s) return;
  store__syncer_stop(s);
  if (s->env) mdb_env_close(s->env);
  free(s->dir);
  free(s);
}

int store_set_durable(store *s, int durable, ag_errmsg *em) {
  int rc = mdb_env_set_flags(s->env, MDB_NOSYNC, durable ? 0 : 1);
  if (!rc && durable) rc = mdb_env_set_flags(s->env, MDB_NOMETASYNC, 0);
  if (rc) return ag_fail(em, AG_ERR_STORAGE, "%s: %s", s->dir, mdb_strerror(rc));
  return AG_OK;
}

int store_set_background(store *s, ag_errmsg *em) {
  if (s->bg) return AG_OK;
  unsigned flags = 0;
  int rc = mdb_env_get_flags(s->env, &flags);
  if (!rc && (flags & MDB_RDONLY)) return ag_fail(em, AG_ERR_STATE, "%s: opened read-only: nothing to sync", s->dir);
  if (!rc) rc = mdb_env_set_flags(s->env, MDB_NOSYNC, 1);
  if (rc) return ag_fail(em, AG_ERR_STORAGE, "%s: %s", s->dir, mdb_strerror(rc));
  if ((rc = store__syncer_start(s, em))) mdb_env_set_flags(s->env, MDB_NOSYNC, 0);
  return rc;
}

int store_sync_now(store *s, ag_errmsg *em) {
  int rc = mdb_env_sync(s->env, 1);
  if (rc) return ag_fail(em, AG_ERR_STORAGE, "%s: sync: %s", s->dir, mdb_strerror(rc));
  return AG_OK;
}

const char *store_dir(const store *s) { return s->dir; }

size_t store_map_size(const store *s) {
  MDB_envinfo info;
  if (mdb_env_info(s->env, &info)) return 0;
  return info.me_mapsize;
}

/* ---- Transactions ------------------------------------------------------------------------------- */

/* Begins a transaction; when another process grew the map, adopts its size and tries again. */
static int store_begin(store *s, unsigned flags, MDB_txn **txn, ag_errmsg *em) {
  int rc = mdb_txn_begin(s->env, NULL, flags, txn);
  if (rc == MDB_MAP_RESIZED) {
    rc = mdb_env_set_mapsize(s->env, 0);
    if (!rc) rc = mdb_txn_begin(s->env, NULL, flags, txn);
  }
  if (rc) return ag_fail(em, AG_ERR_STORAGE, "%s: cannot begin transaction: %s", s->dir, mdb_strerror(rc));
  return AG_OK;
}

/* Doubles the map. Only called with no transaction open in this process, as LMDB requires. */
static int store_grow(store *s, ag_errmsg *em) {
  size_t cur = store_map_size(s);
  if (cur >= STORE_MAP_LIMIT)
    return ag_fail(em, AG_ERR_STORAGE, "%s: database is full (%zu MiB)", s->dir, cur >> 20);
  int rc = mdb_env_set_mapsize(s->env, cur * 2);
  if (rc) return ag_fail(em, AG_ERR_STORAGE, "%s: cannot grow the map: %s", s->dir, mdb_strerror(rc));
  return AG_OK;
}

int store_write(store *s, store_txn_fn fn, void *arg, ag_errmsg *em) {
  if (s->busy) return ag_fail(em, AG_ERR_STATE, "store_write called inside a transaction");
  for (;;) {
    store_txn t = {.s = s, .em = em};
    int rc = store_begin(s, 0, &t.txn, em);
    if (rc) return rc;
    if (em) em->text[0] = '\0';
    s->busy = 1;
    rc = fn(&t, arg);
    s->busy = 0;
    if (t.map_full) {
      mdb_txn_abort(t.txn);
      rc = store_grow(s, em);
      if (rc) return rc;
      continue;
    }
    if (rc || t.failed) {
      mdb_txn_abort(t.txn);
      /* fn may have swallowed the failing operation's code; the transaction is still unusable. */
      return rc ? rc : ag_fail(em, AG_ERR_STORAGE, "%s: a write failed inside the transaction", s->dir);
    }
    int mrc = mdb_txn_commit(t.txn); /* frees the transaction, even on failure */
    if (mrc == MDB_MAP_FULL) {
      rc = store_grow(s, em);
      if (rc) return rc;
      continue;
    }
    if (mrc) return ag_fail(em, AG_ERR_STORAGE, "%s: commit: %s", s->dir, store__strerror(s, mrc));
    store__syncer_committed(s);
    return AG_OK;
  }
}

const char *store__strerror(const store *s, int rc) {
  struct statvfs fs;
  /* Less than 64 pages free: a write that came up short did so for want of space. */
  if ((rc == EIO || rc == ENOSPC) && !statvfs(s->dir, &fs) && (uint64_t)fs.f_bavail * fs.f_frsize < 64u * 4096u)
    return strerror(ENOSPC);
  return mdb_strerror(rc);
}

int store_read(store *s, store_txn_fn fn, void *arg, ag_errmsg *em) {
  if (s->busy) return ag_fail(em, AG_ERR_STATE, "store_read called inside a transaction");
  store_txn t = {.s = s, .rdonly = 1, .em = em};
  int rc = store_begin(s, MDB_RDONLY, &t.txn, em);
  if (rc) return rc;
  s->busy = 1;
  rc = fn(&t, arg);
  s->busy = 0;
  /* Committing a read-only transaction just ends it, but keeps database handles it opened (which
   * store_open relies on); aborting would close them. */
  int mrc = mdb_txn_commit(t.txn);
  if (!rc && mrc) rc = ag_fail(em, AG_ERR_STORAGE, "%s: end of read: %s", s->dir, mdb_strerror(mrc));
  return rc;
}

/* ---- Default directory and ids ------------------------------------------------------------------ */

static int store_path_join(char *out, size_t cap, const char *base, const char *rest) {
  int n = snprintf(out, cap, "%s%s", base, rest);
  return n < 0 || (size_t)n >= cap ? AG_ERR_TOO_BIG : AG_OK;
}

int store_default_dir(char *out, size_t cap) {
  const char *v = getenv("AGORA_HOME");
  if (v && *v) return store_path_join(out, cap, v, "");
  v = getenv("XDG_DATA_HOME");
  /* The XDG spec says a relative value is invalid and must be ignored. */
  if (v && v[0] == '/') return store_path_join(out, cap, v, "/agora");
  v = getenv("HOME");
  if (!v || !*v) {
    struct passwd *pw = getpwuid(getuid());
    v = pw ? pw->pw_dir : NULL;
  }
  if (!v || !*v) return AG_ERR_NOT_FOUND;
  return store_path_join(out, cap, v, "/.local/share/agora");
}

/* The last id handed out, as its 64-bit value: the next one is at least one more, so ids from one
 * process are strictly increasing even within a millisecond. */
static _Atomic uint64_t store_last_id;

void store_chat_id_new(char out[STORE_ID_MAX]) {
  static const char alphabet[] = "0123456789abcdefghjkmnpqrstvwxyz"; /* Crockford: no i, l, o, u */
  struct timespec ts;
  uint16_t rnd = 0;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t ms = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
  if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd)
    rnd = (uint16_t)(ts.tv_nsec ^ getpid()); /* the time part still makes it unique enough */
  uint64_t v = (ms & 0xFFFFFFFFFFFFull) << 16 | rnd;
  uint64_t last = atomic_load(&store_last_id);
  uint64_t next;
  do {
    next = v > last ? v : last + 1;
  } while (!atomic_compare_exchange_weak(&store_last_id, &last, next));
  /* 64 bits in 13 digits: 4 bits, then 12 groups of 5, most significant first so ids sort by time. */
  for (int i = 12; i >= 0; i--, next >>= 5) out[i] = alphabet[next & 31];
  out[13] = '\0';
}
