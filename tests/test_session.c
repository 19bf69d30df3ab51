/* The chat session manager's rules (docs/behaviour.md §6) in process, on a real LMDB store in a temporary
 * directory: titles, reuse both ways, saving with memories and turn counts, load/restore, delete with
 * fallback order, deleting the last chat, session mode off, and the events. */
#include "support/suite.h"
#include "support/tsession.h"
#include "support/unit.h"

#include "chat/resend.h"
#include "chat/session.h"
#include "chat/snapshot.h"
#include "storage/store.h"

#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

static const char *WORLD_JSON =
  "{\"name\": \"Sess\", \"turn_limit\": 3, \"agents\": ["
  " {\"name\": \"ann\", \"replies\": [\"a1\", \"a2\", \"a3\", \"a4\"]},"
  " {\"name\": \"bob\", \"replies\": [\"@ann b1\", \"b2\"]}]}";

typedef tsession fixture;

static void fx_open(fixture *f) { tsession_open(f, WORLD_JSON); }
/* Reopens the world and session on the same store (a restart). */
static void fx_restart(fixture *f) { tsession_restart(f, WORLD_JSON); }
static void fx_close(fixture *f) { tsession_close(f); }
static void say(fixture *f, const char *sender, const char *text) { tsession_say(f, sender, text); }

/* A fresh fixture on a new chat, made current; its id into id. */
static void fx_open_chat(fixture *f, char id[STORE_ID_MAX]) {
  fx_open(f);
  CHECK_INT(chat_session_new(f->cs, NULL), AG_OK);
  snprintf(id, STORE_ID_MAX, "%s", chat_session_current(f->cs));
}

typedef struct stored_info {
  char title[600];
  uint64_t count, stored;
  int64_t updated;
  int found;
} stored_info;

typedef struct info_ctx {
  const char *id;
  stored_info *out;
} info_ctx;

static int count_cb(const store_message *m, void *arg) {
  (void)m;
  ((stored_info *)arg)->stored++;
  return 0;
}

static int info_txn(store_txn *t, void *arg) {
  info_ctx *ic = arg;
  store_chat c;
  if (store_chat_get(t, ic->id, &c)) return AG_OK;
  ic->out->found = 1;
  snprintf(ic->out->title, sizeof ic->out->title, "%s", c.title);
  ic->out->count = c.message_count;
  ic->out->updated = c.updated_at_ms;
  store_chat_free(&c);
  return store_message_scan(t, ic->id, 1, count_cb, ic->out);
}

static stored_info info(fixture *f, const char *id) {
  stored_info ci;
  memset(&ci, 0, sizeof ci);
  info_ctx ic = {id, &ci};
  store_read(f->st, info_txn, &ic, NULL);
  return ci;
}

static void title_from_first_human_message(void) {
  fixture f;
  fx_open(&f);
  CHECK(chat_session_current(f.cs) == NULL); /* a new world has no chat: session mode off */
  CHECK_INT(chat_session_new(f.cs, NULL), AG_OK);
  char id[STORE_ID_MAX];
  snprintf(id, sizeof id, "%s", chat_session_current(f.cs));
  CHECK_STR(chat_session_title(f.cs), "New Chat");
  say(&f, "world", "Rain starts.");         /* not human: no title */
  CHECK_STR(info(&f, id).title, "New Chat");
  say(&f, "human", "@ann @bob hi!");          /* nothing left after stripping: stays New Chat */
  CHECK_STR(info(&f, id).title, "New Chat");
  say(&f, "human", "Hello, can you help me plan a **trip** to [Lisbon](https://x.y)?");
  CHECK_STR(info(&f, id).title, "Plan a trip to Lisbon?");
  CHECK_STR(chat_session_title(f.cs), "Plan a trip to Lisbon?");
  say(&f, "human", "@ann something else entirely");
  CHECK_STR(info(&f, id).title, "Plan a trip to Lisbon?"); /* only the first titling message counts */
  CHECK(strstr(f.log.text, "-- title-updated\n") != NULL);
  /* Saved with every message: the stored count equals the stored messages. */
  stored_info ci = info(&f, id);
  CHECK(ci.count > 5);
  CHECK_INT(ci.count, ci.stored);
  CHECK_INT(ci.count, world_last_seq(f.w));
  fx_close(&f);
}

static void reuse_both_ways(void) {
  fixture f;
  char first[STORE_ID_MAX];
  fx_open_chat(&f, first);
  world_run_until_quiet(f.w);
  /* Empty: reused. */
  f.log.text[0] = '\0';
  CHECK_INT(chat_session_new(f.cs, NULL), AG_OK);
  CHECK_STR(chat_session_current(f.cs), first);
  world_run_until_quiet(f.w);
  CHECK_STR(f.log.text, "-- chat-reused\n");
  /* Messages but still titled New Chat: reused too, memories and counts reset, messages kept. */
  say(&f, "world", "The vote opens.");
  uint64_t before = info(&f, first).count;
  CHECK(before >= 3);
  CHECK(agent_turn_state(world_agent_find(f.w, "ann")).count > 0);
  CHECK_INT(chat_session_new(f.cs, NULL), AG_OK);
  CHECK_STR(chat_session_current(f.cs), first);
  size_t n;
  agent_memory(world_agent_find(f.w, "ann"), &n);
  CHECK_INT(n, 0);
  CHECK_INT(agent_turn_state(world_agent_find(f.w, "ann")).count, 0);
  CHECK_INT(info(&f, first).count, before);
  say(&f, "human", "@bob go on"); /* seq continues after the kept messages; the chat gets a title */
  CHECK_INT(info(&f, first).count, before + 2);
  CHECK_STR(info(&f, first).title, "Go on");
  /* Titled with messages: a fresh chat. */
  f.log.text[0] = '\0';
  CHECK_INT(chat_session_new(f.cs, NULL), AG_OK);
  CHECK(strcmp(chat_session_current(f.cs), first) != 0);
  CHECK_STR(chat_session_title(f.cs), "New Chat");
  world_run_until_quiet(f.w);
  CHECK_STR(f.log.text, "-- new-chat-created\n");
  CHECK_INT(world_last_seq(f.w), 0);
  CHECK_INT(info(&f, first).count, before + 2); /* the old chat is intact */
  fx_close(&f);
}

static void load_restores_memories_and_counts(void) {
  fixture f;
  fx_open(&f);
  chat_session_new(f.cs, NULL);
  char a[STORE_ID_MAX];
  snprintf(a, sizeof a, "%s", chat_session_current(f.cs));
  say(&f, "human", "@bob start here"); /* bob: "@ann b1" → ann: "a1" (auto-mention @bob) → bob: "b2" */
  agent *ann = world_agent_find(f.w, "ann"), *bob = world_agent_find(f.w, "bob");
  size_t ann_n, bob_n;
  agent_memory(ann, &ann_n);
  agent_memory(bob, &bob_n);
  turn_state bob_ts = agent_turn_state(bob);
  CHECK(ann_n > 0 && bob_n > 0);
  chat_session_new(f.cs, NULL);
  say(&f, "human", "@ann other chat");
  /* Back to the first chat: memories and counts come back exactly. */
  CHECK_INT(chat_session_load(f.cs, a, NULL), AG_OK);
  size_t n;
  ag_msg *const *mem = agent_memory(world_agent_find(f.w, "bob"), &n);
  CHECK_INT(n, bob_n);
  CHECK_STR(mem[0]->text, "@bob start here");
  CHECK_INT(mem[0]->seq, 1);
  CHECK_INT(agent_turn_state(world_agent_find(f.w, "bob")).count, bob_ts.count);
  agent_memory(world_agent_find(f.w, "ann"), &n);
  CHECK_INT(n, ann_n);
  /* After a restart the current chat is the loaded one and resumes the same way. */
  fx_restart(&f);
  CHECK_STR(chat_session_current(f.cs), a);
  CHECK_INT(chat_session_resume(f.cs, NULL), AG_OK);
  agent_memory(world_agent_find(f.w, "bob"), &n);
  CHECK_INT(n, bob_n);
  uint64_t last = world_last_seq(f.w);
  say(&f, "human", "@ann continue");
  CHECK_INT(info(&f, a).count, last + 2);
  CHECK_INT(info(&f, a).stored, last + 2);
  /* Unknown chat: an error naming it, nothing changed. */
  ag_errmsg em = {""};
  CHECK_INT(chat_session_load(f.cs, "nosuchchat", &em), AG_ERR_NOT_FOUND);
  CHECK(strstr(em.text, "nosuchchat") != NULL);
  CHECK_STR(chat_session_current(f.cs), a);
  fx_close(&f);
}

/* A clock that moves one millisecond each time the session reads it: every save is later than the one
 * before, however fast the machine (two saves in one millisecond made "updated last" a tie). */
static int64_t ticking(void *ms) { return ++*(int64_t *)ms; }

static void delete_with_fallback_order(void) {
  fixture f;
  fx_open(&f);
  int64_t clock_ms = 1767225600000; /* 2026-01-01 */
  chat_session_set_clock(f.cs, ticking, &clock_ms);
  char ids[3][STORE_ID_MAX];
  for (int i = 0; i < 3; i++) {
    chat_session_new(f.cs, NULL);
    snprintf(ids[i], sizeof ids[i], "%s", chat_session_current(f.cs));
    char text[64];
    snprintf(text, sizeof text, "@ann topic number %d", i);
    say(&f, "human", text);
  }
  /* Make the first chat the most recently updated one, then delete the current (third). */
  CHECK_INT(chat_session_load(f.cs, ids[0], NULL), AG_OK);
  say(&f, "human", "@ann back to the first");
  CHECK(info(&f, ids[0]).updated > info(&f, ids[1]).updated); /* stamped by the session's clock */
  CHECK(info(&f, ids[0]).updated <= clock_ms);
  CHECK_INT(chat_session_load(f.cs, ids[2], NULL), AG_OK);
  f.log.text[0] = '\0';
  CHECK_INT(chat_session_delete(f.cs, ids[2], NULL), AG_OK);
  CHECK_STR(chat_session_current(f.cs), ids[0]);
  CHECK(!info(&f, ids[2]).found);
  world_run_until_quiet(f.w);
  CHECK_STR(f.log.text, "-- chat-deleted\n");
  size_t n;
  agent_memory(world_agent_find(f.w, "ann"), &n);
  CHECK(n >= 4); /* the fallback chat was restored into the agents */
  /* Deleting a chat that is not current changes nothing else. */
  CHECK_INT(chat_session_delete(f.cs, ids[1], NULL), AG_OK);
  CHECK_STR(chat_session_current(f.cs), ids[0]);
  /* Deleting the last chat: session mode off; messages are processed but not saved. */
  CHECK_INT(chat_session_delete(f.cs, ids[0], NULL), AG_OK);
  CHECK(chat_session_current(f.cs) == NULL);
  agent_memory(world_agent_find(f.w, "ann"), &n);
  CHECK_INT(n, 0);
  f.log.text[0] = '\0';
  say(&f, "human", "@ann anyone home?");
  CHECK(strstr(f.log.text, "ann: a") != NULL);         /* processed */
  CHECK(strstr(f.log.text, "state-saved") == NULL);   /* not saved */
  ag_errmsg em = {""};
  CHECK_INT(chat_session_delete(f.cs, ids[0], &em), AG_ERR_NOT_FOUND);
  fx_restart(&f);
  CHECK(chat_session_current(f.cs) == NULL);
  fx_close(&f);
}

static void manual_title(void) {
  fixture f;
  fx_open(&f);
  ag_errmsg em = {""};
  CHECK_INT(chat_session_set_title(f.cs, "x", &em), AG_ERR_STATE);
  chat_session_new(f.cs, NULL);
  CHECK_INT(chat_session_set_title(f.cs, "My title", NULL), AG_OK);
  CHECK_STR(info(&f, chat_session_current(f.cs)).title, "My title");
  say(&f, "human", "@ann this does not retitle");
  CHECK_STR(chat_session_title(f.cs), "My title");
  fx_close(&f);
}

/* A snapshot carries the memories and counts; importing it creates a new chat with the same state. */
static void snapshot_round_trip_state(void) {
  fixture f;
  fx_open(&f);
  chat_session_new(f.cs, NULL);
  say(&f, "human", "@bob \"quoted\" and 🎉");
  char a[STORE_ID_MAX];
  snprintf(a, sizeof a, "%s", chat_session_current(f.cs));
  cJSON *snap = NULL;
  ag_errmsg em = {""};
  CHECK_INT(chat_snapshot_export(f.st, a, &snap, &em), AG_OK);
  CHECK_INT(chat_snapshot_validate(snap, "snap", &em), AG_OK);
  char b[STORE_ID_MAX];
  CHECK_INT(chat_snapshot_import(f.st, snap, "snap", b, &em), AG_OK);
  CHECK(strcmp(a, b) != 0);
  cJSON *snap2 = NULL;
  CHECK_INT(chat_snapshot_export(f.st, b, &snap2, &em), AG_OK);
  /* Everything but the chat's own id is the same. */
  cJSON_DeleteItemFromObject(cJSON_GetObjectItem(snap, "chat"), "id");
  cJSON_DeleteItemFromObject(cJSON_GetObjectItem(snap2, "chat"), "id");
  CHECK(cJSON_Compare(snap, snap2, 1));
  /* Loading the imported chat restores the same memories. */
  size_t n_a;
  agent_memory(world_agent_find(f.w, "bob"), &n_a);
  CHECK_INT(chat_session_load(f.cs, b, NULL), AG_OK);
  size_t n_b;
  ag_msg *const *mem = agent_memory(world_agent_find(f.w, "bob"), &n_b);
  CHECK_INT(n_a, n_b);
  CHECK_STR(mem[0]->text, "@bob \"quoted\" and 🎉");
  cJSON_Delete(snap);
  cJSON_Delete(snap2);
  fx_close(&f);
}

typedef struct mem_count {
  size_t n;
  uint64_t last;
} mem_count;

static int mem_count_cb(uint64_t seq, void *arg) {
  mem_count *mc = arg;
  mc->n++;
  mc->last = seq;
  return 0;
}

typedef struct mem_q {
  const char *chat, *agent;
  mem_count out;
} mem_q;

static int mem_txn(store_txn *t, void *arg) {
  mem_q *q = arg;
  return store_memory_scan(t, q->chat, q->agent, mem_count_cb, &q->out);
}

/* A long conversation: RAM keeps only the newest memory entries, storage keeps them all. */
static void long_chat_memory_trimmed_in_ram_not_in_storage(void) {
  char *dir = unit_tmpdir();
  store *st = NULL;
  CHECK_INT(store_open(dir, &st, NULL), AG_OK);
  struct event_base *base = event_base_new();
  world *w = tworld_make(base, "{\"name\": \"Long\", \"turn_limit\": 400, \"memory_window\": 4, \"agents\": ["
                               "{\"name\": \"p\", \"replies\": [\"@q ping\"]}, {\"name\": \"q\", \"replies\": [\"@p pong\"]}]}");
  chat_session *cs = NULL;
  CHECK_INT(chat_session_open(st, w, &cs, NULL), AG_OK);
  CHECK_INT(chat_session_new(cs, NULL), AG_OK);
  world_publish(w, "human", "@p go", NULL);
  CHECK_INT(world_run_until_quiet(w), AG_OK);
  agent *p = world_agent_find(w, "p");
  size_t n;
  ag_msg *const *mem = agent_memory(p, &n);
  CHECK(agent_memory_total(p) > 790);
  CHECK(n < agent_memory_total(p));       /* trimmed in RAM */
  CHECK(n >= 4);
  mem_q q = {chat_session_current(cs), "p", {0, 0}};
  store_read(st, mem_txn, &q, NULL);
  CHECK_INT(q.out.n, agent_memory_total(p));   /* all in storage */
  CHECK_INT(q.out.last, mem[n - 1]->seq);
  chat_session_free(cs);
  world_free(w);
  event_base_free(base);
  store_close(st);
  unit_rmrf(dir);
  free(dir);
}

/* The second line of defence: a seq another writer took in the meantime moves the pending messages
 * after it, inside the save transaction; nothing is rejected and the agents' memories follow. */
typedef struct intruder {
  const char *chat;
  uint64_t seq;
} intruder;

static int intrude_txn(store_txn *t, void *arg) {
  intruder *in = arg;
  store_message m = {in->seq, 1, 0, "other", "written by another process", 0, NULL, 0, 0};
  return store_message_put(t, in->chat, &m);
}

static void taken_seqs_move_pending_messages(void) {
  fixture f;
  char id[STORE_ID_MAX];
  fx_open_chat(&f, id);
  say(&f, "human", "@ann hi");
  uint64_t before = world_last_seq(f.w);
  intruder in = {id, before + 1};
  CHECK_INT(store_write(f.st, intrude_txn, &in, NULL), AG_OK);
  say(&f, "human", "@ann again");
  CHECK_INT(chat_session_failures(f.cs), 0);
  CHECK(strstr(f.log.text, "-- seqs-moved") != NULL);
  stored_info ci = info(&f, id);
  CHECK_INT(ci.stored, before + 3); /* ours, the intruder's, and our two new ones */
  CHECK_INT(ci.count, before + 3);
  CHECK_INT(world_last_seq(f.w), before + 3);
  /* A restart restores ann's memory with the moved seqs (each one is a stored message). */
  fx_restart(&f);
  CHECK_INT(chat_session_resume(f.cs, NULL), AG_OK);
  size_t n;
  ag_msg *const *mem = agent_memory(world_agent_find(f.w, "ann"), &n);
  CHECK_INT(n, 4);
  if (n == 4) CHECK_STR(mem[3]->text, "a2");
  fx_close(&f);
}

/* Group commit across a long fan-out: 2,000 scripted agents answer one message, their replies reaching the
 * bus in rounds of AG_DEFER_BATCH (common/defer.h); the session holds its commit while rounds are left,
 * so the whole answer is a couple of transactions, not one a round (31 before: bench_llm_scale's replay
 * ran at half speed), and every reply is stored. */
static void a_fan_out_is_one_commit(void) {
  enum { N = 2000 };
  size_t cap = 128 + N * 64, len = 0;
  char *json = malloc(cap);
  if (!json) return;
  len += (size_t)snprintf(json, cap, "{\"name\": \"Fan\", \"agents\": [");
  for (int i = 0; i < N; i++)
    len += (size_t)snprintf(json + len, cap - len, "%s{\"name\": \"a%04d\", \"replies\": [\"here\"]}", i ? ", " : "", i);
  snprintf(json + len, cap - len, "]}");
  fixture f;
  char id[STORE_ID_MAX];
  tsession_open(&f, json);
  free(json);
  CHECK_INT(chat_session_new(f.cs, NULL), AG_OK);
  snprintf(id, sizeof id, "%s", chat_session_current(f.cs));
  uint64_t c0 = store_commits(f.st);
  say(&f, "human", "Roll call, everyone.");
  uint64_t commits = store_commits(f.st) - c0;
  if (commits > 3) unit_fail_(__FILE__, __LINE__, "%llu commits for one message's %d replies", (unsigned long long)commits, N);
  CHECK_INT(info(&f, id).stored, N + 1);
  fx_close(&f);
}

/* An event queued by a loop callback just before (serve's "state-saved" when the storage thread's sync
 * lands) is not a reply in flight: an edit or retry made in the same loop pass is not refused. Before,
 * `PUT …/messages/3` answered 409 "wait until the replies in flight are in" now and then (CI). */
static void an_event_on_its_way_is_not_in_flight(void) {
  fixture f;
  char id[STORE_ID_MAX];
  fx_open_chat(&f, id);
  say(&f, "human", "@ann hello");
  CHECK_INT(world_emit(f.w, &(world_event){EV_STATE_SAVED, .u.saved = {2, 2}}), AG_OK);
  CHECK(!world_is_quiet(f.w)); /* the event waits for the loop's next pass */
  uint64_t kept = 99;
  ag_errmsg em = {""};
  int rc = chat_resend_retry(f.cs, &kept, &em);
  if (rc) unit_fail_(__FILE__, __LINE__, "retry refused: %s", em.text);
  CHECK_INT(kept, 0);
  CHECK_INT(world_run_until_quiet(f.w), AG_OK);
  CHECK_INT(info(&f, id).stored, 2); /* the message again and its answer */
  fx_close(&f);
}

SUITE_RUN((UNIT(an_event_on_its_way_is_not_in_flight), UNIT(a_fan_out_is_one_commit), UNIT(taken_seqs_move_pending_messages), UNIT(long_chat_memory_trimmed_in_ram_not_in_storage),
  UNIT(title_from_first_human_message), UNIT(reuse_both_ways), UNIT(load_restores_memories_and_counts),
  UNIT(delete_with_fallback_order), UNIT(manual_title), UNIT(snapshot_round_trip_state)))
