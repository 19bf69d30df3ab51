/* End to end through the built binary: a damaged or unusable database (truncated data.mdb, random bytes,
 * a foreign schema version, a path that is a file, a read-only directory) gives a clear error and exit
 * 2, never a crash, and leaves the file byte for byte as it was; read-only commands create nothing. */
#include "support/fixture.h"
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"

#include <fcntl.h>
#include <lmdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Runs agora with up to 8 arguments (NULL-terminated); never fails the harness itself. */
static void ag(proc_result *r, const char *a0, ...) {
  const char *args[12] = {a0};
  va_list ap;
  va_start(ap, a0);
  for (size_t n = 1; n < 11 && (args[n] = va_arg(ap, const char *)) != NULL; n++) {
  }
  va_end(ap);
  args[11] = NULL;
  if (proc_agora(args, NULL, NULL, r)) {
    unit_fail_(__FILE__, __LINE__, "cannot run agora");
    r->status = -1, r->out = strdup(""), r->err = strdup("");
  }
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *p = NULL;
  *len = 0;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0) {
    long n = ftell(f);
    rewind(f);
    p = malloc((size_t)n + 1);
    if (p && fread(p, 1, (size_t)n, f) == (size_t)n) *len = (size_t)n;
  }
  fclose(f);
  return p;
}

static void spill(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  CHECK(f && fwrite(p, 1, n, f) == n);
  if (f) fclose(f);
}

/* The fixture (three saved chats), its data.mdb's path and healthy bytes. */
typedef struct damage {
  fixture fx;
  char data[4200];
  char *orig;
  size_t orig_len;
} damage;

static int damage_open(damage *d) {
  memset(d, 0, sizeof *d);
  if (fixture_open(&d->fx, 3)) return -1;
  snprintf(d->data, sizeof d->data, "%s/data.mdb", d->fx.db);
  d->orig = slurp(d->data, &d->orig_len);
  CHECK(d->orig && d->orig_len > 40960);
  return d->orig && d->orig_len > 40960 ? 0 : -1;
}

static void damage_close(damage *d) {
  fixture_close(&d->fx);
  free(d->orig);
}

/* Every command refuses the damaged data.mdb (holding want, want_len bytes) with exit 2 and a message
 * naming it, and leaves it exactly as it was. */
static void refused_untouched(damage *d, const char *what, const void *want, size_t want_len, const char *needle) {
  fixture *fx = &d->fx;
  const char *cmds[][4] = {{"chats", "list", NULL}, {"chats", "show", fx->chat}, {"chats", "export", fx->chat},
                           {"worlds", "list", NULL}, {"replay", fx->chat, NULL}, {"run", fx->world, NULL}};
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
    proc_result r;
    const char **c = cmds[i];
    if (c[2]) ag(&r, c[0], c[1], c[2], "--db", fx->db, NULL);
    else ag(&r, c[0], c[1], "--db", fx->db, NULL);
    if (r.status != 2 || !strstr(r.err, needle))
      unit_fail_(__FILE__, __LINE__, "%s: %s %s: exit %d, stderr: %s", what, c[0], c[1], r.status, r.err);
    size_t n = 0;
    char *now = slurp(d->data, &n);
    if (!now || n != want_len || memcmp(now, want, n))
      unit_fail_(__FILE__, __LINE__, "%s: %s %s changed data.mdb", what, c[0], c[1]);
    free(now);
    proc_result_free(&r);
  }
}

static void truncated_refused(void) {
  damage d;
  if (damage_open(&d) == 0) {
    /* 8-160 KiB used to die of SIGBUS inside LMDB; under 8 KiB the file was started over as empty. */
    size_t cuts[] = {d.orig_len / 2, 12288, 8192, 4096, 100};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
      char what[64];
      snprintf(what, sizeof what, "cut to %zu bytes", cuts[i]);
      spill(d.data, d.orig, cuts[i]);
      refused_untouched(&d, what, d.orig, cuts[i], "data.mdb: damaged database");
    }
    spill(d.data, d.orig, d.orig_len);
    proc_result r;
    ag(&r, "chats", "show", d.fx.chat, "--db", d.fx.db, NULL);
    CHECK_INT(r.status, 0); /* the whole file still reads */
    proc_result_free(&r);
  }
  damage_close(&d);
}

static void random_bytes_refused(void) {
  damage d;
  if (damage_open(&d) == 0) {
    unsigned char *junk = malloc(d.orig_len);
    unsigned seed = 12345;
    for (size_t i = 0; i < d.orig_len; i++) junk[i] = (unsigned char)((seed = seed * 1103515245u + 12345u) >> 16);
    spill(d.data, junk, d.orig_len);
    refused_untouched(&d, "random bytes", junk, d.orig_len, "data.mdb: not an LMDB database");
    spill(d.data, junk, 3000);
    refused_untouched(&d, "3000 random bytes", junk, 3000, "data.mdb: not an LMDB database");
    /* A healthy header over damaged pages: the meta page names pages past the end. */
    memcpy(junk, d.orig, 8192);
    spill(d.data, junk, 8192);
    refused_untouched(&d, "headers only", junk, 8192, "data.mdb: damaged database");
    free(junk);
  }
  damage_close(&d);
}

static int raw_put(const char *dir, const char *db, const char *key, const char *val) {
  MDB_env *env = NULL;
  MDB_txn *txn = NULL;
  MDB_dbi dbi;
  int rc = mdb_env_create(&env);
  if (!rc) rc = mdb_env_set_maxdbs(env, 16);
  if (!rc) rc = mdb_env_open(env, dir, 0, 0600);
  if (!rc) rc = mdb_txn_begin(env, NULL, 0, &txn);
  if (!rc) rc = mdb_dbi_open(txn, db, MDB_CREATE, &dbi);
  MDB_val k = {strlen(key), (void *)key}, v = {strlen(val), (void *)val};
  if (!rc) rc = mdb_put(txn, dbi, &k, &v, 0);
  if (!rc) rc = mdb_txn_commit(txn), txn = NULL;
  if (txn) mdb_txn_abort(txn);
  mdb_env_close(env);
  return rc;
}

static void foreign_schema_refused(void) {
  damage d;
  if (damage_open(&d) == 0) {
    const char *versions[] = {"7", "v1"};
    const char *needles[] = {"schema version 7", "unreadable schema version"};
    for (int i = 0; i < 2; i++) {
      CHECK_INT(raw_put(d.fx.db, "meta", "schema_version", versions[i]), 0);
      size_t n = 0;
      char *before = slurp(d.data, &n);
      refused_untouched(&d, versions[i], before, n, needles[i]);
      free(before);
    }
  }
  damage_close(&d);
}

static void path_is_a_file(void) {
  char *dir = unit_tmpdir(), path[4096];
  snprintf(path, sizeof path, "%s/file", dir);
  CHECK_INT(unit_write_file(path, "precious"), 0);
  const char *subs[] = {"list", "new"};
  for (int i = 0; i < 2; i++) {
    const char *args[] = {"chats", subs[i], "--db", path, NULL};
    PROC_REFUSED(args, NULL, "not a directory", NULL);
  }
  char *text = unit_read_file(path);
  CHECK_STR(text, "precious");
  free(text);
  unit_rmrf(dir);
  free(dir);
}

/* Read-only commands on a missing database: an empty list (exit 0) or "no database" (exit 2), and
 * nothing is created. */
static void read_only_commands_create_nothing(void) {
  char *dir = unit_tmpdir(), db[4096];
  snprintf(db, sizeof db, "%s/none", dir);
  struct stat st;
  proc_result r;
  ag(&r, "chats", "list", "--db", db, NULL);
  CHECK_INT(r.status, 0);
  CHECK_STR(r.out, "");
  proc_result_free(&r);
  ag(&r, "worlds", "list", "--db", db, "--json", NULL);
  CHECK_INT(r.status, 0);
  CHECK_STR(r.out, "");
  proc_result_free(&r);
  ag(&r, "chats", "show", "abc", "--db", db, NULL);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "no database there yet") != NULL);
  proc_result_free(&r);
  ag(&r, "replay", "abc", "--db", db, NULL);
  CHECK_INT(r.status, 2);
  proc_result_free(&r);
  ag(&r, "chats", "export", "abc", "--db", db, NULL);
  CHECK_INT(r.status, 2);
  proc_result_free(&r);
  CHECK(stat(db, &st) != 0);
  /* An existing empty directory stays empty too. */
  CHECK_INT(mkdir(db, 0700), 0);
  ag(&r, "chats", "list", "--db", db, NULL);
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  char data[4200];
  snprintf(data, sizeof data, "%s/data.mdb", db);
  CHECK(stat(data, &st) != 0);
  unit_rmrf(dir);
  free(dir);
}

/* Runs agora as an unprivileged user when we are root (root ignores file modes). */
static void ag_unprivileged(proc_result *r, const char *const *args) {
  const char *bin = getenv("AGORA_BIN");
  const char *full[16] = {"--reuid=65534", "--regid=65534", "--clear-groups", bin ? bin : "./agora"};
  size_t n = 4;
  for (size_t i = 0; args[i] && n < 15; i++) full[n++] = args[i];
  full[n] = NULL;
  int root = geteuid() == 0;
  char *saved = bin ? strdup(bin) : NULL;
  if (root) setenv("AGORA_BIN", "/usr/bin/setpriv", 1);
  if (proc_agora(root ? full : args, NULL, NULL, r)) {
    unit_fail_(__FILE__, __LINE__, "cannot run agora");
    r->status = -1, r->out = strdup(""), r->err = strdup("");
  }
  if (saved) setenv("AGORA_BIN", saved, 1);
  free(saved);
}

static void read_only_directory(void) {
  damage d;
  if (damage_open(&d) == 0) {
    char lock[4200];
    snprintf(lock, sizeof lock, "%s/lock.mdb", d.fx.db);
    CHECK(chmod(d.fx.dir, 0755) == 0 && chmod(d.data, 0444) == 0 && chmod(lock, 0444) == 0);
    CHECK(chmod(d.fx.world, 0644) == 0 && chmod(d.fx.db, 0555) == 0);
    proc_result r;
    const char *list[] = {"chats", "list", "--db", d.fx.db, NULL};
    ag_unprivileged(&r, list);
    CHECK_INT(r.status, 0);
    CHECK(strstr(r.out, d.fx.chat) != NULL);
    if (r.status) fprintf(stderr, "  stderr: %s\n", r.err);
    proc_result_free(&r);
    const char *show[] = {"chats", "show", d.fx.chat, "--db", d.fx.db, NULL};
    ag_unprivileged(&r, show);
    CHECK_INT(r.status, 0);
    CHECK(strstr(r.out, "count with me") != NULL);
    proc_result_free(&r);
    const char *run[] = {"run", d.fx.world, "--db", d.fx.db, NULL};
    ag_unprivileged(&r, run);
    CHECK_INT(r.status, 2);
    CHECK(strstr(r.err, "cannot open the database for writing") != NULL);
    proc_result_free(&r);
    size_t n = 0;
    char *now = slurp(d.data, &n);
    CHECK(now && n == d.orig_len && !memcmp(now, d.orig, n));
    free(now);
    chmod(d.fx.db, 0700);
  }
  damage_close(&d);
}

SUITE_RUN((UNIT(truncated_refused), UNIT(random_bytes_refused), UNIT(foreign_schema_refused), UNIT(path_is_a_file),
  UNIT(read_only_commands_create_nothing), UNIT(read_only_directory)))
