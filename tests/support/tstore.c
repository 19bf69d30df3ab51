/* Helpers for the storage tests (see tstore.h), moved from test_store.c when it was split. */
#include "support/tstore.h"

#include "support/unit.h"

#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *tstore_tmp_db(char **root) {
  *root = unit_tmpdir();
  char *dir = malloc(strlen(*root) + 16);
  sprintf(dir, "%s/a/b/db", *root); /* nested and missing: store_open creates it */
  return dir;
}

store *tstore_open_ok(const char *dir) {
  store *s = NULL;
  ag_errmsg em = {{0}};
  int rc = store_open(dir, &s, &em);
  if (rc) fprintf(stderr, "  store_open: %s\n", em.text);
  CHECK_INT(rc, AG_OK);
  return s;
}

store *tstore_start(char **root, char **dir) {
  *dir = tstore_tmp_db(root);
  store *s = tstore_open_ok(*dir);
  if (!s) {
    tstore_done(NULL, *root, *dir);
    *root = *dir = NULL;
  }
  return s;
}

void tstore_done(store *s, char *root, char *dir) {
  if (s) store_close(s);
  unit_rmrf(root);
  free(root);
  free(dir);
}

/* Runs fn in a write transaction and prints the detail on an unexpected failure. */
int tstore_write_tx(store *s, store_txn_fn fn, void *arg) {
  ag_errmsg em = {{0}};
  int rc = store_write(s, fn, arg, &em);
  if (rc && getenv("TEST_VERBOSE")) fprintf(stderr, "  store_write: %d %s\n", rc, em.text);
  return rc;
}

int tstore_put_world(store_txn *t, const char *id) {
  store_world w = {.id = id, .name = id, .settings_json = "{\"turn_limit\":5}", .created_at_ms = 1, .updated_at_ms = 1};
  return store_world_put(t, &w);
}

int tstore_put_chat(store_txn *t, const char *world, const char *id, int64_t updated, uint64_t count) {
  store_chat c = {.id = id, .world_id = world, .title = "New Chat", .message_count = count,
                  .created_at_ms = 1, .updated_at_ms = updated};
  return store_chat_put(t, &c);
}

int tstore_put_msg(store_txn *t, const char *chat, uint64_t seq, const char *sender, const char *text) {
  store_message m = {.seq = seq, .ts_ms = (int64_t)(1000 + seq), .kind = 3, .sender = sender, .text = text};
  return store_message_put(t, chat, &m);
}

static int collect_chat(const store_chat *c, void *arg) {
  tstore_ids *x = arg;
  size_t n = strlen(x->text);
  snprintf(x->text + n, sizeof x->text - n, "%s%s", n ? "," : "", c->id);
  return 0;
}

int tstore_list_tx(store_txn *t, void *arg) {
  tstore_list_arg *a = arg;
  a->out.text[0] = '\0';
  return store_chat_list(t, a->world, collect_chat, &a->out);
}

const char *tstore_list_chats(store *s, const char *world) {
  static tstore_list_arg a;
  a.world = world;
  ag_errmsg em;
  CHECK_INT(store_read(s, tstore_list_tx, &a, &em), AG_OK);
  return a.out.text;
}

/* Writes key=value into a named database with raw LMDB, as another program (or a newer Agora, or a
 * damaged disk) would. */
int tstore_raw_put_bytes(const char *dir, const char *db, const void *k, size_t klen, const void *v, size_t vlen) {
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

/* Scan callbacks that count what they see in the int at arg. */
int tstore_count_msg(const store_message *m, void *arg) {
  (void)m;
  (*(int *)arg)++;
  return 0;
}
int tstore_count_state(const char *agent, const store_agent_state *st, void *arg) {
  (void)agent;
  (void)st;
  (*(int *)arg)++;
  return 0;
}
