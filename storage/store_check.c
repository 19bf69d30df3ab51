/* Checks a data directory's data.mdb before LMDB maps it. LMDB trusts its meta pages: a file cut short
 * makes it map pages past the end (SIGBUS on first touch), and a short file is initialised as a new,
 * empty database. Reading the two meta pages ourselves lets a damaged file be refused, untouched. */
#include "storage/store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* LMDB 0.9's on-disk meta page (mdb.c: MDB_page header, then MDB_meta), in the machine's own byte
 * order and word size, as LMDB writes it. pgno_t and txnid_t are size_t wide. */
#define CHK_MAGIC 0xBEEFC0DEu
#define CHK_DATA_VERSION 1u
#define CHK_P_META 0x08u
#define CHK_W sizeof(size_t)
#define CHK_HDR (CHK_W + 8)                    /* mp_pgno, mp_pad, mp_flags, mp_lower/upper */
#define CHK_DB (8 + 5 * CHK_W)                  /* MDB_db: pad/psize, flags, depth, 4 counts, root */
#define CHK_DBS (CHK_HDR + 8 + 2 * CHK_W)       /* mm_dbs[0] (free pages), mm_dbs[1] (main) */
#define CHK_LAST (CHK_DBS + 2 * CHK_DB)         /* mm_last_pg */
#define CHK_META_END (CHK_LAST + 2 * CHK_W)     /* after mm_txnid */
#define CHK_ROOT(db) (CHK_DBS + (db) * CHK_DB + 8 + 4 * CHK_W)
#define CHK_P_INVALID ((size_t)-1)

typedef struct chk_meta {
  size_t psize, last_pg, txnid, root[2];
} chk_meta;

static size_t chk_word(const unsigned char *p, size_t off) {
  size_t v;
  memcpy(&v, p + off, sizeof v);
  return v;
}

/* Decodes the meta page numbered pgno from p (CHK_META_END bytes). 0 when it is one. */
static int chk_meta_decode(const unsigned char *p, size_t pgno, chk_meta *m) {
  uint32_t magic, version, psize;
  uint16_t flags;
  memcpy(&flags, p + CHK_W + 2, sizeof flags);
  memcpy(&magic, p + CHK_HDR, sizeof magic);
  memcpy(&version, p + CHK_HDR + 4, sizeof version);
  memcpy(&psize, p + CHK_DBS, sizeof psize);
  if (magic != CHK_MAGIC || chk_word(p, 0) != pgno || !(flags & CHK_P_META)) return -1;
  if (version != CHK_DATA_VERSION) return -2;
  m->psize = psize;
  m->last_pg = chk_word(p, CHK_LAST);
  m->txnid = chk_word(p, CHK_LAST + CHK_W);
  m->root[0] = chk_word(p, CHK_ROOT(0));
  m->root[1] = chk_word(p, CHK_ROOT(1));
  if (psize < 512 || psize > 65536 || (psize & (psize - 1))) return -1;
  return 0;
}

/* Whether the n bytes at p can be the start of what LMDB writes when it creates a file: zeros, or meta
 * page 0 of transaction 0 as far as it got. */
static int chk_torn_prefix(const unsigned char *p, size_t n) {
  size_t i = 0;
  uint32_t magic;
  uint16_t flags;
  while (i < n && !p[i]) i++;
  if (i == n) return 1;
  if (n < CHK_META_END) return 0; /* the kernel cuts a killed write at a page boundary, not this soon */
  memcpy(&flags, p + CHK_W + 2, sizeof flags);
  memcpy(&magic, p + CHK_HDR, sizeof magic);
  if (chk_word(p, 0) != 0 || flags != CHK_P_META || magic != CHK_MAGIC) return 0;
  return chk_word(p, CHK_LAST + CHK_W) == 0;
}

/* The pages a meta page names must all be inside the file: a shorter file was cut. */
static int chk_meta_fits(const chk_meta *m, off_t size) {
  if (m->last_pg >= (size_t)size / m->psize) return 0;
  for (int i = 0; i < 2; i++)
    if (m->root[i] != CHK_P_INVALID && m->root[i] > m->last_pg) return 0;
  return 1;
}

/* Empties a data file that a process killed while LMDB created it left behind: it never held a commit.
 * Only when no live process has the environment open: LMDB holds a lock on byte 0 of lock.mdb from
 * before it touches data.mdb, so getting that lock exclusively proves nobody is creating it right now. */
static int chk_restart_torn(const char *dir, const char *data, ag_errmsg *em) {
  char lock[PATH_MAX];
  int fd, rc = AG_OK;
  if (snprintf(lock, sizeof lock, "%s/lock.mdb", dir) >= (int)sizeof lock)
    return ag_fail(em, AG_ERR_TOO_BIG, "%s: path too long", dir);
  fd = open(lock, O_RDWR | O_CLOEXEC);
  if (fd >= 0) {
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    if (fcntl(fd, F_SETLK, &fl) != 0) { /* in use: leave it to its owner */
      rc = ag_fail(em, AG_ERR_STORAGE, "%s: another process is creating this database; try again", data);
      goto done;
    }
  }
  if (truncate(data, 0) != 0) rc = ag_fail(em, AG_ERR_IO, "%s: %s", data, strerror(errno));
done:
  if (fd >= 0) close(fd); /* also drops the lock; the environment is not open yet in this process */
  return rc;
}

/* Reads meta page pgno of psize bytes at fd; the verdict as for chk_meta_decode, 1 when cut short. */
static int chk_read_meta(int fd, size_t pgno, size_t psize, chk_meta *m) {
  unsigned char p[CHK_META_END];
  ssize_t n = pread(fd, p, sizeof p, (off_t)(pgno * psize));
  if (n < 0) return -3;
  if ((size_t)n < sizeof p) return 1;
  return chk_meta_decode(p, pgno, m);
}

int store__check_data(const char *dir, int read_only, int *exists, ag_errmsg *em) {
  char data[PATH_MAX];
  struct stat st;
  chk_meta m[2] = {{0}};
  int fd = -1, rc = AG_OK, torn = 0, v;
  *exists = 0;
  if (snprintf(data, sizeof data, "%s/data.mdb", dir) >= (int)sizeof data)
    return ag_fail(em, AG_ERR_TOO_BIG, "%s: path too long", dir);
  fd = open(data, O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return AG_OK;
  if (fd < 0) return ag_fail(em, AG_ERR_INVALID, "%s: cannot read: %s", data, strerror(errno));
  /* The metas are read before the size: a writer in another process extends the file before it
   * writes a meta page that names the new pages, so this order never sees a meta ahead of the file. */
  v = chk_read_meta(fd, 0, 0, &m[0]);
  if (!v) v = chk_read_meta(fd, 1, m[0].psize, &m[1]);
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    rc = ag_fail(em, AG_ERR_INVALID, "%s: not a regular file", data);
    goto done;
  }
  *exists = st.st_size > 0;
  if (st.st_size == 0) goto done; /* created, never written: LMDB starts it */
  if (v == 1 || (v == 0 && (off_t)(2 * m[0].psize) > st.st_size)) {
    /* Shorter than the two meta pages. LMDB writes both in one go when it creates a file, each with
     * transaction 0, so a prefix of that (or zeros) is a creation killed half-way; anything else is
     * a database cut short. */
    unsigned char head[CHK_META_END] = {0};
    ssize_t n = pread(fd, head, sizeof head, 0);
    torn = n >= 0 && chk_torn_prefix(head, (size_t)n);
    if (!torn)
      rc = ag_fail(em, AG_ERR_INVALID,
                   "%s: damaged database: the file is %lld bytes, shorter than its own header (truncated?); "
                   "left as it is",
                   data, (long long)st.st_size);
    goto done;
  }
  if (v == -2) {
    rc = ag_fail(em, AG_ERR_INVALID, "%s: written by an LMDB with another data format; left as it is", data);
  } else if (v) {
    rc = ag_fail(em, AG_ERR_INVALID, "%s: not an LMDB database or its header is damaged; left as it is", data);
  } else if (m[1].psize != m[0].psize || !chk_meta_fits(&m[0], st.st_size) || !chk_meta_fits(&m[1], st.st_size)) {
    const chk_meta *cur = m[1].txnid > m[0].txnid ? &m[1] : &m[0];
    rc = ag_fail(em, AG_ERR_INVALID,
                 "%s: damaged database: its header names %zu pages of %zu bytes but the file is %lld bytes "
                 "(truncated?); left as it is",
                 data, cur->last_pg + 1, cur->psize, (long long)st.st_size);
  }
done:
  close(fd);
  if (rc || !torn) return rc;
  *exists = 0;                 /* it never held a commit */
  if (read_only) return AG_OK; /* nothing to read: the caller reports an empty database */
  return chk_restart_torn(dir, data, em);
}

int store__check_dir(const char *dir, ag_errmsg *em) {
  struct stat st;
  if (stat(dir, &st) != 0)
    return errno == ENOENT ? AG_OK : ag_fail(em, AG_ERR_INVALID, "%s: %s", dir, strerror(errno));
  if (!S_ISDIR(st.st_mode)) return ag_fail(em, AG_ERR_INVALID, "%s: not a directory", dir);
  return AG_OK;
}

int store__env_create(const char *dir, unsigned flags, size_t map_size, MDB_env **out) {
  MDB_env *env = NULL;
  int dead = 0;
  int rc = mdb_env_create(&env);
  if (!rc) rc = mdb_env_set_maxdbs(env, 16);
  /* An explicit size applies even to an existing database (LMDB keeps at least its used size);
   * otherwise the size the database was last grown to is kept (store_open raises it to the default). */
  if (!rc && map_size) rc = mdb_env_set_mapsize(env, map_size);
  if (!rc) rc = mdb_env_open(env, dir, flags, 0600);
  if (!rc) rc = mdb_reader_check(env, &dead);
  if (rc && env) {
    mdb_env_close(env); /* LMDB: a failed open leaves a handle that can only be closed */
    env = NULL;
  }
  *out = env;
  return rc;
}

static int chk_env_try(store *s, unsigned flags, size_t map_size) {
  return store__env_create(s->dir, flags, map_size, &s->env);
}

int store__env_open(store *s, unsigned flags, size_t map_size, ag_errmsg *em) {
  int rc = chk_env_try(s, flags, map_size);
  /* A reader that may not write lock.mdb (a read-only directory or files) reads without LMDB's reader
   * table: nobody who may write could be there, except another user with more rights. */
  if ((rc == EACCES || rc == EROFS) && (flags & MDB_RDONLY)) rc = chk_env_try(s, flags | MDB_NOLOCK, map_size);
  if (rc == EACCES || rc == EROFS || rc == EPERM)
    return ag_fail(em, AG_ERR_INVALID, "%s: cannot open the database%s: %s", s->dir,
                   flags & MDB_RDONLY ? "" : " for writing", strerror(rc));
  if (rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH)
    return ag_fail(em, AG_ERR_INVALID, "%s: not a usable database: %s; left as it is", s->dir, mdb_strerror(rc));
  if (rc) return ag_fail(em, AG_ERR_STORAGE, "%s: cannot open database: %s", s->dir, mdb_strerror(rc));
  return AG_OK;
}
