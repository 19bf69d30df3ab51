/* Tests of the LMDB storage layer (storage/store.h), the chats: newest-first order, scoping by world,
 * deletes with everything a chat holds, and the latest chat as the fallback after a delete. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/store.h"
#include "support/suite.h"
#include "support/tstore.h"
#include "support/unit.h"

/* ---- Chats: order, scoping, delete, latest ------------------------------------------------------ */

typedef struct order_arg {
  int step;
} order_arg;

static int order_tx(store_txn *t, void *arg) {
  order_arg *a = arg;
  if (a->step == 0) {
    int rc = tstore_put_world(t, "w");
    if (!rc) rc = tstore_put_chat(t, "w", "c1", 100, 0);
    if (!rc) rc = tstore_put_chat(t, "w", "c2", 200, 0);
    if (!rc) rc = tstore_put_chat(t, "w", "c3", 300, 0);
    return rc;
  }
  if (a->step == 1) return tstore_put_chat(t, "w", "c1", 400, 1); /* c1 becomes the newest */
  if (a->step == 2) return tstore_put_chat(t, "w", "c3", 100, 1); /* time may go back too */
  if (a->step == 3) return tstore_put_chat(t, "w", "c2", 400, 1); /* a tie with c1: id order */
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
  char *root, *dir;
  store *s = tstore_start(&root, &dir);
  if (!s) return;
  order_arg a = {0};
  CHECK_INT(tstore_write_tx(s, order_tx, &a), AG_OK);
  CHECK_STR(tstore_list_chats(s, "w"), "c3,c2,c1");
  a.step = 1;
  CHECK_INT(tstore_write_tx(s, order_tx, &a), AG_OK);
  CHECK_STR(tstore_list_chats(s, "w"), "c1,c3,c2");
  a.step = 2;
  CHECK_INT(tstore_write_tx(s, order_tx, &a), AG_OK);
  CHECK_STR(tstore_list_chats(s, "w"), "c1,c2,c3");
  a.step = 3;
  CHECK_INT(tstore_write_tx(s, order_tx, &a), AG_OK);
  CHECK_STR(tstore_list_chats(s, "w"), "c1,c2,c3");
  a.step = 4;
  CHECK_INT(tstore_write_tx(s, order_tx, &a), AG_OK);
  CHECK_STR(tstore_list_chats(s, "w"), "c1,c2,c3");
  CHECK_STR(tstore_list_chats(s, NULL), "c1,c2,c3");
  CHECK_INT(count_chats(s, "w"), 3); /* no stale index entries left behind */
  CHECK_INT(count_chats(s, NULL), 3);
  tstore_done(s, root, dir);
}

static int scoping_tx(store_txn *t, void *arg) {
  (void)arg;
  /* "a" is a prefix of "ab": the '\0' after a world id keeps their chats apart. */
  int rc = tstore_put_world(t, "a");
  if (!rc) rc = tstore_put_world(t, "ab");
  if (!rc) rc = tstore_put_chat(t, "a", "a1", 10, 0);
  if (!rc) rc = tstore_put_chat(t, "ab", "b1", 20, 0);
  if (!rc) rc = tstore_put_chat(t, "a", "a2", 30, 0);
  if (!rc) rc = tstore_put_chat(t, "ab", "b2", 5, 0);
  return rc;
}

static int scoping_errors_tx(store_txn *t, void *arg) {
  (void)arg;
  CHECK_INT(tstore_put_chat(t, "nope", "x1", 1, 0), AG_ERR_NOT_FOUND);  /* unknown world */
  CHECK_INT(tstore_put_chat(t, "ab", "a1", 50, 0), AG_ERR_INVALID);     /* a chat never changes world */
  CHECK_INT(store_world_set_current(t, "a", "b1"), AG_ERR_INVALID); /* another world's chat */
  CHECK_INT(store_world_set_current(t, "a", "zz"), AG_ERR_NOT_FOUND);
  CHECK_INT(store_world_set_current(t, "zz", NULL), AG_ERR_NOT_FOUND);
  store_world w = {.id = "a", .name = "A", .settings_json = "{}", .current_chat = "b2"};
  CHECK_INT(store_world_put(t, &w), AG_ERR_INVALID);
  CHECK_INT(store_world_set_current(t, "a", "a1"), AG_OK);
  return AG_OK;
}

typedef struct world_ids {
  tstore_ids out;
} world_ids;

static int collect_world(const store_world *w, void *arg) {
  tstore_ids *x = arg;
  size_t n = strlen(x->text);
  snprintf(x->text + n, sizeof x->text - n, "%s%s:%s", n ? "," : "", w->id, w->current_chat);
  return 0;
}

static int worlds_tx(store_txn *t, void *arg) { return store_world_list(t, collect_world, arg); }

static void test_world_scoping(void) {
  char *root, *dir;
  store *s = tstore_start(&root, &dir);
  if (!s) return;
  CHECK_INT(tstore_write_tx(s, scoping_tx, NULL), AG_OK);
  CHECK_STR(tstore_list_chats(s, "a"), "a2,a1");
  CHECK_STR(tstore_list_chats(s, "ab"), "b1,b2");
  CHECK_STR(tstore_list_chats(s, NULL), "a2,b1,a1,b2");
  CHECK_STR(tstore_list_chats(s, "none"), "");
  CHECK_INT(count_chats(s, "a"), 2);
  CHECK_INT(count_chats(s, "ab"), 2);
  CHECK_INT(count_chats(s, "none"), 0);
  CHECK_INT(tstore_write_tx(s, scoping_errors_tx, NULL), AG_OK);
  tstore_ids w = {{0}};
  ag_errmsg em;
  CHECK_INT(store_read(s, worlds_tx, &w, &em), AG_OK);
  CHECK_STR(w.text, "a:a1,ab:");
  tstore_done(s, root, dir);
}

static int delete_setup_tx(store_txn *t, void *arg) {
  (void)arg;
  /* "c1" is a prefix of "c10": deleting c1 must leave c10's data alone. */
  int rc = tstore_put_world(t, "w");
  const char *chats[] = {"c1", "c10"};
  for (int i = 0; !rc && i < 2; i++) {
    rc = tstore_put_chat(t, "w", chats[i], 100 + i, 3);
    for (uint64_t q = 1; !rc && q <= 3; q++) rc = tstore_put_msg(t, chats[i], q, "alice", "text");
    if (!rc) rc = store_memory_append(t, chats[i], "alice", 1);
    if (!rc) rc = store_memory_append(t, chats[i], "bob", 2);
    store_agent_state st = {.turn_count = 2, .notice_sent = 0, .counter = 7};
    if (!rc) rc = store_agent_state_put(t, chats[i], "alice", &st);
    if (!rc) rc = store_agent_state_put(t, chats[i], "bob", &st);
  }
  if (!rc) rc = store_world_set_current(t, "w", "c1");
  return rc;
}

static int count_mem(uint64_t seq, void *arg) {
  (void)seq;
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
  int rc = store_message_scan(t, c->chat, 0, tstore_count_msg, &c->n[0]);
  if (!rc) rc = store_memory_scan(t, c->chat, "alice", count_mem, &c->n[1]);
  if (!rc) rc = store_memory_scan(t, c->chat, "bob", count_mem, &c->n[1]);
  if (!rc) rc = store_agent_state_scan(t, c->chat, tstore_count_state, &c->n[2]);
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
  char *root, *dir;
  store *s = tstore_start(&root, &dir);
  if (!s) return;
  ag_errmsg em;
  CHECK_INT(tstore_write_tx(s, delete_setup_tx, NULL), AG_OK);
  chat_counts c = {.chat = "c1"};
  CHECK_INT(store_read(s, chat_counts_tx, &c, &em), AG_OK);
  CHECK(c.n[0] == 3 && c.n[1] == 2 && c.n[2] == 2);
  CHECK_INT(tstore_write_tx(s, delete_tx, "c1"), AG_OK);
  CHECK_INT(store_read(s, chat_counts_tx, &c, &em), AG_OK);
  CHECK(c.n[0] == 0 && c.n[1] == 0 && c.n[2] == 0);
  c.chat = "c10";
  CHECK_INT(store_read(s, chat_counts_tx, &c, &em), AG_OK);
  CHECK(c.n[0] == 3 && c.n[1] == 2 && c.n[2] == 2);
  CHECK_STR(tstore_list_chats(s, "w"), "c10");
  CHECK_STR(tstore_list_chats(s, NULL), "c10");
  CHECK_INT(count_chats(s, NULL), 1);
  char cur[STORE_ID_MAX] = "?";
  CHECK_INT(store_read(s, current_tx, cur, &em), AG_OK);
  CHECK_STR(cur, ""); /* the world no longer points at the deleted chat */
  CHECK_INT(tstore_write_tx(s, delete_tx, "c1"), AG_ERR_NOT_FOUND);
  tstore_done(s, root, dir);
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
  int rc = tstore_put_world(t, "w");
  if (!rc) rc = tstore_put_world(t, "other");
  if (!rc) rc = tstore_put_chat(t, "w", "x", 100, 0);
  if (!rc) rc = tstore_put_chat(t, "w", "y", 300, 0);
  if (!rc) rc = tstore_put_chat(t, "w", "z", 200, 0);
  if (!rc) rc = tstore_put_chat(t, "other", "o", 999, 0); /* newer, but another world's */
  if (!rc) rc = store_world_set_current(t, "w", "y");
  return rc;
}

static void test_latest_fallback(void) {
  char *root, *dir;
  store *s = tstore_start(&root, &dir);
  if (!s) return;
  ag_errmsg em;
  CHECK_INT(tstore_write_tx(s, latest_setup_tx, NULL), AG_OK);
  char id[STORE_ID_MAX] = "y", cur[STORE_ID_MAX];
  CHECK_INT(tstore_write_tx(s, fallback_tx, id), AG_OK);
  CHECK_STR(id, "z");
  CHECK_INT(store_read(s, current_tx, cur, &em), AG_OK);
  CHECK_STR(cur, "z");
  strcpy(id, "z");
  CHECK_INT(tstore_write_tx(s, fallback_tx, id), AG_OK);
  CHECK_STR(id, "x");
  strcpy(id, "x");
  CHECK_INT(tstore_write_tx(s, fallback_tx, id), AG_OK);
  CHECK_STR(id, "none");
  CHECK_INT(store_read(s, current_tx, cur, &em), AG_OK);
  CHECK_STR(cur, "");
  CHECK_STR(tstore_list_chats(s, NULL), "o");
  CHECK_INT(store_read(s, latest_any_tx, cur, &em), AG_OK);
  CHECK_STR(cur, "o");
  tstore_done(s, root, dir);
}

SUITE_RUN((UNIT(test_chat_list_newest_first), UNIT(test_world_scoping), UNIT(test_chat_delete),
  UNIT(test_latest_fallback)))
