/* The commands' door to storage (chat/archive.h, chat/transcript.h) on a real LMDB store in a temporary
 * directory: chats listed newest first with the current one marked, chat and world records copied out,
 * a world's stored settings parsed back, contexts, and a transcript in order — each thread step right
 * after the message it followed — from the database and from the chat's snapshot alike. */
#include "support/suite.h"
#include "support/tsession.h"
#include "support/unit.h"

#include "chat/archive.h"
#include "chat/session.h"
#include "chat/snapshot.h"
#include "chat/transcript.h"
#include "storage/store.h"

#include <event2/event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *WORLD_JSON =
  "{\"name\": \"Arch\", \"agents\": ["
  " {\"name\": \"ann\", \"replies\": [\"a1\", \"a2\", \"a3\"]},"
  " {\"name\": \"bob\", \"replies\": [\"b1\", \"b2\"]}]}";

typedef struct fixture {
  tsession s;
  store *st; /* s.st */
  char first[CHAT_ID_MAX], second[CHAT_ID_MAX];
} fixture;

/* Two chats of world "arch": the first with a titled conversation (3 messages), then a second,
 * current one, also answered and titled. */
static void fx_open(fixture *f) {
  memset(f, 0, sizeof *f);
  tsession_open(&f->s, WORLD_JSON);
  f->st = f->s.st;
  ag_errmsg em = {""};
  CHECK_INT(chat_session_new(f->s.cs, &em), AG_OK);
  snprintf(f->first, sizeof f->first, "%s", chat_session_current(f->s.cs));
  tsession_say(&f->s, "human", "@ann @bob plan the trip");
  CHECK_INT(chat_session_new(f->s.cs, &em), AG_OK);
  snprintf(f->second, sizeof f->second, "%s", chat_session_current(f->s.cs));
  tsession_say(&f->s, "human", "just a note");
}

static void fx_close(fixture *f) { tsession_close(&f->s); }

/* ---- chats ---- */

typedef struct seen {
  char text[2048];
  int n;
  int stop_after; /* return CHAT_STOP after this many (0: never) */
  int fail_after; /* return AG_ERR_INVALID after this many (0: never) */
} seen;

/* Appends one line to s->text and says what the callback returns: go on, stop or fail. */
__attribute__((format(printf, 2, 3))) static int seen_add(seen *s, const char *fmt, ...) {
  size_t len = strlen(s->text);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->text + len, sizeof s->text - len, fmt, ap);
  va_end(ap);
  s->n++;
  if (s->stop_after && s->n == s->stop_after) return CHAT_STOP;
  if (s->fail_after && s->n == s->fail_after) return AG_ERR_INVALID;
  return 0;
}

static int list_cb(const chat_info *c, void *arg) {
  return seen_add(arg, "%s%s %s %s %llu\n", c->current ? "*" : " ", c->id, c->world_id, c->title,
                  (unsigned long long)c->message_count);
}

static void list_newest_first_with_current(void) {
  fixture f;
  fx_open(&f);
  seen s = {"", 0, 0, 0};
  CHECK_INT(chat_list(f.st, NULL, list_cb, &s, NULL), AG_OK);
  char want[512];
  snprintf(want, sizeof want, "*%s arch Just a note 3\n %s arch Plan the trip 3\n", f.second, f.first);
  CHECK_STR(s.text, want);
  seen w = {"", 0, 0, 0};
  CHECK_INT(chat_list(f.st, "arch", list_cb, &w, NULL), AG_OK);
  CHECK_STR(w.text, want);
  seen none = {"", 0, 0, 0};
  CHECK_INT(chat_list(f.st, "elsewhere", list_cb, &none, NULL), AG_OK);
  CHECK_INT(none.n, 0);
  seen stop = {"", 0, 1, 0};
  CHECK_INT(chat_list(f.st, NULL, list_cb, &stop, NULL), AG_OK);
  CHECK_INT(stop.n, 1);
  seen fail = {"", 0, 0, 1};
  CHECK_INT(chat_list(f.st, NULL, list_cb, &fail, NULL), AG_ERR_INVALID);
  CHECK_INT(fail.n, 1);
  fx_close(&f);
}

static void info_copies_the_record(void) {
  fixture f;
  fx_open(&f);
  chat_info c;
  ag_errmsg em = {""};
  CHECK_INT(chat_info_get(f.st, f.first, &c, &em), AG_OK);
  CHECK_STR(c.id, f.first);
  CHECK_STR(c.world_id, "arch");
  CHECK_STR(c.title, "Plan the trip");
  CHECK_INT(c.message_count, 3);
  CHECK_INT(c.current, 0);
  CHECK(c.created_at_ms > 0 && c.updated_at_ms >= c.created_at_ms);
  CHECK_INT(chat_info_get(f.st, f.second, &c, &em), AG_OK);
  CHECK_INT(c.current, 1);
  CHECK_INT(chat_info_get(f.st, "nosuch", &c, &em), AG_ERR_NOT_FOUND);
  CHECK_STR(em.text, "no chat 'nosuch' in the database");
  fx_close(&f);
}

/* ---- worlds ---- */

static int world_cb(const chat_world_info *w, void *arg) {
  return seen_add(arg, "%s %s %d %llu %s\n", w->id, w->name, w->agents, (unsigned long long)w->chats,
                  w->current_chat[0] ? w->current_chat : "-");
}

static void worlds_listed_counted_and_parsed(void) {
  fixture f;
  fx_open(&f);
  seen s = {"", 0, 0, 0};
  CHECK_INT(chat_worlds_each(f.st, world_cb, &s, NULL), AG_OK);
  char want[256];
  snprintf(want, sizeof want, "arch Arch 2 2 %s\n", f.second);
  CHECK_STR(s.text, want);
  size_t n = 9;
  char first[CHAT_ID_MAX];
  CHECK_INT(chat_worlds_count(f.st, &n, first, NULL), AG_OK);
  CHECK_INT(n, 1);
  CHECK_STR(first, "arch");
  world_spec spec;
  ag_errmsg em = {""};
  CHECK_INT(chat_world_spec(f.st, "arch", &spec, &em), AG_OK);
  CHECK_STR(spec.name, "Arch");
  CHECK_INT(spec.n_agents, 2);
  world_spec_free(&spec);
  CHECK_INT(chat_world_spec(f.st, "nosuch", &spec, &em), AG_ERR_NOT_FOUND);
  CHECK_STR(em.text, "no world 'nosuch' in the database");
  fx_close(&f);
}

static void empty_database(void) {
  char *dir = unit_tmpdir();
  store *st = NULL;
  CHECK_INT(chat_store_open(dir, &st, NULL), AG_OK);
  CHECK_STR(chat_store_dir(st), dir);
  size_t n = 9;
  char first[CHAT_ID_MAX] = "x";
  CHECK_INT(chat_worlds_count(st, &n, first, NULL), AG_OK);
  CHECK_INT(n, 0);
  CHECK_STR(first, "");
  seen s = {"", 0, 0, 0};
  CHECK_INT(chat_list(st, NULL, list_cb, &s, NULL), AG_OK);
  CHECK_INT(chat_worlds_each(st, world_cb, &s, NULL), AG_OK);
  CHECK_INT(s.n, 0);
  chat_store_close(st);
  unit_rmrf(dir);
  free(dir);
}

/* ---- contexts ---- */

typedef struct ctx_put {
  const char *chat, *agent, *json;
} ctx_put;

static int ctx_put_txn(store_txn *t, void *arg) {
  ctx_put *p = arg;
  store_context c = {3, 1700000000000, p->json, NULL};
  return store_context_put(t, p->chat, p->agent, &c);
}

static int ctx_cb(const char *agent_id, const context_state *cx, void *arg) {
  char *data = cJSON_PrintUnformatted(cx->data);
  int rc = seen_add(arg, "%s v%llu %s\n", agent_id, (unsigned long long)cx->version, data);
  free(data);
  return rc;
}

static void contexts_parsed(void) {
  fixture f;
  fx_open(&f);
  ctx_put p = {f.first, "bob", "{\"topics\":[\"trip\"]}"};
  CHECK_INT(store_write(f.st, ctx_put_txn, &p, NULL), AG_OK);
  p.agent = "ann";
  p.json = "{}";
  CHECK_INT(store_write(f.st, ctx_put_txn, &p, NULL), AG_OK);
  seen s = {"", 0, 0, 0};
  CHECK_INT(chat_contexts_each(f.st, f.first, ctx_cb, &s, NULL), AG_OK);
  CHECK_STR(s.text, "ann v3 {}\nbob v3 {\"topics\":[\"trip\"]}\n");
  seen none = {"", 0, 0, 0};
  CHECK_INT(chat_contexts_each(f.st, f.second, ctx_cb, &none, NULL), AG_OK);
  CHECK_INT(none.n, 0);
  p.chat = f.second;
  p.json = "{not json";
  CHECK_INT(store_write(f.st, ctx_put_txn, &p, NULL), AG_OK);
  CHECK_INT(chat_contexts_each(f.st, f.second, ctx_cb, &none, NULL), AG_ERR_STORAGE);
  fx_close(&f);
}

/* ---- transcripts ---- */

static int entry_cb(const chat_entry *e, void *arg) {
  if (e->msg)
    return seen_add(arg, "%llu %s: %s\n", (unsigned long long)e->msg->seq, e->msg->sender, e->msg->text);
  char *fields = cJSON_PrintUnformatted(e->fields);
  int rc = seen_add(arg, "-- %s %s\n", ev_kind_name(e->kind), fields);
  free(fields);
  return rc;
}

typedef struct thread_put {
  const char *chat;
  const char *const *events;
} thread_put;

static int thread_txn(store_txn *t, void *arg) {
  thread_put *p = arg;
  int rc = AG_OK;
  for (size_t i = 0; !rc && p->events[i]; i++) rc = store_thread_append(t, p->chat, p->events[i]);
  return rc;
}

/* The first chat's thread: an event before any message, two after message 2, one after the last. */
static void add_thread(fixture *f) {
  static const char *const events[] = {
    "{\"type\":\"llm-error\",\"agent\":\"ann\",\"after_seq\":0}",
    "{\"type\":\"tool-call\",\"agent\":\"ann\",\"tool\":\"save_context\",\"after_seq\":2}",
    "{\"type\":\"tool-result\",\"agent\":\"ann\",\"tool\":\"save_context\",\"ok\":true,\"after_seq\":2}",
    "{\"type\":\"tool-call\",\"agent\":\"bob\",\"tool\":\"send_message\",\"after_seq\":3}",
    NULL};
  thread_put p = {f->first, events};
  CHECK_INT(store_write(f->st, thread_txn, &p, NULL), AG_OK);
}

static const char WANT_TRANSCRIPT[] =
  "-- llm-error {\"agent\":\"ann\"}\n"
  "1 human: @ann @bob plan the trip\n"
  "2 ann: a1\n"
  "-- tool-call {\"agent\":\"ann\",\"tool\":\"save_context\"}\n"
  "-- tool-result {\"agent\":\"ann\",\"tool\":\"save_context\",\"ok\":true}\n"
  "3 bob: b1\n"
  "-- tool-call {\"agent\":\"bob\",\"tool\":\"send_message\"}\n";

static void transcript_in_order(void) {
  fixture f;
  fx_open(&f);
  add_thread(&f);
  seen s = {"", 0, 0, 0};
  ag_errmsg em = {""};
  CHECK_INT(chat_transcript_each(f.st, f.first, entry_cb, &s, &em), AG_OK);
  CHECK_STR(s.text, WANT_TRANSCRIPT);
  seen stop = {"", 0, 3, 0}; /* stop inside the messages: nothing after */
  CHECK_INT(chat_transcript_each(f.st, f.first, entry_cb, &stop, &em), AG_OK);
  CHECK_INT(stop.n, 3);
  seen stop_ev = {"", 0, 4, 0}; /* stop on an event */
  CHECK_INT(chat_transcript_each(f.st, f.first, entry_cb, &stop_ev, &em), AG_OK);
  CHECK_INT(stop_ev.n, 4);
  seen fail = {"", 0, 0, 2};
  CHECK_INT(chat_transcript_each(f.st, f.first, entry_cb, &fail, &em), AG_ERR_INVALID);
  CHECK_INT(fail.n, 2);
  seen none = {"", 0, 0, 0};
  CHECK_INT(chat_transcript_each(f.st, "nosuch", entry_cb, &none, &em), AG_ERR_NOT_FOUND);
  CHECK_STR(em.text, "no chat 'nosuch' in the database");
  CHECK_INT(none.n, 0);
  fx_close(&f);
}

static void recent_messages_only(void) {
  fixture f;
  fx_open(&f);
  add_thread(&f);
  seen s = {"", 0, 0, 0};
  CHECK_INT(chat_messages_each(f.st, f.first, 2, entry_cb, &s, NULL), AG_OK);
  CHECK_STR(s.text, "2 ann: a1\n3 bob: b1\n");
  seen stop = {"", 0, 1, 0};
  CHECK_INT(chat_messages_each(f.st, f.first, 1, entry_cb, &stop, NULL), AG_OK);
  CHECK_STR(stop.text, "1 human: @ann @bob plan the trip\n");
  fx_close(&f);
}

static void snapshot_transcript_matches_stored(void) {
  fixture f;
  fx_open(&f);
  add_thread(&f);
  cJSON *snap = NULL;
  ag_errmsg em = {""};
  CHECK_INT(chat_snapshot_export(f.st, f.first, &snap, &em), AG_OK);
  CHECK_INT(chat_snapshot_validate(snap, "snap", &em), AG_OK);
  if (em.text[0]) unit_fail_(__FILE__, __LINE__, "%s", em.text);
  seen s = {"", 0, 0, 0};
  CHECK_INT(chat_snapshot_each(snap, entry_cb, &s), AG_OK);
  CHECK_STR(s.text, WANT_TRANSCRIPT);
  seen stop = {"", 0, 2, 0};
  CHECK_INT(chat_snapshot_each(snap, entry_cb, &stop), AG_OK);
  CHECK_INT(stop.n, 2);
  cJSON_Delete(snap);
  fx_close(&f);
}

SUITE_RUN((UNIT(list_newest_first_with_current), UNIT(info_copies_the_record), UNIT(worlds_listed_counted_and_parsed),
  UNIT(empty_database), UNIT(contexts_parsed), UNIT(transcript_in_order), UNIT(recent_messages_only),
  UNIT(snapshot_transcript_matches_stored)))
