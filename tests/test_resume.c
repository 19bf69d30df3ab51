/* Resume after a crash (issue 13 §4): the thread's "started, not finished" reduction as a pure
 * function, then end to end — `agora run` SIGKILLed while 50 slow replies are in flight (killed when the
 * loopback server has seen all 50 requests, never after a sleep), then `run --resume`: every addressed
 * agent has exactly one reply and the seqs are contiguous; a resume that is itself killed is not re-run
 * a second time. */
#include "chat/inflight.h"
#include "storage/store.h"
#include "support/llm_server.h"
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"
#include "support/wait.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N_AGENTS 50

static char *tmp;
static llm_server *srv;

/* ---- the reduction ---- */

static void feed(chat_inflight *f, const char *json) { CHECK_INT(chat_inflight_step(f, json, strlen(json)), AG_OK); }

/* The open turns in order, as "agent:seq[:s][:r]" (started, re-run), space-separated. */
static void dump(const chat_inflight *f, char *out, size_t cap) {
  out[0] = '\0';
  for (size_t i = 0; i < f->n; i++) {
    size_t n = strlen(out);
    const chat_turn *t = &f->turns[i];
    snprintf(out + n, cap - n, "%s%s:%llu%s%s", i ? " " : "", t->agent, (unsigned long long)t->seq,
             t->started ? ":s" : "", t->rerun ? ":r" : "");
  }
}

static void reduction(void) {
  chat_inflight f = {0};
  /* ann: answered (llm-start, tool round, llm-start again, turn-end). */
  feed(&f, "{\"type\":\"llm-start\",\"agent\":\"ann\",\"provider\":\"openai\",\"after_seq\":1,\"seq\":1}");
  feed(&f, "{\"type\":\"tool-call\",\"agent\":\"ann\",\"tool\":\"save_context\",\"after_seq\":1}");
  feed(&f, "{\"type\":\"llm-start\",\"agent\":\"ann\",\"provider\":\"openai\",\"after_seq\":1,\"seq\":1}");
  feed(&f, "{\"type\":\"turn-end\",\"agent\":\"ann\",\"after_seq\":2,\"seq\":1}");
  /* bob: started, never ended. */
  feed(&f, "{\"type\":\"llm-start\",\"agent\":\"bob\",\"provider\":\"openai\",\"after_seq\":2,\"seq\":2}");
  /* cy: the end of another turn does not close this one; dee: a cancel closes whatever it was. */
  feed(&f, "{\"type\":\"llm-start\",\"agent\":\"cy\",\"after_seq\":2,\"seq\":2}");
  feed(&f, "{\"type\":\"turn-end\",\"agent\":\"cy\",\"after_seq\":3,\"seq\":1}");
  feed(&f, "{\"type\":\"llm-start\",\"agent\":\"dee\",\"after_seq\":2,\"seq\":2}");
  feed(&f, "{\"type\":\"turn-queued\",\"agent\":\"dee\",\"after_seq\":2,\"seq\":3}");
  feed(&f, "{\"type\":\"turn-end\",\"agent\":\"dee\",\"after_seq\":2,\"seq\":0,\"cancelled\":true}");
  /* eve: re-run once, and its re-run's second round was interrupted too: still a re-run. */
  feed(&f, "{\"type\":\"llm-start\",\"agent\":\"eve\",\"after_seq\":3,\"seq\":3}");
  feed(&f, "{\"type\":\"turn-queued\",\"agent\":\"eve\",\"after_seq\":3,\"seq\":3,\"rerun\":true}");
  feed(&f, "{\"type\":\"llm-start\",\"agent\":\"eve\",\"after_seq\":3,\"seq\":3}");
  /* fay: an earlier turn was a re-run that ended; a new turn is a first try. */
  feed(&f, "{\"type\":\"llm-start\",\"agent\":\"fay\",\"after_seq\":1,\"seq\":1,\"rerun\":true}");
  feed(&f, "{\"type\":\"turn-end\",\"agent\":\"fay\",\"after_seq\":2,\"seq\":1}");
  feed(&f, "{\"type\":\"llm-start\",\"agent\":\"fay\",\"after_seq\":4,\"seq\":4}");
  /* gus: answering 5 with 6 and 7 waiting; its notice drops the waiting ones, not the one under way. */
  feed(&f, "{\"type\":\"llm-start\",\"agent\":\"gus\",\"after_seq\":4,\"seq\":5}");
  feed(&f, "{\"type\":\"turn-queued\",\"agent\":\"gus\",\"after_seq\":6,\"seq\":6}");
  feed(&f, "{\"type\":\"turn-queued\",\"agent\":\"gus\",\"after_seq\":7,\"seq\":7}");
  feed(&f, "{\"type\":\"turn-end\",\"agent\":\"gus\",\"after_seq\":7,\"seq\":0,\"queued\":true}");
  /* hal: 6 waits behind 5; 5 ends: 6 is still to be answered, not started. */
  feed(&f, "{\"type\":\"llm-start\",\"agent\":\"hal\",\"after_seq\":4,\"seq\":5}");
  feed(&f, "{\"type\":\"turn-queued\",\"agent\":\"hal\",\"after_seq\":6,\"seq\":6}");
  feed(&f, "{\"type\":\"turn-end\",\"agent\":\"hal\",\"after_seq\":7,\"seq\":5}");
  /* Other steps and broken text change nothing. */
  feed(&f, "{\"type\":\"llm-error\",\"agent\":\"bob\",\"error\":\"x\",\"after_seq\":2}");
  feed(&f, "{\"type\":\"llm-start\", not json");
  char got[512];
  dump(&f, got, sizeof got);
  CHECK_STR(got, "bob:2:s cy:2:s eve:3:s:r fay:4:s gus:5:s hal:6");
  CHECK(chat_thread_bookkeeping("llm-start") && chat_thread_bookkeeping("turn-end"));
  CHECK(chat_thread_bookkeeping("turn-queued"));
  CHECK(!chat_thread_bookkeeping("llm-done") && !chat_thread_bookkeeping(NULL));
  chat_inflight_free(&f);
  CHECK_INT(f.n, 0);
}

/* ---- end to end ---- */

static const char *world_path(void) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/world.json", tmp);
  char *json = malloc(64 * 1024);
  int n = snprintf(json, 64 * 1024,
                   "{\"name\": \"Resume Town\", \"turn_limit\": 3,"
                   " \"defaults\": {\"provider\": \"openai\", \"model\": \"m\", \"base_url\": \"%s\","
                   " \"api_key_env\": \"\", \"stream\": false, \"max_retries\": 0},"
                   " \"agents\": [",
                   llm_server_url(srv, "/v1"));
  for (int i = 1; i <= N_AGENTS; i++)
    n += snprintf(json + n, 64 * 1024 - n, "%s{\"name\": \"a%02d\", \"system_prompt\": \"You are a%02d.\"}",
                  i > 1 ? ", " : "", i, i);
  n += snprintf(json + n, 64 * 1024 - n, "], \"script\": [{\"from\": \"human\", \"text\": \"");
  for (int i = 1; i <= N_AGENTS; i++) n += snprintf(json + n, 64 * 1024 - n, "@a%02d ", i);
  snprintf(json + n, 64 * 1024 - n, "report in\"}]}");
  unit_write_file(path, json);
  free(json);
  return path;
}

/* Starts agora with args (stdout and stderr to files in tmp); returns its pid. */
static pid_t spawn(const char *const *args, const char *tag) {
  char out[4096];
  snprintf(out, sizeof out, "%s/%s.out", tmp, tag);
  return proc_spawn(args, -1, out, out, NULL);
}

/* Waits until the server has seen want requests (observed progress, against a deadline so that a
 * broken build fails instead of hanging), then SIGKILLs pid. Returns the requests seen. */
static size_t kill_when_seen(pid_t pid, size_t want) {
  CHECK(llm_server_wait_requests(srv, want, 60000));
  size_t seen = llm_server_request_count(srv);
  kill(pid, SIGKILL);
  int st;
  waitpid(pid, &st, 0);
  CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
  return seen;
}

/* What the database holds of the chat: replies per agent, contiguous seqs, thread markers. */
typedef struct tally {
  const char *chat;
  int replies[N_AGENTS + 1];
  uint64_t n_msgs, last_seq, message_count;
  int gaps;
  size_t reruns, turn_ends, errors;
} tally;

static int msg_cb(const store_message *m, void *arg) {
  tally *t = arg;
  if (m->seq != t->last_seq + 1) t->gaps++;
  t->last_seq = m->seq;
  t->n_msgs++;
  int i;
  if (m->sender[0] == 'a' && sscanf(m->sender + 1, "%d", &i) == 1 && i >= 1 && i <= N_AGENTS) t->replies[i]++;
  return 0;
}

static int step_cb(const char *json, size_t len, void *arg) {
  tally *t = arg;
  if (memmem(json, len, "\"rerun\":true", 12) && memmem(json, len, "\"turn-queued\"", 13)) t->reruns++;
  if (memmem(json, len, "\"turn-end\"", 10)) t->turn_ends++;
  if (memmem(json, len, "not re-run twice", 16)) t->errors++;
  return 0;
}

static int tally_txn(store_txn *txn, void *arg) {
  tally *t = arg;
  store_chat c;
  int rc = store_chat_get(txn, t->chat, &c);
  if (rc) return rc;
  t->message_count = c.message_count;
  store_chat_free(&c);
  if ((rc = store_message_scan(txn, t->chat, 1, msg_cb, t))) return rc;
  return store_thread_scan(txn, t->chat, step_cb, t);
}

static void count(const char *db, const char *chat, tally *t) {
  memset(t, 0, sizeof *t);
  t->chat = chat;
  store *st = NULL;
  CHECK_INT(store_open(db, &st, NULL), AG_OK);
  if (st) CHECK_INT(store_read(st, tally_txn, t, NULL), AG_OK);
  store_close(st);
}

/* The chat's id: the only one in the database. */
static void only_chat(const char *db, char *id, size_t cap) {
  const char *args[] = {"chats", "list", "--json", "--db", db, NULL};
  proc_result r;
  id[0] = '\0';
  PROC_OK(args, NULL, NULL, &r);
  cJSON *j = cJSON_Parse(r.out);
  CHECK(j && !strchr(strchr(r.out, '\n') + 1, '{')); /* one line */
  if (j) snprintf(id, cap, "%s", cJSON_GetStringValue(cJSON_GetObjectItem(j, "id")));
  cJSON_Delete(j);
  proc_result_free(&r);
}

/* A chat left with a reply of every agent in flight: agora run on a fresh database db (in tmp) is
 * killed once the server has seen all the requests; the server answers at once from then on. */
static void crash_run(const char *name, char db[4096], char chat[128]) {
  snprintf(db, 4096, "%s/%s", tmp, name);
  llm_server_reset(srv);
  llm_server_rule(srv, "", "stall=1"); /* every reply hangs until the process dies */
  const char *run[] = {"run", world_path(), "--db", db, "--json", NULL};
  CHECK_INT(kill_when_seen(spawn(run, name), N_AGENTS), N_AGENTS);
  only_chat(db, chat, 128);
  llm_server_reset(srv);
  llm_server_rule(srv, "", "reply=\"@human here\"");
}

static void killed_run_resumes(void) {
  char db[4096], chat[128];
  crash_run("db", db, chat);
  tally t;
  count(db, chat, &t);
  CHECK_INT(t.n_msgs, 1); /* the human's message is stored, no reply */

  /* The resume is killed too, with its 50 re-runs in flight. */
  llm_server_reset(srv);
  llm_server_rule(srv, "", "stall=1");
  const char *resume[] = {"run", "--resume", chat, "--db", db, "--json", NULL};
  CHECK_INT(kill_when_seen(spawn(resume, "resume1"), N_AGENTS), N_AGENTS);
  count(db, chat, &t);
  CHECK_INT(t.n_msgs, 1);
  CHECK_INT(t.reruns, N_AGENTS);

  /* The next resume does not run them a third time: each is given up with an llm-error. */
  llm_server_reset(srv);
  llm_server_rule(srv, "", "reply=\"@human here\"");
  proc_result r;
  PROC_OK(resume, NULL, NULL, &r);
  CHECK_INT(llm_server_request_count(srv), 0);
  size_t errs = 0;
  for (const char *p = r.out; (p = strstr(p, "not re-run twice")); p++) errs++;
  CHECK_INT(errs, N_AGENTS);
  proc_result_free(&r);
  count(db, chat, &t);
  CHECK_INT(t.n_msgs, 1);
  CHECK_INT(t.errors, N_AGENTS);
}

static void resume_answers_each_once(void) {
  char db[4096], chat[128];
  crash_run("db2", db, chat);
  const char *resume[] = {"run", "--resume", chat, "--db", db, "--json", NULL};
  proc_result r;
  PROC_OK(resume, NULL, NULL, &r);
  CHECK_INT(llm_server_request_count(srv), N_AGENTS); /* each agent asked again, once */
  /* One turns-resumed event says so, naming them (issue 23 item 6). */
  CHECK(strstr(r.out, "\"event\":\"turns-resumed\"") && strstr(r.out, "\"replies\":50,\"agents\":\"a01, a02, "));
  CHECK(strstr(r.out, ", a49, a50\"") != NULL);
  proc_result_free(&r);
  tally t;
  count(db, chat, &t);
  CHECK_INT(t.n_msgs, 1 + N_AGENTS);
  CHECK_INT(t.gaps, 0);
  CHECK_INT(t.last_seq, 1 + N_AGENTS);
  CHECK_INT(t.message_count, 1 + N_AGENTS);
  for (int i = 1; i <= N_AGENTS; i++) CHECK_INT(t.replies[i], 1);
  CHECK_INT(t.reruns, N_AGENTS);

  /* Nothing is in flight any more: a second resume, and a console start on the chat, ask nobody. */
  llm_server_reset(srv);
  CHECK_INT(proc_agora(resume, NULL, NULL, &r), 0);
  proc_result_free(&r);
  const char *console[] = {"console", "--db", db, NULL};
  PROC_OK(console, "/quit\n", NULL, &r);
  proc_result_free(&r);
  CHECK_INT(llm_server_request_count(srv), 0);
  count(db, chat, &t);
  CHECK_INT(t.n_msgs, 1 + N_AGENTS);
}

/* The console finishes a chat's turns in flight too: when it starts on the chat, and on /load. */
static void console_resumes(void) {
  for (int load = 0; load < 2; load++) {
    char db[4096], chat[128], line[256];
    crash_run(load ? "db-load" : "db-start", db, chat);
    proc_result r;
    if (load) { /* another chat is current: the console starts there, then loads this one */
      const char *fresh[] = {"chats", "new", "--db", db, NULL};
      PROC_OK(fresh, NULL, NULL, &r);
      proc_result_free(&r);
    }
    if (load) snprintf(line, sizeof line, "/load %s\n/quit\n", chat);
    else snprintf(line, sizeof line, "/quit\n");
    const char *console[] = {"console", "--db", db, NULL};
    PROC_OK(console, line, NULL, &r);
    proc_result_free(&r);
    CHECK_INT(llm_server_request_count(srv), N_AGENTS);
    tally t;
    count(db, chat, &t);
    CHECK_INT(t.n_msgs, 1 + N_AGENTS);
    CHECK_INT(t.gaps, 0);
    for (int i = 1; i <= N_AGENTS; i++) CHECK_INT(t.replies[i], 1);
  }
}

static int queued_cb(const char *json, size_t len, void *arg) {
  if (memmem(json, len, "\"turn-queued\"", 13)) *(int *)arg = 1;
  return 0;
}

static int queued_txn(store_txn *txn, void *arg) {
  store_chat c;
  int rc = store_chat_latest(txn, NULL, &c);
  if (rc) return rc;
  rc = store_thread_scan(txn, c.id, queued_cb, arg);
  store_chat_free(&c);
  return rc;
}

/* Whether the database in db holds a turn-queued step yet (read-only, beside the writer). */
static int has_queued(void *db) {
  store *st = NULL;
  int seen = 0;
  if (store_open_read(db, &st, NULL) == AG_OK) store_read(st, queued_txn, &seen, NULL);
  store_close(st);
  return seen;
}

/* A message waiting in an agent's inbox (its call not started) is answered on resume too: a01 is busy
 * answering the human when a02's mention arrives; the process dies; a01 answers both, in order. */
static void queued_turn_resumes(void) {
  char db[4096], path[4096], chat[128];
  snprintf(db, sizeof db, "%s/db-queued", tmp);
  snprintf(path, sizeof path, "%s/pair.json", tmp);
  char json[1024];
  snprintf(json, sizeof json,
           "{\"name\": \"Pair\", \"defaults\": {\"provider\": \"openai\", \"model\": \"m\", \"base_url\": \"%s\","
           " \"api_key_env\": \"\", \"stream\": false, \"max_retries\": 0},"
           " \"agents\": [{\"name\": \"a01\", \"system_prompt\": \"You are a01.\"},"
           "  {\"name\": \"a02\", \"system_prompt\": \"You are a02.\"}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"@a01 @a02 go\"}]}",
           llm_server_url(srv, "/v1"));
  unit_write_file(path, json);
  llm_server_reset(srv);
  llm_server_rule(srv, "You are a02", "reply=\"@a01 hi\"");
  llm_server_rule(srv, "", "stall=1");
  const char *run[] = {"run", path, "--db", db, "--json", NULL};
  pid_t pid = spawn(run, "run-queued");
  CHECK(wait_until(has_queued, db, 60000));
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  only_chat(db, chat, sizeof chat);
  llm_server_reset(srv);
  llm_server_rule(srv, "", "reply=\"@human done\"");
  const char *resume[] = {"run", "--resume", chat, "--db", db, "--json", NULL};
  proc_result r;
  PROC_OK(resume, NULL, NULL, &r);
  char *msgs = proc_messages(r.out);
  /* a01 answers the human first (its memory ends with it), then a02. */
  CHECK(msgs && strstr(msgs, "a01|agent|") && strstr(strstr(msgs, "a01|agent|") + 1, "a01|agent|"));
  free(msgs);
  proc_result_free(&r);
  CHECK_INT(llm_server_request_count(srv), 2);
  llm_server_request q0, q1;
  if (!llm_server_request_get(srv, 0, &q0)) { /* the re-run sees the human only; the next, a02 too */
    CHECK(strstr(q0.body, "@a01 @a02 go") && !strstr(q0.body, "@a01 hi"));
    llm_server_request_free(&q0);
  }
  if (!llm_server_request_get(srv, 1, &q1)) {
    CHECK(strstr(q1.body, "@a01 hi") && strstr(q1.body, "@human done"));
    llm_server_request_free(&q1);
  }
  tally t;
  count(db, chat, &t);
  CHECK_INT(t.n_msgs, 4);
  CHECK_INT(t.gaps, 0);
  CHECK_INT(t.replies[1], 2);
  CHECK_INT(t.replies[2], 1);
}

/* Ctrl-C is not a crash: the replies it cancelled are over (a cancelled turn-end), and a resume asks
 * nobody again. */
static void interrupted_is_not_resumed(void) {
  char db[4096], chat[128];
  snprintf(db, sizeof db, "%s/db-int", tmp);
  llm_server_reset(srv);
  llm_server_rule(srv, "", "stall=1");
  const char *run[] = {"run", world_path(), "--db", db, "--json", NULL};
  pid_t pid = spawn(run, "run-int");
  CHECK(llm_server_wait_requests(srv, N_AGENTS, 60000));
  kill(pid, SIGINT);
  int st;
  waitpid(pid, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 130);
  only_chat(db, chat, sizeof chat);
  tally t;
  count(db, chat, &t);
  CHECK_INT(t.turn_ends, N_AGENTS);
  llm_server_reset(srv);
  const char *resume[] = {"run", "--resume", chat, "--db", db, NULL};
  proc_result r;
  PROC_OK(resume, NULL, NULL, &r);
  proc_result_free(&r);
  CHECK_INT(llm_server_request_count(srv), 0);
}

/* A resume with nothing to resume, a missing chat and conflicting options: clear errors. */
static void resume_usage(void) {
  char db[4096];
  snprintf(db, sizeof db, "%s/db3", tmp);
  const char *no_chat[] = {"run", "--resume", "nosuch", "--db", db, NULL};
  PROC_REFUSED(no_chat, NULL, "nosuch", NULL);
  const char *both[] = {"run", "--resume", "x", "--chat", "y", NULL};
  PROC_REFUSED(both, NULL, "--chat and --resume", NULL);
  const char *bare[] = {"run", "--resume", NULL};
  PROC_REFUSED(bare, NULL, "--resume needs a value", NULL);
}

static const unit_test tests[] = {
  {"reduction", reduction},
  {"resume_answers_each_once", resume_answers_each_once},
  {"killed_run_resumes", killed_run_resumes},
  {"console_resumes", console_resumes},
  {"queued_turn_resumes", queued_turn_resumes},
  {"interrupted_is_not_resumed", interrupted_is_not_resumed},
  {"resume_usage", resume_usage},
};

int main(int argc, char **argv) {
  return suite_main(argc, argv, &(suite){SUITE_TESTS(tests), .tmp = &tmp, .srv = &srv, .many_fds = 1});
}
