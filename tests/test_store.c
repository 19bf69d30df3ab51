/* Tests of the LMDB storage layer (storage/store.h): persistence, file modes, schema versions, map
 * growth, chat ordering and scoping, deletes, messages, memories, agent states, size caps, aborts and
 * the default data directory. */
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
#include "support/unit.h"
#include "support/wait.h"

/* ---- Helpers ------------------------------------------------------------------------------------ */

static char *tmp_db(char **root) {
  *root = unit_tmpdir();
  char *dir = malloc(strlen(*root) + 16);
  sprintf(dir, "%s/a/b/db", *root); /* nested and missing: store_open creates it */
  return dir;
}

static store *open_ok(const char *dir) {
  store *s = NULL;
  ag_errmsg em = {{0}};
  int rc = store_open(dir, &s, &em);
  if (rc) fprintf(stderr, "  store_open: %s\n", em.text);
  CHECK_INT(rc, AG_OK);
  return s;
}

/* Runs fn in a write transaction and prints the detail on an unexpected failure. */
static int write_tx(store *s, store_txn_fn fn, void *arg) {
  ag_errmsg em = {{0}};
  int rc = store_write(s, fn, arg, &em);
  if (rc && getenv("TEST_VERBOSE")) fprintf(stderr, "  store_write: %d %s\n", rc, em.text);
  return rc;
}

static int put_world(store_txn *t, const char *id) {
  store_world w = {.id = id, .name = id, .settings_json = "{\"turn_limit\":5}", .created_at_ms = 1, .updated_at_ms = 1};
  return store_world_put(t, &w);
}

static int put_chat(store_txn *t, const char *world, const char *id, int64_t updated, uint64_t count) {
  store_chat c = {.id = id, .world_id = world, .title = "New Chat", .message_count = count,
                  .created_at_ms = 1, .updated_at_ms = updated};
  return store_chat_put(t, &c);
}

static int put_msg(store_txn *t, const char *chat, uint64_t seq, const char *sender, const char *text) {
  store_message m = {.seq = seq, .ts_ms = (int64_t)(1000 + seq), .kind = 3, .sender = sender, .text = text};
  return store_message_put(t, chat, &m);
}

/* Collects chat ids of a list into one comma-separated string. */
typedef struct ids {
  char text[1024];
} ids;

static int collect_chat(const store_chat *c, void *arg) {
  ids *x = arg;
  size_t n = strlen(x->text);
  snprintf(x->text + n, sizeof x->text - n, "%s%s", n ? "," : "", c->id);
  return 0;
}

typedef struct list_arg {
  const char *world;
  ids out;
} list_arg;

static int list_tx(store_txn *t, void *arg) {
  list_arg *a = arg;
  a->out.text[0] = '\0';
  return store_chat_list(t, a->world, collect_chat, &a->out);
}

static const char *list_chats(store *s, const char *world) {
  static list_arg a;
  a.world = world;
  ag_errmsg em;
  CHECK_INT(store_read(s, list_tx, &a, &em), AG_OK);
  return a.out.text;
}

/* ---- Open, reopen, modes, versions -------------------------------------------------------------- */

static int setup_basic(store_txn *t, void *arg) {
  (void)arg;
  int rc = put_world(t, "debate");
  if (!rc) rc = put_chat(t, "debate", "c1", 10, 2);
  if (!rc) rc = put_msg(t, "c1", 1, "human", "hello");
  if (!rc) rc = put_msg(t, "c1", 2, "alice", "hi there");
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
  char *root, *dir = tmp_db(&root);
  store *s = open_ok(dir);
  if (!s) return;
  struct stat st;
  CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
  CHECK_INT(st.st_mode & 0777, 0700);
  CHECK_STR(store_dir(s), dir);
  /* Bulk mode and back: the data is the same either way. */
  ag_errmsg em;
  CHECK_INT(store_set_durable(s, 0, &em), AG_OK);
  CHECK_INT(write_tx(s, setup_basic, NULL), AG_OK);
  CHECK_INT(store_sync_now(s, &em), AG_OK);
  CHECK_INT(store_set_durable(s, 1, &em), AG_OK);
  store_close(s);
  s = open_ok(dir);
  CHECK_INT(store_read(s, check_basic, NULL, &em), AG_OK);
  store_close(s);
  /* A third open of the same files still works (schema already there). */
  s = open_ok(dir);
  CHECK_INT(store_read(s, check_basic, NULL, &em), AG_OK);
  store_close(s);
  unit_rmrf(root);
  free(root);
  free(dir);
}

static int setup_more(store_txn *t, void *arg) { return (void)arg, put_msg(t, "c1", 3, "bob", "third"); }
static int setup_more2(store_txn *t, void *arg) { return (void)arg, put_msg(t, "c1", 4, "bob", "fourth"); }

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
  char *root, *dir = tmp_db(&root);
  store *s = NULL;
  ag_errmsg em = {""};
  /* The default mode: nothing waits, the descriptor is -1, every commit is synced when it returns. */
  s = open_ok(dir);
  if (!s) return;
  CHECK_INT(store_sync_fd(s), -1);
  uint64_t c0 = store_commits(s);
  CHECK_INT(write_tx(s, setup_basic, NULL), AG_OK);
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
    CHECK_INT(write_tx(s, setup_more, NULL), round ? AG_ERR_EXISTS : AG_OK);
    if (round) continue; /* a failed write is no commit */
    CHECK_INT(store_commits(s), before + 1);
    CHECK(wait_synced(s));
    struct pollfd p = {.fd = store_sync_fd(s), .events = POLLIN};
    CHECK_INT(poll(&p, 1, 0), 1); /* it said so */
    CHECK_INT(store_sync_ack(s, &em), AG_OK);
    CHECK_INT(poll(&p, 1, 0), 0); /* and the ack emptied it */
  }
  CHECK_INT(store_commits(s), store_synced(s));
  CHECK_INT(write_tx(s, setup_more2, NULL), AG_OK);
  store_close(s); /* syncs what the thread has not yet */
  CHECK_INT(store_open_read(dir, &s, &em), AG_OK);
  if (s) CHECK_INT(store_read(s, check_more, NULL, &em), AG_OK);
  store_close(s);
  unit_rmrf(root);
  free(root);
  free(dir);
}

static void test_file_modes(void) {
  char *root, *dir = tmp_db(&root);
  mode_t old = umask(0); /* the 0600 must come from us, not from a strict umask */
  store *s = open_ok(dir);
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

/* Writes key=value into a named database with raw LMDB, as another program (or a newer Agora, or a
 * damaged disk) would. */
static int raw_put_bytes(const char *dir, const char *db, const void *k, size_t klen, const void *v, size_t vlen) {
  MDB_env *env;
  MDB_txn *txn;
  MDB_dbi dbi;
  int rc = mdb_env_create(&env);
  if (!rc) rc = mdb_env_set_maxdbs(env, 16);
  if (!rc) rc = mdb_env_open(env, dir, 0, 0600);
  if (!rc) rc = mdb_txn_begin(env, NULL, 0, &txn);
  if (rc) goto done;
  rc = mdb_dbi_open(txn, db, db ? MDB_CREATE : 0, &dbi);
  MDB_val key = {klen, (void *)k}, val = {vlen, (void *)v};
  if (!rc) rc = mdb_put(txn, dbi, &key, &val, 0);
  if (!rc) rc = mdb_txn_commit(txn);
  else mdb_txn_abort(txn);
done:
  mdb_env_close(env);
  return rc;
}

static int raw_put(const char *dir, const char *db, const char *k, const char *v) {
  return raw_put_bytes(dir, db, k, strlen(k), v, strlen(v));
}

static void test_schema_newer_refused(void) {
  char *root, *dir = tmp_db(&root);
  store *s = open_ok(dir);
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
  s = open_ok(dir);
  store_close(s);
  unit_rmrf(root);
  free(root);
  free(dir);
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
  store_close(open_ok(page));
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
  s = open_ok(path);
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
    rc = put_world(t, "w");
    if (!rc) rc = put_chat(t, "w", "big", 1, 0);
  }
  for (int i = 0; !rc && i < a->count; i++) rc = put_msg(t, "big", (uint64_t)(a->first + i), "alice", a->text);
  if (!rc) rc = put_chat(t, "w", "big", 2, (uint64_t)(a->first + a->count - 1));
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
  char *root, *dir = tmp_db(&root);
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
  CHECK_INT(write_tx(s, grow_tx, &a), AG_OK);
  CHECK(a.calls > 1); /* fn really was run again from the start */
  for (int i = 0; i < 20; i++) {
    grow_arg b = {.first = 21 + i * 2, .count = 2, .text = text};
    CHECK_INT(write_tx(s, grow_tx, &b), AG_OK);
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
  s = open_ok(dir);
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
  char *root, *dir = tmp_db(&root);
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
  CHECK_INT(write_tx(s, grow_tx, &b), AG_OK);
  store_close(s);
  unit_rmrf(root);
  free(root);
  free(dir);
}

/* ---- Chats: order, scoping, delete, latest ------------------------------------------------------ */

typedef struct order_arg {
  int step;
} order_arg;

static int order_tx(store_txn *t, void *arg) {
  order_arg *a = arg;
  if (a->step == 0) {
    int rc = put_world(t, "w");
    if (!rc) rc = put_chat(t, "w", "c1", 100, 0);
    if (!rc) rc = put_chat(t, "w", "c2", 200, 0);
    if (!rc) rc = put_chat(t, "w", "c3", 300, 0);
    return rc;
  }
  if (a->step == 1) return put_chat(t, "w", "c1", 400, 1); /* c1 becomes the newest */
  if (a->step == 2) return put_chat(t, "w", "c3", 100, 1); /* time may go back too */
  if (a->step == 3) return put_chat(t, "w", "c2", 400, 1); /* a tie with c1: id order */
  /* Updating only the title or count keeps the entry where it is. */
  store_chat c = {.id = "c1", .world_id = "w", .title = "Renamed", .message_count = 9, .updated_at_ms = 400};
  return store_chat_put(t, &c);
}

static int count_tx(store_txn *t, void *arg) {
  uint64_t *n = arg;
  return store_chat_count(t, (const char *)(uintptr_t)n[1], &n[0]);
}

static uint64_t count_chats(store *s, const char *world) {
  uint64_t n[2] = {0, (uint64_t)(uintptr_t)world};
  ag_errmsg em;
  CHECK_INT(store_read(s, count_tx, n, &em), AG_OK);
  return n[0];
}

static void test_chat_list_newest_first(void) {
  char *root, *dir = tmp_db(&root);
  store *s = open_ok(dir);
  if (!s) return;
  order_arg a = {0};
  CHECK_INT(write_tx(s, order_tx, &a), AG_OK);
  CHECK_STR(list_chats(s, "w"), "c3,c2,c1");
  a.step = 1;
  CHECK_INT(write_tx(s, order_tx, &a), AG_OK);
  CHECK_STR(list_chats(s, "w"), "c1,c3,c2");
  a.step = 2;
  CHECK_INT(write_tx(s, order_tx, &a), AG_OK);
  CHECK_STR(list_chats(s, "w"), "c1,c2,c3");
  a.step = 3;
  CHECK_INT(write_tx(s, order_tx, &a), AG_OK);
  CHECK_STR(list_chats(s, "w"), "c1,c2,c3");
  a.step = 4;
  CHECK_INT(write_tx(s, order_tx, &a), AG_OK);
  CHECK_STR(list_chats(s, "w"), "c1,c2,c3");
  CHECK_STR(list_chats(s, NULL), "c1,c2,c3");
  CHECK_INT(count_chats(s, "w"), 3); /* no stale index entries left behind */
  CHECK_INT(count_chats(s, NULL), 3);
  store_close(s);
  unit_rmrf(root);
  free(root);
  free(dir);
}

static int scoping_tx(store_txn *t, void *arg) {
  (void)arg;
  /* "a" is a prefix of "ab": the '\0' after a world id keeps their chats apart. */
  int rc = put_world(t, "a");
  if (!rc) rc = put_world(t, "ab");
  if (!rc) rc = put_chat(t, "a", "a1", 10, 0);
  if (!rc) rc = put_chat(t, "ab", "b1", 20, 0);
  if (!rc) rc = put_chat(t, "a", "a2", 30, 0);
  if (!rc) rc = put_chat(t, "ab", "b2", 5, 0);
  return rc;
}

static int scoping_errors_tx(store_txn *t, void *arg) {
  (void)arg;
  CHECK_INT(put_chat(t, "nope", "x1", 1, 0), AG_ERR_NOT_FOUND);  /* unknown world */
  CHECK_INT(put_chat(t, "ab", "a1", 50, 0), AG_ERR_INVALID);     /* a chat never changes world */
  CHECK_INT(store_world_set_current(t, "a", "b1"), AG_ERR_INVALID); /* another world's chat */
  CHECK_INT(store_world_set_current(t, "a", "zz"), AG_ERR_NOT_FOUND);
  CHECK_INT(store_world_set_current(t, "zz", NULL), AG_ERR_NOT_FOUND);
  store_world w = {.id = "a", .name = "A", .settings_json = "{}", .current_chat = "b2"};
  CHECK_INT(store_world_put(t, &w), AG_ERR_INVALID);
  CHECK_INT(store_world_set_current(t, "a", "a1"), AG_OK);
  return AG_OK;
}

typedef struct world_ids {
  ids out;
} world_ids;

static int collect_world(const store_world *w, void *arg) {
  ids *x = arg;
  size_t n = strlen(x->text);
  snprintf(x->text + n, sizeof x->text - n, "%s%s:%s", n ? "," : "", w->id, w->current_chat);
  return 0;
}

static int worlds_tx(store_txn *t, void *arg) { return store_world_list(t, collect_world, arg); }

static void test_world_scoping(void) {
  char *root, *dir = tmp_db(&root);
  store *s = open_ok(dir);
  if (!s) return;
  CHECK_INT(write_tx(s, scoping_tx, NULL), AG_OK);
  CHECK_STR(list_chats(s, "a"), "a2,a1");
  CHECK_STR(list_chats(s, "ab"), "b1,b2");
  CHECK_STR(list_chats(s, NULL), "a2,b1,a1,b2");
  CHECK_STR(list_chats(s, "none"), "");
  CHECK_INT(count_chats(s, "a"), 2);
  CHECK_INT(count_chats(s, "ab"), 2);
  CHECK_INT(count_chats(s, "none"), 0);
  CHECK_INT(write_tx(s, scoping_errors_tx, NULL), AG_OK);
  ids w = {{0}};
  ag_errmsg em;
  CHECK_INT(store_read(s, worlds_tx, &w, &em), AG_OK);
  CHECK_STR(w.text, "a:a1,ab:");
  store_close(s);
  unit_rmrf(root);
  free(root);
  free(dir);
}

static int delete_setup_tx(store_txn *t, void *arg) {
  (void)arg;
  /* "c1" is a prefix of "c10": deleting c1 must leave c10's data alone. */
  int rc = put_world(t, "w");
  const char *chats[] = {"c1", "c10"};
  for (int i = 0; !rc && i < 2; i++) {
    rc = put_chat(t, "w", chats[i], 100 + i, 3);
    for (uint64_t q = 1; !rc && q <= 3; q++) rc = put_msg(t, chats[i], q, "alice", "text");
    if (!rc) rc = store_memory_append(t, chats[i], "alice", 1);
    if (!rc) rc = store_memory_append(t, chats[i], "bob", 2);
    store_agent_state st = {.turn_count = 2, .notice_sent = 0, .counter = 7};
    if (!rc) rc = store_agent_state_put(t, chats[i], "alice", &st);
    if (!rc) rc = store_agent_state_put(t, chats[i], "bob", &st);
  }
  if (!rc) rc = store_world_set_current(t, "w", "c1");
  return rc;
}

static int count_msg(const store_message *m, void *arg) {
  (void)m;
  (*(int *)arg)++;
  return 0;
}
static int count_mem(uint64_t seq, void *arg) {
  (void)seq;
  (*(int *)arg)++;
  return 0;
}
static int count_state(const char *agent, const store_agent_state *st, void *arg) {
  (void)agent;
  (void)st;
  (*(int *)arg)++;
  return 0;
}

/* Counts a chat's messages, memories (alice+bob) and states into n[0..2]. */
typedef struct chat_counts {
  const char *chat;
  int n[3];
} chat_counts;

static int chat_counts_tx(store_txn *t, void *arg) {
  chat_counts *c = arg;
  memset(c->n, 0, sizeof c->n);
  int rc = store_message_scan(t, c->chat, 0, count_msg, &c->n[0]);
  if (!rc) rc = store_memory_scan(t, c->chat, "alice", count_mem, &c->n[1]);
  if (!rc) rc = store_memory_scan(t, c->chat, "bob", count_mem, &c->n[1]);
  if (!rc) rc = store_agent_state_scan(t, c->chat, count_state, &c->n[2]);
  return rc;
}

static int delete_tx(store_txn *t, void *arg) { return store_chat_delete(t, arg); }

static int current_tx(store_txn *t, void *arg) {
  store_world w;
  int rc = store_world_get(t, "w", &w);
  if (!rc) snprintf(arg, STORE_ID_MAX, "%s", w.current_chat);
  store_world_free(&w);
  return rc;
}

static void test_chat_delete(void) {
  char *root, *dir = tmp_db(&root);
  store *s = open_ok(dir);
  if (!s) return;
  ag_errmsg em;
  CHECK_INT(write_tx(s, delete_setup_tx, NULL), AG_OK);
  chat_counts c = {.chat = "c1"};
  CHECK_INT(store_read(s, chat_counts_tx, &c, &em), AG_OK);
  CHECK(c.n[0] == 3 && c.n[1] == 2 && c.n[2] == 2);
  CHECK_INT(write_tx(s, delete_tx, "c1"), AG_OK);
  CHECK_INT(store_read(s, chat_counts_tx, &c, &em), AG_OK);
  CHECK(c.n[0] == 0 && c.n[1] == 0 && c.n[2] == 0);
  c.chat = "c10";
  CHECK_INT(store_read(s, chat_counts_tx, &c, &em), AG_OK);
  CHECK(c.n[0] == 3 && c.n[1] == 2 && c.n[2] == 2);
  CHECK_STR(list_chats(s, "w"), "c10");
  CHECK_STR(list_chats(s, NULL), "c10");
  CHECK_INT(count_chats(s, NULL), 1);
  char cur[STORE_ID_MAX] = "?";
  CHECK_INT(store_read(s, current_tx, cur, &em), AG_OK);
  CHECK_STR(cur, ""); /* the world no longer points at the deleted chat */
  CHECK_INT(write_tx(s, delete_tx, "c1"), AG_ERR_NOT_FOUND);
  store_close(s);
  unit_rmrf(root);
  free(root);
  free(dir);
}

/* Delete with fallback as the session manager does it: delete, then the latest remaining chat. */
static int fallback_tx(store_txn *t, void *arg) {
  char *out = arg;
  store_chat latest;
  int rc = store_chat_delete(t, out);
  if (rc) return rc;
  rc = store_chat_latest(t, "w", &latest);
  if (rc == AG_ERR_NOT_FOUND) {
    strcpy(out, "none");
    return store_world_set_current(t, "w", NULL);
  }
  if (rc) return rc;
  snprintf(out, STORE_ID_MAX, "%s", latest.id);
  rc = store_world_set_current(t, "w", latest.id);
  store_chat_free(&latest);
  return rc;
}

static int latest_any_tx(store_txn *t, void *arg) {
  store_chat c;
  int rc = store_chat_latest(t, NULL, &c);
  if (!rc) snprintf(arg, STORE_ID_MAX, "%s", c.id);
  store_chat_free(&c);
  return rc;
}

static int latest_setup_tx(store_txn *t, void *arg) {
  (void)arg;
  int rc = put_world(t, "w");
  if (!rc) rc = put_world(t, "other");
  if (!rc) rc = put_chat(t, "w", "x", 100, 0);
  if (!rc) rc = put_chat(t, "w", "y", 300, 0);
  if (!rc) rc = put_chat(t, "w", "z", 200, 0);
  if (!rc) rc = put_chat(t, "other", "o", 999, 0); /* newer, but another world's */
  if (!rc) rc = store_world_set_current(t, "w", "y");
  return rc;
}

static void test_latest_fallback(void) {
  char *root, *dir = tmp_db(&root);
  store *s = open_ok(dir);
  if (!s) return;
  ag_errmsg em;
  CHECK_INT(write_tx(s, latest_setup_tx, NULL), AG_OK);
  char id[STORE_ID_MAX] = "y", cur[STORE_ID_MAX];
  CHECK_INT(write_tx(s, fallback_tx, id), AG_OK);
  CHECK_STR(id, "z");
  CHECK_INT(store_read(s, current_tx, cur, &em), AG_OK);
  CHECK_STR(cur, "z");
  strcpy(id, "z");
  CHECK_INT(write_tx(s, fallback_tx, id), AG_OK);
  CHECK_STR(id, "x");
  strcpy(id, "x");
  CHECK_INT(write_tx(s, fallback_tx, id), AG_OK);
  CHECK_STR(id, "none");
  CHECK_INT(store_read(s, current_tx, cur, &em), AG_OK);
  CHECK_STR(cur, "");
  CHECK_STR(list_chats(s, NULL), "o");
  CHECK_INT(store_read(s, latest_any_tx, cur, &em), AG_OK);
  CHECK_STR(cur, "o");
  store_close(s);
  unit_rmrf(root);
  free(root);
  free(dir);
}

/* ---- Messages, memories, agent states ----------------------------------------------------------- */

static int messages_tx(store_txn *t, void *arg) {
  (void)arg;
  int rc = put_world(t, "w");
  if (!rc) rc = put_chat(t, "w", "m", 1, 300);
  if (!rc) rc = put_chat(t, "w", "m2", 1, 1); /* "m" is a prefix of "m2" */
  /* Out of order and past 255, so the big-endian keys are what orders them. Kinds are any byte: storage
   * keeps them without reading them. */
  for (uint64_t q = 300; !rc && q >= 1; q--) {
    char text[32];
    snprintf(text, sizeof text, "message %llu", (unsigned long long)q);
    store_message msg = {.seq = q, .ts_ms = (int64_t)q, .kind = (uint8_t)(q * 37), .sender = "bob", .text = text};
    rc = store_message_put(t, "m", &msg);
  }
  if (!rc) rc = put_msg(t, "m2", 1, "carol", "other chat");
  return rc;
}

typedef struct scan_arg {
  uint64_t from, expect, n, stop_after;
  int bad;
} scan_arg;

static int scan_msg(const store_message *m, void *arg) {
  scan_arg *a = arg;
  char text[32];
  snprintf(text, sizeof text, "message %llu", (unsigned long long)a->expect);
  if (m->seq != a->expect || strcmp(m->text, text) != 0 || strcmp(m->sender, "bob") != 0 ||
      m->kind != (uint8_t)(m->seq * 37) || m->ts_ms != (int64_t)m->seq || m->text_len != strlen(text))
    a->bad++;
  a->expect++;
  a->n++;
  return a->stop_after && a->n == a->stop_after ? STORE_STOP : 0;
}

static int scan_from_tx(store_txn *t, void *arg) {
  scan_arg *a = arg;
  return store_message_scan(t, "m", a->from, scan_msg, a);
}

static int scan_fails(const store_message *m, void *arg) {
  (void)m;
  (void)arg;
  return AG_ERR_CANCELLED;
}

static int message_misc_tx(store_txn *t, void *arg) {
  (void)arg;
  uint64_t last = 0;
  store_message m;
  CHECK_INT(store_message_last_seq(t, "m", &last), AG_OK);
  CHECK_INT(last, 300);
  CHECK_INT(store_message_last_seq(t, "m2", &last), AG_OK);
  CHECK_INT(last, 1);
  CHECK_INT(store_message_last_seq(t, "nochat", &last), AG_OK);
  CHECK_INT(last, 0);
  CHECK_INT(store_message_get(t, "m", 301, &m), AG_ERR_NOT_FOUND);
  CHECK_INT(store_message_get(t, "m", 0, &m), AG_ERR_NOT_FOUND);
  CHECK_INT(store_message_scan(t, "m", 1, scan_fails, NULL), AG_ERR_CANCELLED);
  CHECK_INT(put_msg(t, "m", 5, "bob", "again"), AG_ERR_EXISTS); /* messages are immutable */
  CHECK_INT(put_msg(t, "m", 0, "bob", "zero"), AG_ERR_INVALID);
  CHECK_INT(put_msg(t, "ghost", 1, "bob", "nobody"), AG_ERR_NOT_FOUND);
  CHECK_INT(put_msg(t, "m", 400, "", "no sender"), AG_ERR_INVALID);
  /* The kind is opaque: the highest byte goes in and comes back unchanged. */
  store_message odd = {.seq = 401, .kind = 255, .sender = "bob", .text = "?"};
  CHECK_INT(store_message_put(t, "m", &odd), AG_OK);
  CHECK_INT(store_message_get(t, "m", 401, &m), AG_OK);
  CHECK_INT(m.kind, 255);
  store_message_free(&m);
  return AG_OK;
}

static void test_messages(void) {
  char *root, *dir = tmp_db(&root);
  store *s = open_ok(dir);
  if (!s) return;
  ag_errmsg em;
  CHECK_INT(write_tx(s, messages_tx, NULL), AG_OK);
  scan_arg a = {.from = 1, .expect = 1};
  CHECK_INT(store_read(s, scan_from_tx, &a, &em), AG_OK);
  CHECK_INT(a.n, 300);
  CHECK_INT(a.bad, 0);
  a = (scan_arg){.from = 256, .expect = 256};
  CHECK_INT(store_read(s, scan_from_tx, &a, &em), AG_OK);
  CHECK_INT(a.n, 45);
  CHECK_INT(a.bad, 0);
  a = (scan_arg){.from = 0, .expect = 1}; /* from 0 is from the start */
  CHECK_INT(store_read(s, scan_from_tx, &a, &em), AG_OK);
  CHECK_INT(a.n, 300);
  CHECK_INT(a.bad, 0);
  a = (scan_arg){.from = 10, .expect = 10, .stop_after = 3};
  CHECK_INT(store_read(s, scan_from_tx, &a, &em), AG_OK);
  CHECK_INT(a.n, 3);
  CHECK_INT(a.bad, 0);
  a = (scan_arg){.from = 301, .expect = 301};
  CHECK_INT(store_read(s, scan_from_tx, &a, &em), AG_OK);
  CHECK_INT(a.n, 0);
  CHECK_INT(write_tx(s, message_misc_tx, NULL), AG_OK);
  store_close(s);
  unit_rmrf(root);
  free(root);
  free(dir);
}

typedef struct seqs {
  uint64_t v[64];
  int n;
} seqs;

static int collect_seq(uint64_t seq, void *arg) {
  seqs *x = arg;
  if (x->n < 64) x->v[x->n++] = seq;
  return 0;
}

static int memory_tx(store_txn *t, void *arg) {
  (void)arg;
  int rc = put_world(t, "w");
  if (!rc) rc = put_chat(t, "w", "c", 1, 5);
  for (uint64_t q = 1; !rc && q <= 5; q++) rc = put_msg(t, "c", q, "x", "t");
  /* "a" is a prefix of "ab": separate memories. */
  uint64_t order[] = {3, 1, 4, 1, 5};
  for (int i = 0; !rc && i < 5; i++) rc = store_memory_append(t, "c", "a", order[i]);
  if (!rc) rc = store_memory_append(t, "c", "ab", 2);
  if (!rc) rc = store_memory_append(t, "c", "ab", 5);
  if (rc) return rc;
  CHECK_INT(store_memory_append(t, "c", "a", 6), AG_ERR_NOT_FOUND);  /* not a stored message */
  CHECK_INT(store_memory_append(t, "nochat", "a", 1), AG_ERR_NOT_FOUND);
  CHECK_INT(store_memory_append(t, "c", "", 1), AG_ERR_INVALID);
  return AG_OK;
}

static int memory_scan_tx(store_txn *t, void *arg) {
  seqs *x = arg;
  x[0].n = x[1].n = 0;
  int rc = store_memory_scan(t, "c", "a", collect_seq, &x[0]);
  if (!rc) rc = store_memory_scan(t, "c", "ab", collect_seq, &x[1]);
  return rc;
}

static int memory_clear_tx(store_txn *t, void *arg) {
  return store_memory_clear(t, "c", arg);
}

static int memory_append_after_clear_tx(store_txn *t, void *arg) {
  (void)arg;
  return store_memory_append(t, "c", "a", 2);
}

static void test_memories(void) {
  char *root, *dir = tmp_db(&root);
  store *s = open_ok(dir);
  if (!s) return;
  ag_errmsg em;
  seqs x[2];
  CHECK_INT(write_tx(s, memory_tx, NULL), AG_OK);
  CHECK_INT(store_read(s, memory_scan_tx, x, &em), AG_OK);
  CHECK_INT(x[0].n, 5);
  CHECK(x[0].v[0] == 3 && x[0].v[1] == 1 && x[0].v[2] == 4 && x[0].v[3] == 1 && x[0].v[4] == 5);
  CHECK_INT(x[1].n, 2);
  CHECK(x[1].v[0] == 2 && x[1].v[1] == 5);
  CHECK_INT(write_tx(s, memory_clear_tx, "a"), AG_OK);
  CHECK_INT(store_read(s, memory_scan_tx, x, &em), AG_OK);
  CHECK_INT(x[0].n, 0);
  CHECK_INT(x[1].n, 2);
  CHECK_INT(write_tx(s, memory_append_after_clear_tx, NULL), AG_OK);
  CHECK_INT(store_read(s, memory_scan_tx, x, &em), AG_OK);
  CHECK_INT(x[0].n, 1);
  CHECK_INT(x[0].v[0], 2);
  CHECK_INT(write_tx(s, memory_clear_tx, NULL), AG_OK);
  CHECK_INT(store_read(s, memory_scan_tx, x, &em), AG_OK);
  CHECK_INT(x[0].n + x[1].n, 0);
  store_close(s);
  unit_rmrf(root);
  free(root);
  free(dir);
}

static int states_tx(store_txn *t, void *arg) {
  (void)arg;
  int rc = put_world(t, "w");
  if (!rc) rc = put_chat(t, "w", "c", 1, 0);
  store_agent_state a = {.turn_count = 3, .notice_sent = 1, .counter = UINT64_C(1) << 40};
  store_agent_state b = {.turn_count = -1, .notice_sent = 0, .counter = 2};
  if (!rc) rc = store_agent_state_put(t, "c", "bob", &b);
  if (!rc) rc = store_agent_state_put(t, "c", "alice", &a);
  if (!rc) rc = store_agent_state_put(t, "c", "alice", &a); /* put replaces */
  if (rc) return rc;
  CHECK_INT(store_agent_state_put(t, "nochat", "alice", &a), AG_ERR_NOT_FOUND);
  return AG_OK;
}

static int collect_state(const char *agent, const store_agent_state *st, void *arg) {
  ids *x = arg;
  size_t n = strlen(x->text);
  snprintf(x->text + n, sizeof x->text - n, "%s%s=%d/%d/%llu", n ? "," : "", agent, (int)st->turn_count,
           (int)st->notice_sent, (unsigned long long)st->counter);
  return 0;
}

static int states_check_tx(store_txn *t, void *arg) {
  ids *x = arg;
  x->text[0] = '\0';
  return store_agent_state_scan(t, "c", collect_state, x);
}

static int states_get_tx(store_txn *t, void *arg) {
  (void)arg;
  store_agent_state st;
  CHECK_INT(store_agent_state_get(t, "c", "alice", &st), AG_OK);
  CHECK_INT(st.turn_count, 3);
  CHECK_INT(st.notice_sent, 1);
  CHECK(st.counter == UINT64_C(1) << 40);
  CHECK_INT(store_agent_state_get(t, "c", "carol", &st), AG_ERR_NOT_FOUND);
  return AG_OK;
}

static int states_clear_tx(store_txn *t, void *arg) { return store_agent_state_clear(t, "c", arg); }

static void test_agent_states(void) {
  char *root, *dir = tmp_db(&root);
  store *s = open_ok(dir);
  if (!s) return;
  ag_errmsg em;
  ids x;
  CHECK_INT(write_tx(s, states_tx, NULL), AG_OK);
  CHECK_INT(store_read(s, states_check_tx, &x, &em), AG_OK);
  CHECK_STR(x.text, "alice=3/1/1099511627776,bob=-1/0/2");
  CHECK_INT(store_read(s, states_get_tx, NULL, &em), AG_OK);
  CHECK_INT(write_tx(s, states_clear_tx, "bob"), AG_OK);
  CHECK_INT(write_tx(s, states_clear_tx, "nobody"), AG_OK);
  CHECK_INT(store_read(s, states_check_tx, &x, &em), AG_OK);
  CHECK_STR(x.text, "alice=3/1/1099511627776");
  CHECK_INT(write_tx(s, states_clear_tx, NULL), AG_OK);
  CHECK_INT(store_read(s, states_check_tx, &x, &em), AG_OK);
  CHECK_STR(x.text, "");
  store_close(s);
  unit_rmrf(root);
  free(root);
  free(dir);
}

/* ---- Caps, aborts, misuse ----------------------------------------------------------------------- */

typedef struct big_arg {
  char *huge;    /* STORE_TEXT_LEN + 1 bytes */
  char *exact;   /* STORE_TEXT_LEN bytes */
  char title[STORE_TITLE_LEN + 2];
  char id[STORE_ID_LEN + 2];
  int which;
} big_arg;

static int too_big_tx(store_txn *t, void *arg) {
  big_arg *a = arg;
  /* Good writes first, so a rejected one must also take them back. */
  int rc = put_world(t, "w");
  if (!rc) rc = put_chat(t, "w", "c", 1, 0);
  if (rc) return rc;
  store_chat c = {.id = "c", .world_id = "w", .title = a->title};
  store_world w = {.id = "w", .name = "w", .settings_json = a->huge};
  switch (a->which) {
  case 0: return put_msg(t, "c", 1, "alice", a->huge);
  case 1: return store_chat_put(t, &c);
  case 2: return put_chat(t, "w", a->id, 1, 0);
  case 3: return put_msg(t, "c", 1, a->id, "hi");
  case 4: return store_memory_append(t, "c", a->id, 1);
  case 5: return store_world_put(t, &w);
  default: return put_chat(t, a->id, "c2", 1, 0);
  }
}

static int exists_tx(store_txn *t, void *arg) {
  (void)arg;
  store_world w;
  int rc = store_world_get(t, "w", &w);
  store_world_free(&w);
  return rc;
}

static int exact_tx(store_txn *t, void *arg) {
  big_arg *a = arg;
  a->title[STORE_TITLE_LEN] = '\0';
  a->id[STORE_ID_LEN] = '\0';
  int rc = put_world(t, "w");
  store_chat c = {.id = a->id, .world_id = "w", .title = a->title};
  if (!rc) rc = store_chat_put(t, &c);
  if (!rc) rc = put_msg(t, a->id, 1, a->id, a->exact);
  if (!rc) rc = store_memory_append(t, a->id, a->id, 1);
  return rc;
}

static int exact_check_tx(store_txn *t, void *arg) {
  big_arg *a = arg;
  store_message m;
  int rc = store_message_get(t, a->id, 1, &m);
  if (rc) return rc;
  CHECK_INT(m.text_len, STORE_TEXT_LEN);
  CHECK(memcmp(m.text, a->exact, STORE_TEXT_LEN) == 0);
  store_message_free(&m);
  return AG_OK;
}

/* ---- Corrupt records ---------------------------------------------------------------------------- */

static int corrupt_setup_tx(store_txn *t, void *arg) {
  (void)arg;
  store_agent_state st = {.turn_count = 1};
  store_context ctx = {.version = 1, .data_json = "{}"};
  int rc = put_world(t, "w");
  if (!rc) rc = put_chat(t, "w", "c", 5, 1);
  if (!rc) rc = put_msg(t, "c", 1, "bob", "hi");
  if (!rc) rc = store_agent_state_put(t, "c", "a", &st);
  if (!rc) rc = store_context_put(t, "c", "a", &ctx);
  return rc;
}

static int scan_states_tx(store_txn *t, void *arg) {
  (void)arg;
  return store_agent_state_scan(t, "c", count_state, &(int){0});
}
static int count_ctx(const char *agent, const store_context *c, void *arg) {
  (void)agent;
  (void)c;
  (*(int *)arg)++;
  return 0;
}
static int scan_ctx_tx(store_txn *t, void *arg) {
  (void)arg;
  return store_context_scan(t, "c", count_ctx, &(int){0});
}
static int scan_msgs_tx(store_txn *t, void *arg) {
  (void)arg;
  return store_message_scan(t, "c", 0, count_msg, &(int){0}); /* message 1 reads, the key after it does not */
}

/* Each scan meets one record it cannot read: it fails with AG_ERR_STORAGE naming the record, no crash.
 * Keys are the range helper's business (an agent id too long, an index key too short), values the
 * decoders'. */
static void test_corrupt_records(void) {
  char *root, *dir = tmp_db(&root);
  store *s = open_ok(dir);
  if (!s) return;
  CHECK_INT(write_tx(s, corrupt_setup_tx, NULL), AG_OK);
  store_close(s);
  char key[128] = "c";
  memset(key + 2, 'x', 80); /* chat "c", then an 80-byte agent id */
  unsigned char state[13] = {0};
  CHECK_INT(raw_put_bytes(dir, "agent_state", key, 82, state, sizeof state), 0);
  CHECK_INT(raw_put_bytes(dir, "contexts", "c\0b", 3, "short", 5), 0);
  CHECK_INT(raw_put_bytes(dir, "chat_index", "w\0abc", 5, "", 0), 0);
  CHECK_INT(raw_put_bytes(dir, "messages", "c\0\0\0\0\2", 6, "", 0), 0);
  s = open_ok(dir);
  if (!s) return;
  static const struct {
    store_txn_fn fn;
    const char *what;
  } scans[] = {{scan_states_tx, "corrupt agent state"}, {scan_ctx_tx, "corrupt context"},
               {list_tx, "corrupt chat index"}, {scan_msgs_tx, "corrupt message"}};
  for (size_t i = 0; i < sizeof scans / sizeof *scans; i++) {
    ag_errmsg em = {{0}};
    list_arg la = {.world = "w"};
    CHECK_INT(store_read(s, scans[i].fn, &la, &em), AG_ERR_STORAGE);
    if (!strstr(em.text, scans[i].what)) fprintf(stderr, "  %s: got '%s'\n", scans[i].what, em.text);
    CHECK(strstr(em.text, scans[i].what) != NULL);
  }
  store_close(s);
  unit_rmrf(root);
  free(root);
  free(dir);
}

static void test_too_big_rejected(void) {
  char *root, *dir = tmp_db(&root);
  store *s = open_ok(dir);
  if (!s) return;
  big_arg a;
  a.huge = malloc(STORE_TEXT_LEN + 2);
  memset(a.huge, 'h', STORE_TEXT_LEN + 1);
  a.huge[STORE_TEXT_LEN + 1] = '\0';
  a.exact = a.huge + 1; /* exactly STORE_TEXT_LEN */
  memset(a.title, 't', sizeof a.title - 1);
  a.title[sizeof a.title - 1] = '\0';
  memset(a.id, 'i', sizeof a.id - 1);
  a.id[sizeof a.id - 1] = '\0';
  for (a.which = 0; a.which <= 6; a.which++) {
    ag_errmsg em = {{0}};
    CHECK_INT(store_write(s, too_big_tx, &a, &em), AG_ERR_TOO_BIG);
    CHECK(strstr(em.text, "longer than") != NULL);
    CHECK_INT(store_read(s, exists_tx, NULL, &em), AG_ERR_NOT_FOUND); /* nothing was written */
  }
  /* Right at the caps everything is accepted and read back whole. */
  CHECK_INT(write_tx(s, exact_tx, &a), AG_OK);
  ag_errmsg em;
  CHECK_INT(store_read(s, exact_check_tx, &a, &em), AG_OK);
  free(a.huge);
  store_close(s);
  unit_rmrf(root);
  free(root);
  free(dir);
}

static int abort_tx(store_txn *t, void *arg) {
  (void)arg;
  int rc = put_world(t, "w");
  if (!rc) rc = put_chat(t, "w", "c", 1, 1);
  if (!rc) rc = put_msg(t, "c", 1, "alice", "hi");
  return rc ? rc : AG_ERR_CANCELLED; /* the caller's own failure, after good writes */
}

static int ignore_error_tx(store_txn *t, void *arg) {
  (void)arg;
  int rc = put_world(t, "w");
  if (!rc) rc = put_chat(t, "w", "c", 1, 1);
  if (rc) return rc;
  /* A rejected input leaves the transaction usable: fn may carry on and commit. */
  (void)put_msg(t, "c", 0, "alice", "bad seq");
  return put_msg(t, "c", 1, "alice", "good");
}

static int nested_tx(store_txn *t, void *arg) {
  store *s = arg;
  ag_errmsg em;
  CHECK_INT(store_write(s, abort_tx, NULL, &em), AG_ERR_STATE);
  CHECK_INT(store_read(s, exists_tx, NULL, &em), AG_ERR_STATE);
  return put_world(t, "nested");
}

static int readonly_tx(store_txn *t, void *arg) {
  (void)arg;
  CHECK_INT(put_world(t, "x"), AG_ERR_STATE);
  CHECK_INT(store_chat_delete(t, "c"), AG_ERR_STATE);
  CHECK_INT(store_memory_clear(t, "c", NULL), AG_ERR_STATE);
  CHECK_INT(store_agent_state_clear(t, "c", NULL), AG_ERR_STATE);
  return AG_OK;
}

static void test_abort_writes_nothing(void) {
  char *root, *dir = tmp_db(&root);
  store *s = open_ok(dir);
  if (!s) return;
  ag_errmsg em;
  CHECK_INT(store_write(s, abort_tx, NULL, &em), AG_ERR_CANCELLED);
  CHECK_INT(store_read(s, exists_tx, NULL, &em), AG_ERR_NOT_FOUND);
  CHECK_INT(write_tx(s, ignore_error_tx, NULL), AG_OK);
  CHECK_INT(store_read(s, exists_tx, NULL, &em), AG_OK);
  CHECK_INT(write_tx(s, nested_tx, s), AG_OK);
  CHECK_INT(store_read(s, readonly_tx, NULL, &em), AG_OK);
  store_close(s);
  unit_rmrf(root);
  free(root);
  free(dir);
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

static const unit_test tests[] = {
  UNIT(test_open_reopen), UNIT(test_background_sync), UNIT(test_file_modes), UNIT(test_schema_newer_refused),
  UNIT(test_foreign_lmdb_refused), UNIT(test_open_errors), UNIT(test_map_growth),
  UNIT(test_map_grown_by_other_process), UNIT(test_chat_list_newest_first), UNIT(test_world_scoping),
  UNIT(test_chat_delete), UNIT(test_latest_fallback), UNIT(test_messages), UNIT(test_memories),
  UNIT(test_agent_states), UNIT(test_corrupt_records), UNIT(test_too_big_rejected),
  UNIT(test_abort_writes_nothing), UNIT(test_default_dir), UNIT(test_chat_ids),
};

int main(int argc, char **argv) { return unit_main(argc, argv, tests, sizeof tests / sizeof *tests); }
