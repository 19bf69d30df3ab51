/* Tests of the LMDB storage layer (storage/store.h), the database as a whole: persistence, file modes,
 * schema versions, map growth, the default data directory and chat ids. The chats are in
 * test_store_chats, the records of a chat in test_store_records. */
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "storage/store.h"
#include "support/suite.h"
#include "support/tstore.h"
#include "support/unit.h"
#include "support/wait.h"

/* ---- Open, reopen, modes, versions -------------------------------------------------------------- */

static int setup_basic(store_txn *t, void *arg) {
  (void)arg;
  int rc = tstore_put_world(t, "debate");
  if (!rc) rc = tstore_put_chat(t, "debate", "c1", 10, 2);
  if (!rc) rc = tstore_put_msg(t, "c1", 1, "human", "hello");
  if (!rc) rc = tstore_put_msg(t, "c1", 2, "alice", "hi there");
  if (!rc) rc = store_world_set_current(t, "debate", "c1");
  return rc;
}

static int check_basic(store_txn *t, void *arg) {
  (void)arg;
  store_world w;
  store_chat c;
  store_message m;
  int rc = store_world_get(t, "debate", &w);
  CHECK_INT(rc, AG_OK);
  if (rc) return rc;
  CHECK_STR(w.name, "debate");
  CHECK_STR(w.settings_json, "{\"turn_limit\":5}");
  CHECK_STR(w.current_chat, "c1");
  store_world_free(&w);
  CHECK_INT(store_chat_get(t, "c1", &c), AG_OK);
  CHECK_STR(c.world_id, "debate");
  CHECK_STR(c.title, "New Chat");
  CHECK_INT(c.message_count, 2);
  CHECK_INT(c.updated_at_ms, 10);
  store_chat_free(&c);
  CHECK_INT(store_message_get(t, "c1", 2, &m), AG_OK);
  CHECK_STR(m.sender, "alice");
  CHECK_STR(m.text, "hi there");
  CHECK_INT(m.text_len, 8);
  CHECK_INT(m.seq, 2);
  CHECK_INT(m.kind, 3);
  CHECK_INT(m.ts_ms, 1002);
  store_message_free(&m);
  return AG_OK;
}

static void test_open_reopen(void) {
  char *root, *dir;
  store *s = tstore_start(&root, &dir);
  if (!s) return;
  struct stat st;
  CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
  CHECK_INT(st.st_mode & 0777, 0700);
  CHECK_STR(store_dir(s), dir);
  /* Bulk mode and back: the data is the same either way. */
  ag_errmsg em;
  CHECK_INT(store_set_durable(s, 0, &em), AG_OK);
  CHECK_INT(tstore_write_tx(s, setup_basic, NULL), AG_OK);
  CHECK_INT(store_sync_now(s, &em), AG_OK);
  CHECK_INT(store_set_durable(s, 1, &em), AG_OK);
  store_close(s);
  s = tstore_open_ok(dir);
  CHECK_INT(store_read(s, check_basic, NULL, &em), AG_OK);
  store_close(s);
  /* A third open of the same files still works (schema already there). */
  s = tstore_open_ok(dir);
  CHECK_INT(store_read(s, check_basic, NULL, &em), AG_OK);
  tstore_done(s, root, dir);
}

static int setup_more(store_txn *t, void *arg) { return (void)arg, tstore_put_msg(t, "c1", 3, "bob", "third"); }
static int setup_more2(store_txn *t, void *arg) { return (void)arg, tstore_put_msg(t, "c1", 4, "bob", "fourth"); }

static int check_more(store_txn *t, void *arg) {
  (void)arg;
  store_message m;
  for (uint64_t seq = 3; seq <= 4; seq++) {
    int rc = store_message_get(t, "c1", seq, &m);
    CHECK_INT(rc, AG_OK);
    if (rc) return rc;
    CHECK_STR(m.text, seq == 3 ? "third" : "fourth");
    store_message_free(&m);
  }
  return AG_OK;
}

/* Waits (10 s, stretched on slow builds) for the background sync to report; 1 when it did. */
static int wait_synced(store *s) {
  struct pollfd p = {.fd = store_sync_fd(s), .events = POLLIN};
  for (long long end = now_ms() + wait_budget_ms(10000); store_synced(s) < store_commits(s) && now_ms() < end;)
    poll(&p, 1, 100);
  return store_synced(s) == store_commits(s);
}

static void test_background_sync(void) {
  char *root, *dir = tstore_tmp_db(&root);
  store *s = NULL;
  ag_errmsg em = {""};
  /* The default mode: nothing waits, the descriptor is -1, every commit is synced when it returns. */
  s = tstore_open_ok(dir);
  if (!s) return;
  CHECK_INT(store_sync_fd(s), -1);
  uint64_t c0 = store_commits(s);
  CHECK_INT(tstore_write_tx(s, setup_basic, NULL), AG_OK);
  CHECK_INT(store_commits(s), c0 + 1);
  CHECK_INT(store_synced(s), store_commits(s));
  CHECK_INT(store_sync_ack(s, &em), AG_OK);
  store_close(s);
  /* Background: commits return at once, the thread catches up and says so through the descriptor. */
  store_options opt = {.sync = STORE_SYNC_BACKGROUND};
  CHECK_INT(store_open_ex(dir, &opt, &s, &em), AG_OK);
  if (!s) return;
  CHECK(store_sync_fd(s) >= 0);
  CHECK_INT(store_read(s, check_basic, NULL, &em), AG_OK);
  for (int round = 0; round < 3; round++) {
    uint64_t before = store_commits(s);
    CHECK_INT(tstore_write_tx(s, setup_more, NULL), round ? AG_ERR_EXISTS : AG_OK);
    if (round) continue; /* a failed write is no commit */
    CHECK_INT(store_commits(s), before + 1);
    CHECK(wait_synced(s));
    struct pollfd p = {.fd = store_sync_fd(s), .events = POLLIN};
    CHECK_INT(poll(&p, 1, 0), 1); /* it said so */
    CHECK_INT(store_sync_ack(s, &em), AG_OK);
    CHECK_INT(poll(&p, 1, 0), 0); /* and the ack emptied it */
  }
  CHECK_INT(store_commits(s), store_synced(s));
  CHECK_INT(tstore_write_tx(s, setup_more2, NULL), AG_OK);
  store_close(s); /* syncs what the thread has not yet */
  CHECK_INT(store_open_read(dir, &s, &em), AG_OK);
  if (s) CHECK_INT(store_read(s, check_more, NULL, &em), AG_OK);
  tstore_done(s, root, dir);
}

static void test_file_modes(void) {
  char *root, *dir = tstore_tmp_db(&root);
  mode_t old = umask(0); /* the 0600 must come from us, not from a strict umask */
  store *s = tstore_open_ok(dir);
  umask(old);
  if (!s) return;
  store_close(s);
  const char *files[] = {"data.mdb", "lock.mdb"};
  for (int i = 0; i < 2; i++) {
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    CHECK(stat(path, &st) == 0);
    CHECK_INT(st.st_mode & 0777, 0600);
  }
  unit_rmrf(root);
  free(root);
  free(dir);
}

static int raw_put(const char *dir, const char *db, const char *k, const char *v) {
  return tstore_raw_put_bytes(dir, db, k, strlen(k), v, strlen(v));
}

static void test_schema_newer_refused(void) {
  char *root, *dir;
  store *s = tstore_start(&root, &dir);
  if (!s) return;
  store_close(s);
  CHECK_INT(raw_put(dir, "meta", "schema_version", "2"), 0);
  ag_errmsg em = {{0}};
  s = NULL;
  CHECK_INT(store_open(dir, &s, &em), AG_ERR_VERSION);
  CHECK(s == NULL);
  CHECK(strstr(em.text, dir) != NULL);
  CHECK(strstr(em.text, "version 2") != NULL);
  CHECK(strstr(em.text, "version 1") != NULL);
  /* Refusing wrote nothing: the version is still the newer one. */
  CHECK_INT(store_open(dir, &s, &em), AG_ERR_VERSION);
  /* The same version (or an older one) opens. */
  CHECK_INT(raw_put(dir, "meta", "schema_version", "1"), 0);
  s = tstore_open_ok(dir);
  tstore_done(s, root, dir);
}

static void test_foreign_lmdb_refused(void) {
  char *root = unit_tmpdir();
  CHECK_INT(raw_put(root, NULL, "someone", "else's data"), 0);
  store *s = NULL;
  ag_errmsg em = {{0}};
  CHECK_INT(store_open(root, &s, &em), AG_ERR_INVALID);
  CHECK(strstr(em.text, "not Agora's") != NULL);
  unit_rmrf(root);
  free(root);
}

static void test_open_errors(void) {
  char *root = unit_tmpdir();
  char path[4096];
  store *s = NULL;
  ag_errmsg em = {{0}};
  snprintf(path, sizeof path, "%s/file", root);
  CHECK_INT(unit_write_file(path, "x"), 0);
  CHECK(store_open(path, &s, &em) != AG_OK); /* a file, not a directory */
  CHECK(s == NULL);
  CHECK_INT(store_open("", &s, &em), AG_ERR_INVALID);
  /* A data file cut short while LMDB created it (a kill mid-creation) is started over. */
  snprintf(path, sizeof path, "%s/torn", root);
  CHECK_INT(mkdir(path, 0700), 0);
  char file[4200];
  snprintf(file, sizeof file, "%s/data.mdb", path);
  char page[4096];
  /* Garbage that short is no creation of LMDB's: refused and left alone. */
  memset(page, 0x5a, sizeof page);
  page[sizeof page - 1] = '\0';
  CHECK_INT(unit_write_file(file, page), 0);
  CHECK_INT(store_open(path, &s, &em), AG_ERR_INVALID);
  struct stat st;
  CHECK(stat(file, &st) == 0 && st.st_size == (off_t)sizeof page - 1);
  /* What LMDB writes first when it creates a file (meta page 0, transaction 0), cut short. */
  snprintf(page, sizeof page, "%s/fresh", root);
  store_close(tstore_open_ok(page));
  snprintf(page, sizeof page, "%s/fresh/data.mdb", root);
  char *fresh = unit_read_file(page);
  int fd = open(file, O_WRONLY | O_TRUNC);
  CHECK(fresh && fd >= 0 && write(fd, fresh, sizeof page - 1) == (ssize_t)sizeof page - 1);
  close(fd);
  free(fresh);
  /* While another process holds LMDB's lock the file may be mid-creation: it is left alone. */
  char lock[4200];
  snprintf(lock, sizeof lock, "%s/lock.mdb", path);
  CHECK_INT(unit_write_file(lock, ""), 0);
  int ready[2], go[2];
  CHECK(pipe(ready) == 0 && pipe(go) == 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(lock, O_RDWR);
    struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    char c = fd >= 0 && fcntl(fd, F_SETLK, &fl) == 0 ? 'y' : 'n';
    if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) < 0) _exit(1);
    _exit(0);
  }
  char c = 0;
  CHECK(read(ready[0], &c, 1) == 1 && c == 'y');
  CHECK_INT(store_open(path, &s, &em), AG_ERR_STORAGE);
  CHECK(stat(file, &st) == 0 && st.st_size == (off_t)sizeof page - 1);
  CHECK(write(go[1], "x", 1) == 1);
  CHECK(waitpid(pid, NULL, 0) == pid);
  close(ready[0]), close(ready[1]), close(go[0]), close(go[1]);
  /* Once nobody holds it, the torn file is started over. */
  s = tstore_open_ok(path);
  store_close(s);
  unit_rmrf(root);
  free(root);
}

/* ---- Map growth --------------------------------------------------------------------------------- */

typedef struct grow_arg {
  int calls;
  int first, count;
  const char *text;
} grow_arg;

static int grow_tx(store_txn *t, void *arg) {
  grow_arg *a = arg;
  a->calls++;
  int rc = AG_OK;
  if (a->first == 1) {
    rc = tstore_put_world(t, "w");
    if (!rc) rc = tstore_put_chat(t, "w", "big", 1, 0);
  }
  for (int i = 0; !rc && i < a->count; i++) rc = tstore_put_msg(t, "big", (uint64_t)(a->first + i), "alice", a->text);
  if (!rc) rc = tstore_put_chat(t, "w", "big", 2, (uint64_t)(a->first + a->count - 1));
  return rc;
}

typedef struct verify_big {
  uint64_t n;
  size_t bytes;
  int bad;
} verify_big;

static int verify_big_msg(const store_message *m, void *arg) {
  verify_big *v = arg;
  v->n++;
  v->bytes += m->text_len;
  if (m->seq != v->n || m->text[0] != 'x' || m->text[m->text_len - 1] != 'x') v->bad++;
  return 0;
}

static int verify_big_tx(store_txn *t, void *arg) { return store_message_scan(t, "big", 1, verify_big_msg, arg); }

static void test_map_growth(void) {
  char *root, *dir = tstore_tmp_db(&root);
  store *s = NULL;
  ag_errmsg em = {{0}};
  store_options opt = {.map_size = 64 * 1024}; /* 16 pages: the first big transaction cannot fit */
  CHECK_INT(store_open_ex(dir, &opt, &s, &em), AG_OK);
  if (!s) return;
  size_t before = store_map_size(s);
  char *text = malloc(100 * 1024 + 1);
  memset(text, 'x', 100 * 1024);
  text[100 * 1024] = '\0';
  /* One transaction of 2 MiB (several doublings inside one store_write), then many small ones. */
  grow_arg a = {.first = 1, .count = 20, .text = text};
  CHECK_INT(tstore_write_tx(s, grow_tx, &a), AG_OK);
  CHECK(a.calls > 1); /* fn really was run again from the start */
  for (int i = 0; i < 20; i++) {
    grow_arg b = {.first = 21 + i * 2, .count = 2, .text = text};
    CHECK_INT(tstore_write_tx(s, grow_tx, &b), AG_OK);
  }
  size_t after = store_map_size(s);
  CHECK(after > before);
  CHECK(after >= (size_t)6 << 20);
  verify_big v = {0};
  CHECK_INT(store_read(s, verify_big_tx, &v, &em), AG_OK);
  CHECK_INT(v.n, 60);
  CHECK_INT(v.bad, 0);
  CHECK_INT(v.bytes, 60 * 100 * 1024);
  store_close(s);
  /* Reopened with the defaults it keeps the grown size and all the data. */
  s = tstore_open_ok(dir);
  CHECK(store_map_size(s) >= after);
  v = (verify_big){0};
  CHECK_INT(store_read(s, verify_big_tx, &v, &em), AG_OK);
  CHECK_INT(v.n, 60);
  store_close(s);
  free(text);
  unit_rmrf(root);
  free(root);
  free(dir);
}

/* Another process grows the map while this one has the database open: this one adopts the new size
 * (MDB_MAP_RESIZED) and sees the data. */
static void test_map_grown_by_other_process(void) {
  char *root, *dir = tstore_tmp_db(&root);
  store *s = NULL;
  ag_errmsg em = {{0}};
  store_options opt = {.map_size = 256 * 1024};
  CHECK_INT(store_open_ex(dir, &opt, &s, &em), AG_OK);
  if (!s) return;
  size_t before = store_map_size(s);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    /* The child uses only its own handle (never the parent's, per LMDB's fork rule). */
    store *c = NULL;
    static char text[64 * 1024 + 1];
    memset(text, 'x', sizeof text - 1);
    grow_arg a = {.first = 1, .count = 40, .text = text};
    int rc = store_open_ex(dir, &opt, &c, NULL);
    if (!rc) rc = store_write(c, grow_tx, &a, NULL);
    store_close(c);
    _exit(rc ? 1 : 0);
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  verify_big v = {0};
  CHECK_INT(store_read(s, verify_big_tx, &v, &em), AG_OK);
  CHECK_INT(v.n, 40);
  CHECK_INT(v.bad, 0);
  CHECK(store_map_size(s) > before);
  /* And this process can write on top. */
  static char text2[] = "xyx";
  grow_arg b = {.first = 41, .count = 1, .text = text2};
  CHECK_INT(tstore_write_tx(s, grow_tx, &b), AG_OK);
  tstore_done(s, root, dir);
}

/* ---- Default directory, ids --------------------------------------------------------------------- */

static void set_env(const char *name, const char *value) {
  if (value) setenv(name, value, 1);
  else unsetenv(name);
}

static void test_default_dir(void) {
  const char *names[] = {"AGORA_HOME", "XDG_DATA_HOME", "HOME"};
  char *saved[3];
  for (int i = 0; i < 3; i++) saved[i] = getenv(names[i]) ? strdup(getenv(names[i])) : NULL;
  char out[256];
  set_env("AGORA_HOME", "/data/agora");
  set_env("XDG_DATA_HOME", "/xdg");
  set_env("HOME", "/home/u");
  CHECK_INT(store_default_dir(out, sizeof out), AG_OK);
  CHECK_STR(out, "/data/agora");
  set_env("AGORA_HOME", ""); /* empty counts as unset */
  CHECK_INT(store_default_dir(out, sizeof out), AG_OK);
  CHECK_STR(out, "/xdg/agora");
  set_env("AGORA_HOME", NULL);
  CHECK_INT(store_default_dir(out, sizeof out), AG_OK);
  CHECK_STR(out, "/xdg/agora");
  set_env("XDG_DATA_HOME", "relative/path"); /* invalid per XDG: ignored */
  CHECK_INT(store_default_dir(out, sizeof out), AG_OK);
  CHECK_STR(out, "/home/u/.local/share/agora");
  set_env("XDG_DATA_HOME", NULL);
  CHECK_INT(store_default_dir(out, sizeof out), AG_OK);
  CHECK_STR(out, "/home/u/.local/share/agora");
  CHECK_INT(store_default_dir(out, 10), AG_ERR_TOO_BIG);
  set_env("HOME", NULL); /* falls back to the password database */
  CHECK_INT(store_default_dir(out, sizeof out), AG_OK);
  CHECK(strstr(out, "/.local/share/agora") != NULL);
  for (int i = 0; i < 3; i++) {
    set_env(names[i], saved[i]);
    free(saved[i]);
  }
}

static void test_chat_ids(void) {
  enum { N = 2000 };
  static char ids_[N][STORE_ID_MAX];
  int bad = 0;
  for (int i = 0; i < N; i++) {
    store_chat_id_new(ids_[i]);
    if (strlen(ids_[i]) != 13 || strspn(ids_[i], "0123456789abcdefghjkmnpqrstvwxyz") != 13) bad++;
    if (i && strcmp(ids_[i - 1], ids_[i]) >= 0) bad++; /* strictly increasing, so unique */
  }
  CHECK_INT(bad, 0);
  /* The time is in front: an id made now starts like one made a moment ago. */
  CHECK(strncmp(ids_[0], ids_[N - 1], 4) == 0);
}

SUITE_RUN((UNIT(test_open_reopen), UNIT(test_background_sync), UNIT(test_file_modes), UNIT(test_schema_newer_refused),
  UNIT(test_foreign_lmdb_refused), UNIT(test_open_errors), UNIT(test_map_growth), UNIT(test_map_grown_by_other_process),
  UNIT(test_default_dir), UNIT(test_chat_ids)))
