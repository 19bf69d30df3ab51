/* Helpers for the tests of the LMDB storage layer (test_store, test_store_chats, test_store_records):
 * a scratch database directory, an open that must succeed, write transactions and records put by
 * name, and the ids of a chat list. */
#ifndef AG_TEST_TSTORE_H
#define AG_TEST_TSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "storage/store.h"

/* A database directory under a new scratch directory (*root, the caller removes it and frees both):
 * nested and missing, so store_open must create it. */
char *tstore_tmp_db(char **root);
/* store_open(dir) that must succeed (the running test fails, with the detail, when it does not). */
store *tstore_open_ok(const char *dir);
/* The opening of a case on a scratch database: *root and *dir made (as tstore_tmp_db) and the store
 * opened (as tstore_open_ok); when it does not open, both are removed and freed (NULL) and NULL returned,
 * so a case that returns early leaks no scratch directory. */
store *tstore_start(char **root, char **dir);
/* The end of a case on a scratch database: closes s (NULL: none), removes root and frees root and dir. */
void tstore_done(store *s, char *root, char *dir);
/* Runs fn in a write transaction and prints the detail on an unexpected failure (TEST_VERBOSE). */
int tstore_write_tx(store *s, store_txn_fn fn, void *arg);

/* A world, a chat and a message with fixed fields besides those given. */
int tstore_put_world(store_txn *t, const char *id);
int tstore_put_chat(store_txn *t, const char *world, const char *id, int64_t updated, uint64_t count);
int tstore_put_msg(store_txn *t, const char *chat, uint64_t seq, const char *sender, const char *text);

/* Collects chat ids of a list into one comma-separated string. */
typedef struct tstore_ids {
  char text[1024];
} tstore_ids;

typedef struct tstore_list_arg {
  const char *world;
  tstore_ids out;
} tstore_list_arg;

/* A read transaction listing a->world's chats into a->out. */
int tstore_list_tx(store_txn *t, void *arg);
/* The ids of world's chats, newest first, comma-separated (static buffer). */
const char *tstore_list_chats(store *s, const char *world);

/* Writes key=value into a named database (NULL: the unnamed one) of the LMDB environment at dir with
 * raw LMDB, as another program (or a newer Agora, or a damaged disk) would; LMDB's result. */
int tstore_raw_put_bytes(const char *dir, const char *db, const void *k, size_t klen, const void *v, size_t vlen);

/* Scan callbacks that count a chat's messages or agent states in the int at arg. */
int tstore_count_msg(const store_message *m, void *arg);
int tstore_count_state(const char *agent, const store_agent_state *st, void *arg);

#endif
