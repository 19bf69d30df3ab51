/* Crash safety of storage: a child process writes chat turns (message + chat count + memories + agent
 * states in one store_write) and is killed with SIGKILL at random moments, including during the
 * database's creation; after each kill the database must open, be consistent and take new writes.
 * The moments are counted in the child's own progress (commits it reports through shared memory),
 * never in time, so a loaded machine changes nothing. The seed is printed; set STORE_KILL_SEED to
 * replay a run. */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agents/msg.h"
#include "storage/store.h"
#include "support/suite.h"
#include "support/unit.h"

#define KILL_ROUNDS 40   /* on one database that grows from round to round */
#define CREATE_ROUNDS 8  /* on fresh directories, killed during creation */
#define KILL_CHATS 3

static const char *const chat_ids[KILL_CHATS] = {"k0", "k1", "k10"}; /* "k1" is a prefix of "k10" */

/* Shared with the child: opening is set just before it opens the database, commits counts the
 * store_writes that returned. */
typedef struct progress {
  volatile int opening;
  volatile unsigned long commits;
} progress;

static progress *prog;

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

typedef struct turn_arg {
  unsigned long i; /* the child's step */
  char text[4096];
} turn_arg;

/* One chat turn, the way the session manager saves one: everything in this one transaction. */
static int turn_tx(store_txn *t, void *argp) {
  turn_arg *a = argp;
  const char *id = chat_ids[a->i % KILL_CHATS];
  store_chat c;
  uint64_t count = 0;
  int64_t created = now_ms();
  store_world w = {.id = "kw", .name = "Kill World", .settings_json = "{}", .current_chat = ""};
  int rc = store_chat_get(t, id, &c);
  if (rc == AG_ERR_NOT_FOUND) {
    /* First turn ever: the world too. Its current chat is set below, after the chat exists. */
    store_world old;
    rc = store_world_get(t, "kw", &old);
    if (rc == AG_ERR_NOT_FOUND) rc = store_world_put(t, &w);
    store_world_free(&old);
  } else if (!rc) {
    count = c.message_count;
    created = c.created_at_ms;
    store_chat_free(&c);
  }
  if (rc) return rc;
  /* Now and then the chat is deleted and starts over: a large range delete in the middle of things. */
  if (count > 0 && a->i % 997 == 0) {
    rc = store_chat_delete(t, id);
    if (rc) return rc;
    count = 0;
  }
  uint64_t seq = count + 1;
  size_t len = 20 + (a->i * 131) % (sizeof a->text - 21); /* varied sizes split and merge pages */
  memset(a->text, 'a' + (int)(seq % 26), len);
  a->text[len] = '\0';
  store_chat nc = {.id = id, .world_id = "kw", .title = "Killed", .message_count = seq,
                   .created_at_ms = created, .updated_at_ms = now_ms()};
  store_message m = {.seq = seq, .ts_ms = now_ms(), .kind = AG_KIND_AGENT, .sender = "alice", .text = a->text};
  store_agent_state sa = {.turn_count = (int32_t)seq, .counter = seq};
  store_agent_state sb = {.turn_count = (int32_t)(seq / 2), .counter = seq / 2};
  rc = store_chat_put(t, &nc);
  if (!rc) rc = store_message_put(t, id, &m);
  if (!rc) rc = store_memory_append(t, id, "alice", seq);
  if (!rc && seq % 2 == 0) rc = store_memory_append(t, id, "bob", seq);
  if (!rc) rc = store_agent_state_put(t, id, "alice", &sa);
  if (!rc) rc = store_agent_state_put(t, id, "bob", &sb);
  if (!rc) rc = store_world_set_current(t, "kw", id);
  return rc;
}

static int count_cb(const store_message *m, void *arg) {
  (void)m;
  (*(uint64_t *)arg)++;
  return 0;
}

static int read_tx(store_txn *t, void *arg) {
  turn_arg *a = arg;
  uint64_t n = 0;
  return store_message_scan(t, chat_ids[a->i % KILL_CHATS], 1, count_cb, &n);
}

/* The child: open (creating on the first round), then write turns until killed. Some rounds run
 * without fsync so that many more commits are in flight when the kill comes. */
static void child_main(const char *dir, int round) {
  store *s = NULL;
  /* Odd rounds: no fsync, or every fourth round the background sync thread (what serve uses). */
  store_options opt = {.sync = round % 2 ? (round % 4 == 1 ? STORE_SYNC_BACKGROUND : STORE_SYNC_NONE) : STORE_SYNC_FULL,
                       .map_size = round % 3 == 0 ? 256 * 1024 : 0}; /* small maps: kills during growth */
  static turn_arg a;
  prog->opening = 1;
  if (store_open_ex(dir, &opt, &s, NULL)) _exit(3);
  for (a.i = (unsigned long)round * 100000;; a.i++) {
    if (store_write(s, turn_tx, &a, NULL)) _exit(4);
    __atomic_store_n(&prog->commits, prog->commits + 1, __ATOMIC_SEQ_CST);
    /* Readers killed mid-read leave reader slots behind for mdb_reader_check to clear. */
    if (a.i % 7 == 0 && store_read(s, read_tx, &a, NULL)) _exit(5);
  }
}

typedef struct check_arg {
  uint64_t total;    /* messages in all chats */
  int chats;         /* chats found through the index */
  int errors;
} check_arg;

typedef struct seq_check {
  store_txn *t;
  const char *chat;
  uint64_t n, max, count;
  int errors;
} seq_check;

static int seq_cb(const store_message *m, void *arg) {
  seq_check *c = arg;
  c->n++;
  if (m->seq != c->n || m->text_len < 20 || m->text[0] != 'a' + (int)(m->seq % 26)) c->errors++;
  return 0;
}

static int mem_cb(uint64_t seq, void *arg) {
  seq_check *c = arg;
  store_message m = {0};
  c->n++;
  /* Every remembered seq is a stored message of this chat. */
  if (seq == 0 || seq > c->max || store_message_get(c->t, c->chat, seq, &m) != AG_OK) c->errors++;
  store_message_free(&m);
  return 0;
}

static int chat_cb(const store_chat *c, void *arg) {
  check_arg *a = arg;
  a->chats++;
  (void)c;
  return 0;
}

static int check_tx(store_txn *t, void *arg) {
  check_arg *a = arg;
  store_world w;
  int rc = store_chat_list(t, "kw", chat_cb, a);
  if (rc) return rc;
  uint64_t indexed = 0;
  CHECK_INT(store_chat_count(t, NULL, &indexed), AG_OK);
  CHECK_INT(indexed, (uint64_t)a->chats);
  for (int i = 0; i < KILL_CHATS; i++) {
    store_chat c;
    rc = store_chat_get(t, chat_ids[i], &c);
    if (rc == AG_ERR_NOT_FOUND) continue; /* not created yet */
    if (rc) return rc;
    seq_check sc = {.t = t, .chat = chat_ids[i], .max = c.message_count};
    uint64_t last = 0;
    CHECK_INT(store_message_scan(t, chat_ids[i], 1, seq_cb, &sc), AG_OK);
    CHECK_INT(sc.n, c.message_count); /* the count was committed with the messages */
    CHECK_INT(store_message_last_seq(t, chat_ids[i], &last), AG_OK);
    CHECK_INT(last, c.message_count);
    a->total += sc.n;
    sc.n = 0;
    CHECK_INT(store_memory_scan(t, chat_ids[i], "alice", mem_cb, &sc), AG_OK);
    CHECK_INT(sc.n, c.message_count);
    sc.n = 0;
    CHECK_INT(store_memory_scan(t, chat_ids[i], "bob", mem_cb, &sc), AG_OK);
    CHECK_INT(sc.n, c.message_count / 2);
    store_agent_state st;
    if (c.message_count > 0) {
      CHECK_INT(store_agent_state_get(t, chat_ids[i], "alice", &st), AG_OK);
      CHECK_INT(st.turn_count, c.message_count);
      CHECK_INT(st.counter, c.message_count);
    }
    a->errors += sc.errors;
    store_chat_free(&c);
  }
  /* The world's current chat, once set, is a chat that exists. */
  if (store_world_get(t, "kw", &w) == AG_OK) {
    store_chat c = {0};
    if (*w.current_chat) CHECK_INT(store_chat_get(t, w.current_chat, &c), AG_OK);
    store_chat_free(&c);
    store_world_free(&w);
  }
  return AG_OK;
}

/* Waits until the child has committed commits turns (0: until it starts opening the database, then
 * spin more times on top, to land at varied points of the creation). Returns 0, or -1 when the child
 * died first or made no progress for a minute. */
static int await_progress(pid_t pid, unsigned long commits, unsigned spin) {
  struct timespec t0, now, nap = {0, 200 * 1000};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (commits ? __atomic_load_n(&prog->commits, __ATOMIC_SEQ_CST) < commits : !prog->opening) {
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid) {
      fprintf(stderr, "  the child ended by itself, status %d\n", st);
      return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - t0.tv_sec > 60) return -1;
    nanosleep(&nap, NULL); /* a poll of the child's progress, not the moment of the kill */
  }
  for (unsigned i = 0; i < spin; i++) sched_yield();
  return 0;
}

/* Runs one child on dir, kills it once it has committed commits turns (0: during its open, after spin
 * yields), then checks the database: it opens, is consistent and takes a new write. Returns the number
 * of messages the child left (before the new write), or -1 after a failure. */
static long long kill_round(const char *dir, int round, unsigned long commits, unsigned spin) {
  fflush(NULL);
  prog->opening = 0;
  prog->commits = 0;
  pid_t pid = fork();
  if (pid == 0) child_main(dir, round);
  CHECK(pid > 0);
  if (pid < 0) return -1;
  int waited = await_progress(pid, commits, spin);
  kill(pid, SIGKILL);
  int status = 0;
  if (waited == 0) CHECK(waitpid(pid, &status, 0) == pid);
  if (waited || !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) {
    fprintf(stderr, "  round %d: the child exited by itself, status %d\n", round, status);
    CHECK(!"the child was killed");
    return -1;
  }
  store *s = NULL;
  ag_errmsg em = {{0}};
  int rc = store_open(dir, &s, &em);
  if (rc) fprintf(stderr, "  round %d: reopen: %s\n", round, em.text);
  CHECK_INT(rc, AG_OK);
  if (rc) return -1;
  check_arg before = {0}, after = {0};
  CHECK_INT(store_read(s, check_tx, &before, &em), AG_OK);
  CHECK_INT(before.errors, 0);
  static turn_arg a;
  a.i = 1;
  CHECK_INT(store_write(s, turn_tx, &a, &em), AG_OK);
  CHECK_INT(store_read(s, check_tx, &after, &em), AG_OK);
  CHECK_INT(after.errors, 0);
  CHECK_INT(after.total, before.total + 1);
  store_close(s);
  if (getenv("TEST_VERBOSE"))
    fprintf(stderr, "  round %d: killed after %lu commits, %llu messages\n", round, commits,
            (unsigned long long)before.total);
  if (unit_failures_) {
    fprintf(stderr, "  failed in round %d (killed after %lu commits)\n", round, commits);
    return -1;
  }
  return (long long)after.total;
}

static void test_kill_consistency(void) {
  char *root = unit_tmpdir();
  char dir[4096];
  unsigned seed = getenv("STORE_KILL_SEED") ? (unsigned)strtoul(getenv("STORE_KILL_SEED"), NULL, 10)
                                            : (unsigned)time(NULL) ^ (unsigned)getpid();
  fprintf(stderr, "  STORE_KILL_SEED=%u\n", seed);
  prog = mmap(NULL, sizeof *prog, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  CHECK(prog != MAP_FAILED);
  if (prog == MAP_FAILED) goto done;
  /* Kills during the open, each on a new directory: during mkdir, LMDB's creation of its files, the
   * schema transaction; the last ones after the first turns. */
  for (int round = 0; round < CREATE_ROUNDS; round++) {
    snprintf(dir, sizeof dir, "%s/new%d", root, round);
    unsigned long commits = round < CREATE_ROUNDS - 2 ? 0 : (unsigned long)round - (CREATE_ROUNDS - 3);
    if (kill_round(dir, round, commits, (unsigned)(round * 40 + rand_r(&seed) % 40)) < 0) goto done;
  }
  /* Then one database that grows across rounds, killed anywhere in its write loop. */
  snprintf(dir, sizeof dir, "%s/db", root);
  long long prev = 0, n = 0;
  int progressed = 0;
  for (int round = 0; round < KILL_ROUNDS; round++) {
    /* Odd rounds commit without fsync (see child_main), so they get further in a moment. */
    int r = CREATE_ROUNDS + round;
    n = kill_round(dir, r, 1 + (unsigned long)(rand_r(&seed) % (r % 2 ? 300 : 8)), 0);
    if (n < 0) goto done;
    if (n != prev + 1) progressed++; /* the child committed something before it died */
    prev = n;
  }
  fprintf(stderr, "  %d + %d kill rounds, %lld messages at the end\n", CREATE_ROUNDS, KILL_ROUNDS, n);
  /* Every kill came after commits the child had reported (a chat deleted on the way can make up for
   * one, rarely). */
  CHECK(progressed >= KILL_ROUNDS - 2);
done:
  if (prog && prog != MAP_FAILED) munmap(prog, sizeof *prog);
  unit_rmrf(root);
  free(root);
}

SUITE_RUN((UNIT(test_kill_consistency)))
