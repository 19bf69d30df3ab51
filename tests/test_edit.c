/* Console /edit SEQ TEXT and /retry (issue 13 §3) end to end through the built binary on a real LMDB
 * database: the chat is cut after SEQ-1 (messages, memories, thread, counts) and the text sent again;
 * an automatic title follows a new first message, a title set by hand stays; bad uses are refused. */
#include "storage/store.h"
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *tmp;

static const char world[] =
  "{\"name\": \"Edit Town\", \"defaults\": {\"provider\": \"script\"},"
  " \"agents\": [{\"name\": \"ann\", \"replies\": [\"@human one\", \"@human two\", \"@human three\"]},"
  "              {\"name\": \"bob\", \"replies\": [\"@human bee\"]}]}";

/* Runs the console on a fresh database with input; returns its stdout (caller frees). */
static char *console(const char *db, const char *input, int want_status) {
  char path[4096];
  snprintf(path, sizeof path, "%s/world.json", tmp);
  unit_write_file(path, world);
  const char *args[] = {"console", path, "--db", db, NULL};
  proc_result r;
  CHECK_INT(proc_agora(args, input, NULL, &r), 0);
  CHECK_INT(r.status, want_status);
  char *out = r.out;
  r.out = NULL;
  if (want_status == 0 && r.err[0]) fprintf(stderr, "%s", r.err);
  proc_result_free(&r);
  return out;
}

/* What the database holds of its only chat. */
typedef struct stored {
  char title[256];
  uint64_t count;
  char msgs[2048];     /* "seq sender: text\n" ... */
  char ann_mem[256];   /* ann's memory: "1 2 3 " */
  uint64_t ann_turns;
  size_t thread_after; /* thread steps anchored past the last message */
} stored;

static int chat_cb(const store_chat *c, void *arg) {
  stored *s = arg;
  snprintf(s->title, sizeof s->title, "%s", c->title);
  s->count = c->message_count;
  return STORE_STOP;
}

static int msg_cb(const store_message *m, void *arg) {
  stored *s = arg;
  size_t n = strlen(s->msgs);
  snprintf(s->msgs + n, sizeof s->msgs - n, "%llu %s: %s\n", (unsigned long long)m->seq, m->sender, m->text);
  return 0;
}

static int mem_cb(uint64_t seq, void *arg) {
  stored *s = arg;
  size_t n = strlen(s->ann_mem);
  snprintf(s->ann_mem + n, sizeof s->ann_mem - n, "%llu ", (unsigned long long)seq);
  return 0;
}

static int step_cb(const char *json, size_t len, void *arg) {
  stored *s = arg;
  cJSON *j = cJSON_ParseWithLength(json, len);
  const cJSON *after = cJSON_GetObjectItem(j, "after_seq");
  if (cJSON_IsNumber(after) && after->valuedouble > (double)s->count) s->thread_after++;
  cJSON_Delete(j);
  return 0;
}

static char chat_id[STORE_ID_MAX];

static int read_txn(store_txn *t, void *arg) {
  stored *s = arg;
  memset(s, 0, sizeof *s);
  int rc = store_chat_list(t, NULL, chat_cb, s);
  store_chat c;
  if (!rc && !(rc = store_chat_latest(t, NULL, &c))) {
    snprintf(chat_id, sizeof chat_id, "%s", c.id);
    store_chat_free(&c);
  }
  if (!rc) rc = store_message_scan(t, chat_id, 1, msg_cb, s);
  if (!rc) rc = store_memory_scan(t, chat_id, "ann", mem_cb, s);
  store_agent_state st;
  if (!rc && !store_agent_state_get(t, chat_id, "ann", &st)) s->ann_turns = st.turn_count;
  if (!rc) rc = store_thread_scan(t, chat_id, step_cb, s);
  return rc;
}

static void read_db(const char *db, stored *s) {
  store *st = NULL;
  CHECK_INT(store_open(db, &st, NULL), AG_OK);
  if (st) CHECK_INT(store_read(st, read_txn, s, NULL), AG_OK);
  store_close(st);
}

static void edit_cuts_and_resends(void) {
  char db[4096];
  snprintf(db, sizeof db, "%s/db1", tmp);
  char *out = console(db, "@ann plan the trip\n@ann and then?\n@bob you?\n/edit 3 @ann what next?\n", 0);
  CHECK(strstr(out, "chat cut after message 2") != NULL);
  free(out);
  stored s;
  read_db(db, &s);
  CHECK_STR(s.msgs, "1 human: @ann plan the trip\n2 ann: @human one\n3 human: @ann what next?\n4 ann: @human two\n");
  CHECK_INT(s.count, 4);
  CHECK_STR(s.title, "Plan the trip"); /* the first human message did not change */
  CHECK_STR(s.ann_mem, "1 2 3 4 ");       /* nothing of the cut messages */
  CHECK_INT(s.ann_turns, 1);
  CHECK_INT(s.thread_after, 0);
}

static void retry_and_first_message(void) {
  char db[4096];
  snprintf(db, sizeof db, "%s/db2", tmp);
  char *out = console(db, "@ann plan the trip\n@ann and then?\n/retry\n", 0);
  free(out);
  stored s;
  read_db(db, &s);
  /* The last human message (3) is sent again: the scripted reply position is rebuilt as at 2. */
  CHECK_STR(s.msgs, "1 human: @ann plan the trip\n2 ann: @human one\n3 human: @ann and then?\n4 ann: @human two\n");
  CHECK_INT(s.count, 4);

  /* /edit TEXT without a number replaces the last human message (3), as /retry would resend it. */
  snprintf(db, sizeof db, "%s/db2b", tmp);
  out = console(db, "@ann plan the trip\n@ann and then?\n/edit @ann and after that?\n", 0);
  free(out);
  read_db(db, &s);
  CHECK_STR(s.msgs, "1 human: @ann plan the trip\n2 ann: @human one\n3 human: @ann and after that?\n4 ann: @human two\n");

  /* Editing the first message: an automatic title follows it. */
  snprintf(db, sizeof db, "%s/db3", tmp);
  out = console(db, "@ann plan the trip\n@ann and then?\n/edit 1 @ann plan the party\n", 0);
  CHECK(strstr(out, "title=Plan the party") != NULL);
  free(out);
  read_db(db, &s);
  CHECK_INT(s.count, 2);
  CHECK_STR(s.title, "Plan the party");
  CHECK(!strncmp(s.msgs, "1 human: @ann plan the party\n2 ann: ", 36));
  CHECK_STR(s.ann_mem, "1 2 ");

  /* A title set by hand stays. */
  snprintf(db, sizeof db, "%s/db4", tmp);
  out = console(db, "@ann plan the trip\n/title Holidays\n/edit 1 @ann plan the party\n", 0);
  free(out);
  read_db(db, &s);
  CHECK_STR(s.title, "Holidays");
  CHECK_INT(s.count, 2);
}

static void bad_edits(void) {
  char db[4096];
  snprintf(db, sizeof db, "%s/db5", tmp);
  char path[4096];
  snprintf(path, sizeof path, "%s/world.json", tmp);
  unit_write_file(path, world);
  const char *args[] = {"console", path, "--db", db, NULL};
  proc_result r;
  CHECK_INT(proc_agora(args, "/retry\n@ann plan the trip\n/edit 2 hello\n/edit 9 hi\n/edit 1\n/edit\n", NULL, &r), 0);
  CHECK(strstr(r.err, "no human message to retry") != NULL);
  CHECK(strstr(r.err, "message 2 is from ann: only a human message can be edited") != NULL);
  CHECK(strstr(r.err, "this chat has no message 9") != NULL);
  CHECK(strstr(r.err, "usage: /edit [SEQ] TEXT") != NULL); /* a number alone, and nothing */
  proc_result_free(&r);
  stored s;
  read_db(db, &s);
  CHECK_INT(s.count, 2); /* nothing cut */
}

static const unit_test tests[] = {
  {"edit_cuts_and_resends", edit_cuts_and_resends},
  {"retry_and_first_message", retry_and_first_message},
  {"bad_edits", bad_edits},
};

int main(int argc, char **argv) {
  return suite_main(argc, argv, &(suite){SUITE_TESTS(tests), .tmp = &tmp});
}
