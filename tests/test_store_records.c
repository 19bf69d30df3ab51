/* Tests of the LMDB storage layer (storage/store.h), the records of a chat: messages, memories, agent
 * states, their size caps, corrupt records, and aborted or misused transactions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/store.h"
#include "support/suite.h"
#include "support/tstore.h"
#include "support/unit.h"

/* ---- Messages, memories, agent states ----------------------------------------------------------- */

static int messages_tx(store_txn *t, void *arg) {
  (void)arg;
  int rc = tstore_put_world(t, "w");
  if (!rc) rc = tstore_put_chat(t, "w", "m", 1, 300);
  if (!rc) rc = tstore_put_chat(t, "w", "m2", 1, 1); /* "m" is a prefix of "m2" */
  /* Out of order and past 255, so the big-endian keys are what orders them. Kinds are any byte: storage
   * keeps them without reading them. */
  for (uint64_t q = 300; !rc && q >= 1; q--) {
    char text[32];
    snprintf(text, sizeof text, "message %llu", (unsigned long long)q);
    store_message msg = {.seq = q, .ts_ms = (int64_t)q, .kind = (uint8_t)(q * 37), .sender = "bob", .text = text};
    rc = store_message_put(t, "m", &msg);
  }
  if (!rc) rc = tstore_put_msg(t, "m2", 1, "carol", "other chat");
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
  CHECK_INT(tstore_put_msg(t, "m", 5, "bob", "again"), AG_ERR_EXISTS); /* messages are immutable */
  CHECK_INT(tstore_put_msg(t, "m", 0, "bob", "zero"), AG_ERR_INVALID);
  CHECK_INT(tstore_put_msg(t, "ghost", 1, "bob", "nobody"), AG_ERR_NOT_FOUND);
  CHECK_INT(tstore_put_msg(t, "m", 400, "", "no sender"), AG_ERR_INVALID);
  /* The kind is opaque: the highest byte goes in and comes back unchanged. */
  store_message odd = {.seq = 401, .kind = 255, .sender = "bob", .text = "?"};
  CHECK_INT(store_message_put(t, "m", &odd), AG_OK);
  CHECK_INT(store_message_get(t, "m", 401, &m), AG_OK);
  CHECK_INT(m.kind, 255);
  store_message_free(&m);
  return AG_OK;
}

static void test_messages(void) {
  char *root, *dir;
  store *s = tstore_start(&root, &dir);
  if (!s) return;
  ag_errmsg em;
  CHECK_INT(tstore_write_tx(s, messages_tx, NULL), AG_OK);
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
  CHECK_INT(tstore_write_tx(s, message_misc_tx, NULL), AG_OK);
  tstore_done(s, root, dir);
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
  int rc = tstore_put_world(t, "w");
  if (!rc) rc = tstore_put_chat(t, "w", "c", 1, 5);
  for (uint64_t q = 1; !rc && q <= 5; q++) rc = tstore_put_msg(t, "c", q, "x", "t");
  /* "a" is a prefix of "ab": separate memories. */
  uint64_t order[] = {3, 1, 4, 1, 5};
  for (int i = 0; !rc && i < 2; i++) rc = store_memory_append(t, "c", "a", order[i]);
  if (!rc) rc = store_memory_append_all(t, "c", "a", order + 2, 3); /* after the two, in order */
  if (!rc) rc = store_memory_append_all(t, "c", "ab", (uint64_t[]){2, 5}, 2);
  if (rc) return rc;
  CHECK_INT(store_memory_append(t, "c", "a", 6), AG_ERR_NOT_FOUND);  /* not a stored message */
  /* every seq is checked before anything is written: "ab" keeps its two */
  CHECK_INT(store_memory_append_all(t, "c", "ab", (uint64_t[]){1, 6}, 2), AG_ERR_NOT_FOUND);
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
  char *root, *dir;
  store *s = tstore_start(&root, &dir);
  if (!s) return;
  ag_errmsg em;
  seqs x[2];
  CHECK_INT(tstore_write_tx(s, memory_tx, NULL), AG_OK);
  CHECK_INT(store_read(s, memory_scan_tx, x, &em), AG_OK);
  CHECK_INT(x[0].n, 5);
  CHECK(x[0].v[0] == 3 && x[0].v[1] == 1 && x[0].v[2] == 4 && x[0].v[3] == 1 && x[0].v[4] == 5);
  CHECK_INT(x[1].n, 2);
  CHECK(x[1].v[0] == 2 && x[1].v[1] == 5);
  CHECK_INT(tstore_write_tx(s, memory_clear_tx, "a"), AG_OK);
  CHECK_INT(store_read(s, memory_scan_tx, x, &em), AG_OK);
  CHECK_INT(x[0].n, 0);
  CHECK_INT(x[1].n, 2);
  CHECK_INT(tstore_write_tx(s, memory_append_after_clear_tx, NULL), AG_OK);
  CHECK_INT(store_read(s, memory_scan_tx, x, &em), AG_OK);
  CHECK_INT(x[0].n, 1);
  CHECK_INT(x[0].v[0], 2);
  CHECK_INT(tstore_write_tx(s, memory_clear_tx, NULL), AG_OK);
  CHECK_INT(store_read(s, memory_scan_tx, x, &em), AG_OK);
  CHECK_INT(x[0].n + x[1].n, 0);
  tstore_done(s, root, dir);
}

/* A batch of thread steps: after what the thread holds, in order; a step too long or a chat that does
 * not exist writes none of them. */
static int thread_tx(store_txn *t, void *arg) {
  (void)arg;
  int rc = tstore_put_world(t, "w");
  if (!rc) rc = tstore_put_chat(t, "w", "c", 1, 0);
  if (!rc) rc = store_thread_append(t, "c", "{\"n\":1}");
  if (!rc) rc = store_thread_append_all(t, "c", "{\"n\":2}\0{\"n\":3}\0{}", 3);
  if (!rc) rc = store_thread_append_all(t, "c", "", 0);
  if (rc) return rc;
  char *big = malloc(STORE_TEXT_LEN + 16);
  if (!big) return AG_ERR_NOMEM;
  memcpy(big, "{}", 3);
  memset(big + 3, 'x', STORE_TEXT_LEN + 1);
  big[STORE_TEXT_LEN + 4] = '\0';
  CHECK_INT(store_thread_append_all(t, "c", big, 2), AG_ERR_TOO_BIG);
  free(big);
  CHECK_INT(store_thread_append_all(t, "nochat", "{}", 1), AG_ERR_NOT_FOUND);
  return AG_OK;
}

static int collect_step(const char *json, size_t len, void *arg) {
  char *all = arg;
  size_t used = strlen(all);
  if (used + len + 2 < 256) snprintf(all + used, 256 - used, "%.*s|", (int)len, json);
  return 0;
}

static int thread_scan_tx(store_txn *t, void *arg) { return store_thread_scan(t, "c", collect_step, arg); }

static void test_thread_batches(void) {
  char *root, *dir;
  store *s = tstore_start(&root, &dir);
  if (!s) return;
  char all[256] = "";
  CHECK_INT(tstore_write_tx(s, thread_tx, NULL), AG_OK);
  CHECK_INT(store_read(s, thread_scan_tx, all, NULL), AG_OK);
  CHECK_STR(all, "{\"n\":1}|{\"n\":2}|{\"n\":3}|{}|");
  tstore_done(s, root, dir);
}

static int states_tx(store_txn *t, void *arg) {
  (void)arg;
  int rc = tstore_put_world(t, "w");
  if (!rc) rc = tstore_put_chat(t, "w", "c", 1, 0);
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
  tstore_ids *x = arg;
  size_t n = strlen(x->text);
  snprintf(x->text + n, sizeof x->text - n, "%s%s=%d/%d/%llu", n ? "," : "", agent, (int)st->turn_count,
           (int)st->notice_sent, (unsigned long long)st->counter);
  return 0;
}

static int states_check_tx(store_txn *t, void *arg) {
  tstore_ids *x = arg;
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
  char *root, *dir;
  store *s = tstore_start(&root, &dir);
  if (!s) return;
  ag_errmsg em;
  tstore_ids x;
  CHECK_INT(tstore_write_tx(s, states_tx, NULL), AG_OK);
  CHECK_INT(store_read(s, states_check_tx, &x, &em), AG_OK);
  CHECK_STR(x.text, "alice=3/1/1099511627776,bob=-1/0/2");
  CHECK_INT(store_read(s, states_get_tx, NULL, &em), AG_OK);
  CHECK_INT(tstore_write_tx(s, states_clear_tx, "bob"), AG_OK);
  CHECK_INT(tstore_write_tx(s, states_clear_tx, "nobody"), AG_OK);
  CHECK_INT(store_read(s, states_check_tx, &x, &em), AG_OK);
  CHECK_STR(x.text, "alice=3/1/1099511627776");
  CHECK_INT(tstore_write_tx(s, states_clear_tx, NULL), AG_OK);
  CHECK_INT(store_read(s, states_check_tx, &x, &em), AG_OK);
  CHECK_STR(x.text, "");
  tstore_done(s, root, dir);
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
  int rc = tstore_put_world(t, "w");
  if (!rc) rc = tstore_put_chat(t, "w", "c", 1, 0);
  if (rc) return rc;
  store_chat c = {.id = "c", .world_id = "w", .title = a->title};
  switch (a->which) {
  case 0: return tstore_put_msg(t, "c", 1, "alice", a->huge);
  case 1: return store_chat_put(t, &c);
  case 2: return tstore_put_chat(t, "w", a->id, 1, 0);
  case 3: return tstore_put_msg(t, "c", 1, a->id, "hi");
  case 4: return store_memory_append(t, "c", a->id, 1);
  default: return tstore_put_chat(t, a->id, "c2", 1, 0);
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
  int rc = tstore_put_world(t, "w");
  store_chat c = {.id = a->id, .world_id = "w", .title = a->title};
  if (!rc) rc = store_chat_put(t, &c);
  if (!rc) rc = tstore_put_msg(t, a->id, 1, a->id, a->exact);
  if (!rc) rc = store_memory_append(t, a->id, a->id, 1);
  /* A world's settings are not held to a message's cap (a 10,000-agent world's are 3 MB): over it is fine. */
  store_world w = {.id = "big", .name = "big", .settings_json = a->huge};
  if (!rc) rc = store_world_put(t, &w);
  return rc;
}

static int exact_check_tx(store_txn *t, void *arg) {
  big_arg *a = arg;
  store_message m;
  store_world w;
  int rc = store_message_get(t, a->id, 1, &m);
  if (rc) return rc;
  CHECK_INT(m.text_len, STORE_TEXT_LEN);
  CHECK(memcmp(m.text, a->exact, STORE_TEXT_LEN) == 0);
  store_message_free(&m);
  if ((rc = store_world_get(t, "big", &w))) return rc;
  CHECK(strcmp(w.settings_json, a->huge) == 0);
  store_world_free(&w);
  return AG_OK;
}

/* ---- Corrupt records ---------------------------------------------------------------------------- */

static int corrupt_setup_tx(store_txn *t, void *arg) {
  (void)arg;
  store_agent_state st = {.turn_count = 1};
  store_context ctx = {.version = 1, .data_json = "{}"};
  int rc = tstore_put_world(t, "w");
  if (!rc) rc = tstore_put_chat(t, "w", "c", 5, 1);
  if (!rc) rc = tstore_put_msg(t, "c", 1, "bob", "hi");
  if (!rc) rc = store_agent_state_put(t, "c", "a", &st);
  if (!rc) rc = store_context_put(t, "c", "a", &ctx);
  return rc;
}

static int scan_states_tx(store_txn *t, void *arg) {
  (void)arg;
  return store_agent_state_scan(t, "c", tstore_count_state, &(int){0});
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
  return store_message_scan(t, "c", 0, tstore_count_msg, &(int){0}); /* message 1 reads, the key after it does not */
}

/* Each scan meets one record it cannot read: it fails with AG_ERR_STORAGE naming the record, no crash.
 * Keys are the range helper's business (an agent id too long, an index key too short), values the
 * decoders'. */
static void test_corrupt_records(void) {
  char *root, *dir;
  store *s = tstore_start(&root, &dir);
  if (!s) return;
  CHECK_INT(tstore_write_tx(s, corrupt_setup_tx, NULL), AG_OK);
  store_close(s);
  char key[128] = "c";
  memset(key + 2, 'x', 80); /* chat "c", then an 80-byte agent id */
  unsigned char state[13] = {0};
  CHECK_INT(tstore_raw_put_bytes(dir, "agent_state", key, 82, state, sizeof state), 0);
  CHECK_INT(tstore_raw_put_bytes(dir, "contexts", "c\0b", 3, "short", 5), 0);
  CHECK_INT(tstore_raw_put_bytes(dir, "chat_index", "w\0abc", 5, "", 0), 0);
  CHECK_INT(tstore_raw_put_bytes(dir, "messages", "c\0\0\0\0\2", 6, "", 0), 0);
  s = tstore_open_ok(dir);
  if (!s) return;
  static const struct {
    store_txn_fn fn;
    const char *what;
  } scans[] = {{scan_states_tx, "corrupt agent state"}, {scan_ctx_tx, "corrupt context"},
               {tstore_list_tx, "corrupt chat index"}, {scan_msgs_tx, "corrupt message"}};
  for (size_t i = 0; i < sizeof scans / sizeof *scans; i++) {
    ag_errmsg em = {{0}};
    tstore_list_arg la = {.world = "w"};
    CHECK_INT(store_read(s, scans[i].fn, &la, &em), AG_ERR_STORAGE);
    if (!strstr(em.text, scans[i].what)) fprintf(stderr, "  %s: got '%s'\n", scans[i].what, em.text);
    CHECK(strstr(em.text, scans[i].what) != NULL);
  }
  tstore_done(s, root, dir);
}

static void test_too_big_rejected(void) {
  char *root, *dir;
  store *s = tstore_start(&root, &dir);
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
  for (a.which = 0; a.which <= 5; a.which++) {
    ag_errmsg em = {{0}};
    CHECK_INT(store_write(s, too_big_tx, &a, &em), AG_ERR_TOO_BIG);
    CHECK(strstr(em.text, "longer than") != NULL);
    CHECK_INT(store_read(s, exists_tx, NULL, &em), AG_ERR_NOT_FOUND); /* nothing was written */
  }
  /* Right at the caps everything is accepted and read back whole. */
  CHECK_INT(tstore_write_tx(s, exact_tx, &a), AG_OK);
  ag_errmsg em;
  CHECK_INT(store_read(s, exact_check_tx, &a, &em), AG_OK);
  free(a.huge);
  tstore_done(s, root, dir);
}

static int abort_tx(store_txn *t, void *arg) {
  (void)arg;
  int rc = tstore_put_world(t, "w");
  if (!rc) rc = tstore_put_chat(t, "w", "c", 1, 1);
  if (!rc) rc = tstore_put_msg(t, "c", 1, "alice", "hi");
  return rc ? rc : AG_ERR_CANCELLED; /* the caller's own failure, after good writes */
}

static int ignore_error_tx(store_txn *t, void *arg) {
  (void)arg;
  int rc = tstore_put_world(t, "w");
  if (!rc) rc = tstore_put_chat(t, "w", "c", 1, 1);
  if (rc) return rc;
  /* A rejected input leaves the transaction usable: fn may carry on and commit. */
  (void)tstore_put_msg(t, "c", 0, "alice", "bad seq");
  return tstore_put_msg(t, "c", 1, "alice", "good");
}

static int nested_tx(store_txn *t, void *arg) {
  store *s = arg;
  ag_errmsg em;
  CHECK_INT(store_write(s, abort_tx, NULL, &em), AG_ERR_STATE);
  CHECK_INT(store_read(s, exists_tx, NULL, &em), AG_ERR_STATE);
  return tstore_put_world(t, "nested");
}

static int readonly_tx(store_txn *t, void *arg) {
  (void)arg;
  CHECK_INT(tstore_put_world(t, "x"), AG_ERR_STATE);
  CHECK_INT(store_chat_delete(t, "c"), AG_ERR_STATE);
  CHECK_INT(store_memory_clear(t, "c", NULL), AG_ERR_STATE);
  CHECK_INT(store_agent_state_clear(t, "c", NULL), AG_ERR_STATE);
  return AG_OK;
}

static void test_abort_writes_nothing(void) {
  char *root, *dir;
  store *s = tstore_start(&root, &dir);
  if (!s) return;
  ag_errmsg em;
  CHECK_INT(store_write(s, abort_tx, NULL, &em), AG_ERR_CANCELLED);
  CHECK_INT(store_read(s, exists_tx, NULL, &em), AG_ERR_NOT_FOUND);
  CHECK_INT(tstore_write_tx(s, ignore_error_tx, NULL), AG_OK);
  CHECK_INT(store_read(s, exists_tx, NULL, &em), AG_OK);
  CHECK_INT(tstore_write_tx(s, nested_tx, s), AG_OK);
  CHECK_INT(store_read(s, readonly_tx, NULL, &em), AG_OK);
  tstore_done(s, root, dir);
}

SUITE_RUN((UNIT(test_messages), UNIT(test_memories), UNIT(test_thread_batches), UNIT(test_agent_states),
  UNIT(test_corrupt_records), UNIT(test_too_big_rejected), UNIT(test_abort_writes_nothing)))
