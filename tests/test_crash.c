/* Crash safety end to end: `agora run` on a long offline world (two script agents volleying by mention,
 * a new chat between steps) is SIGKILLed 24 times, from startup to deep in a chat; after each kill the
 * database must open consistent and lose nothing committed, and a final run must complete on it. */
#include "agents/msg.h"
#include "storage/store.h"
#include "support/proc.h"
#include "support/unit.h"

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TURN_LIMIT 400
#define STEP_MESSAGES (2 * TURN_LIMIT + 2) /* the opener, L replies each, the turn-limit notice */
#define ROUNDS 24
#define MIN_DELAY_US 1000
#define MAX_DELAY_US 900000
#define MAX_CHATS 256

static const char world_text[] =
  "{\"name\": \"Crash Court\", \"turn_limit\": 400, \"memory_window\": 6,"
  " \"defaults\": {\"provider\": \"script\"},"
  " \"agents\": [{\"name\": \"ping\", \"replies\": [\"@pong ping\", \"@pong ping again\", \"@pong and again\"]},"
  "              {\"name\": \"pong\", \"replies\": [\"@ping pong\", \"@ping pong back\"]}],"
  " \"script\": [{\"from\": \"human\", \"text\": \"@ping serve\"},"
  "            {\"from\": \"world\", \"text\": \"@pong the crowd wants a second rally\"},"
  "            {\"new_chat\": true},"
  "            {\"from\": \"human\", \"text\": \"@pong your serve now\"}]}";

static const char *const agent_ids[] = {"ping", "pong"};

/* The checker's own test turns reports off: it counts what it finds without failing the case. */
static int quiet;

#define BAD(cc, ...)                                                                                     \
  do {                                                                                                   \
    (cc)->bad++;                                                                                         \
    if (!quiet) unit_fail_(__FILE__, __LINE__, __VA_ARGS__);                                             \
  } while (0)

/* What one check saw of a chat. */
typedef struct chat_seen {
  char id[STORE_ID_MAX];
  char world[STORE_ID_MAX];
  uint64_t count;
} chat_seen;

typedef struct check_ctx {
  store_txn *t;
  chat_seen chats[MAX_CHATS];
  size_t n_chats;
  char current[STORE_ID_MAX];
  uint64_t expect_seq; /* message scan */
  uint64_t mem_last;   /* memory scan */
  uint64_t mem_max;
  int bad;
  const char *what;    /* the chat being checked, for messages */
} check_ctx;

static int chat_cb(const store_chat *c, void *arg) {
  check_ctx *cc = arg;
  if (cc->n_chats == MAX_CHATS) return STORE_STOP;
  chat_seen *s = &cc->chats[cc->n_chats++];
  snprintf(s->id, sizeof s->id, "%s", c->id);
  snprintf(s->world, sizeof s->world, "%s", c->world_id);
  s->count = c->message_count;
  return 0;
}

static int world_cb(const store_world *w, void *arg) {
  check_ctx *cc = arg;
  if (strcmp(w->id, "crash-court") != 0) {
    BAD(cc, "unexpected world '%s'", w->id);
  }
  snprintf(cc->current, sizeof cc->current, "%s", w->current_chat ? w->current_chat : "");
  return 0;
}

static int msg_cb(const store_message *m, void *arg) {
  check_ctx *cc = arg;
  if (m->seq != ++cc->expect_seq) {
    BAD(cc, "chat %s: message seq %llu where %llu was expected", cc->what,
               (unsigned long long)m->seq, (unsigned long long)cc->expect_seq);
    return STORE_STOP;
  }
  if (!m->sender || !m->sender[0] || !m->text || strlen(m->text) != m->text_len) {
    BAD(cc, "chat %s: message %llu is damaged", cc->what, (unsigned long long)m->seq);
  }
  return 0;
}

static int mem_cb(uint64_t seq, void *arg) {
  check_ctx *cc = arg;
  if (seq < 1 || seq > cc->mem_max || seq <= cc->mem_last) {
    BAD(cc, "chat %s: memory entry %llu (after %llu) names no stored message of %llu",
               cc->what, (unsigned long long)seq, (unsigned long long)cc->mem_last, (unsigned long long)cc->mem_max);
    return STORE_STOP;
  }
  cc->mem_last = seq;
  return 0;
}

/* Agent ids with a state in the chat, besides the world's own two (a memory may exist without one). */
typedef struct state_ids {
  char ids[8][STORE_ID_MAX];
  size_t n;
} state_ids;

static int state_cb(const char *agent_id, const store_agent_state *st, void *arg) {
  state_ids *s = arg;
  (void)st;
  if (s->n < 8) snprintf(s->ids[s->n++], STORE_ID_MAX, "%s", agent_id);
  return 0;
}

static int check_memory(check_ctx *cc, const char *chat, const char *agent) {
  cc->mem_last = 0;
  return store_memory_scan(cc->t, chat, agent, mem_cb, cc);
}

static int check_txn(store_txn *t, void *arg) {
  check_ctx *cc = arg;
  cc->t = t;
  cc->n_chats = 0;
  cc->current[0] = '\0';
  int rc = store_world_list(t, world_cb, cc);
  if (!rc) rc = store_chat_list(t, NULL, chat_cb, cc);
  if (rc) return rc;
  uint64_t n = 0;
  if ((rc = store_chat_count(t, NULL, &n))) return rc;
  if (n != cc->n_chats) {
    BAD(cc, "chat count %llu, but %zu chats listed", (unsigned long long)n, cc->n_chats);
  }
  int current_found = cc->current[0] == '\0';
  for (size_t i = 0; i < cc->n_chats; i++) {
    chat_seen *c = &cc->chats[i];
    cc->what = c->id;
    if (!strcmp(c->id, cc->current)) current_found = 1;
    cc->expect_seq = 0;
    if ((rc = store_message_scan(t, c->id, 1, msg_cb, cc))) return rc;
    uint64_t last = 0;
    if ((rc = store_message_last_seq(t, c->id, &last))) return rc;
    if (cc->expect_seq != c->count || last != c->count) {
      BAD(cc, "chat %s: message_count %llu, %llu messages stored, last seq %llu", c->id,
                 (unsigned long long)c->count, (unsigned long long)cc->expect_seq, (unsigned long long)last);
    }
    cc->mem_max = cc->expect_seq;
    for (size_t a = 0; a < 2; a++)
      if ((rc = check_memory(cc, c->id, agent_ids[a]))) return rc;
    state_ids s = {.n = 0};
    if ((rc = store_agent_state_scan(t, c->id, state_cb, &s))) return rc;
    for (size_t a = 0; a < s.n; a++) {
      if (strcmp(s.ids[a], "ping") && strcmp(s.ids[a], "pong")) {
        BAD(cc, "chat %s: state of unknown agent '%s'", c->id, s.ids[a]);
        if ((rc = check_memory(cc, c->id, s.ids[a]))) return rc;
      }
    }
  }
  if (!current_found) {
    BAD(cc, "the current chat '%s' does not exist", cc->current);
  }
  return AG_OK;
}

/* Opens the database in this process and checks it; prev (may be NULL) is the previous check, whose
 * chats must all still be there with at least their messages. */
static int check_db(const char *dir, const check_ctx *prev, check_ctx *cc) {
  store *st = NULL;
  ag_errmsg em = {""};
  int rc = store_open(dir, &st, &em);
  if (rc) {
    unit_fail_(__FILE__, __LINE__, "store_open after a kill: %s", em.text);
    return -1;
  }
  memset(cc, 0, sizeof *cc);
  rc = store_read(st, check_txn, cc, &em);
  store_close(st);
  if (rc) {
    unit_fail_(__FILE__, __LINE__, "reading the database: %s (%d)", em.text, rc);
    return -1;
  }
  for (size_t i = 0; prev && i < prev->n_chats; i++) {
    const chat_seen *old = &prev->chats[i];
    const chat_seen *now = NULL;
    for (size_t j = 0; j < cc->n_chats && !now; j++)
      if (!strcmp(cc->chats[j].id, old->id)) now = &cc->chats[j];
    if (!now || now->count < old->count) {
      BAD(cc, "chat %s had %llu messages, now %s %llu", old->id, (unsigned long long)old->count,
          now ? "only" : "gone:", now ? (unsigned long long)now->count : 0ull);
    }
  }
  return cc->bad ? -1 : 0;
}

static uint64_t total_messages(const check_ctx *cc) {
  uint64_t n = 0;
  for (size_t i = 0; i < cc->n_chats; i++) n += cc->chats[i].count;
  return n;
}

/* Starts `agora run world --db dir` with its output thrown away, kills it after delay_us; returns the
 * wait status, or -1. */
static int run_and_kill(const char *world, const char *dir, useconds_t delay_us) {
  const char *bin = getenv("AGORA_BIN");
  if (!bin) bin = "./agora";
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int fd = open("/dev/null", O_RDWR);
    if (fd >= 0) {
      dup2(fd, 0);
      dup2(fd, 1);
      dup2(fd, 2);
      if (fd > 2) close(fd);
    }
    char *argv[] = {(char *)bin, "run", (char *)world, "--db", (char *)dir, NULL};
    execv(bin, argv);
    _exit(127);
  }
  usleep(delay_us);
  kill(pid, SIGKILL);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0) {
  }
  return st;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void kill_run_repeatedly(void) {
  char *tmp = unit_tmpdir();
  CHECK(tmp != NULL);
  if (!tmp) return;
  char world[4096], dir[4096];
  snprintf(world, sizeof world, "%s/crash.json", tmp);
  snprintf(dir, sizeof dir, "%s/db", tmp);
  CHECK_INT(unit_write_file(world, world_text), 0);

  double t0 = now_s();
  check_ctx *prev = calloc(1, sizeof *prev), *cur = calloc(1, sizeof *cur);
  int have_prev = 0, mid_chat = 0, completed = 0;
  for (int round = 0; round < ROUNDS; round++) {
    /* Delays spread geometrically: startup, database creation, first messages, deep in a rally,
     * around the new chat between steps. */
    double f = (double)round / (ROUNDS - 1);
    useconds_t delay = (useconds_t)(MIN_DELAY_US * pow((double)MAX_DELAY_US / MIN_DELAY_US, f));
    int st = run_and_kill(world, dir, delay);
    if (st == -1) {
      unit_fail_(__FILE__, __LINE__, "round %d: cannot start agora", round);
      break;
    }
    if (WIFEXITED(st)) {
      /* It finished before the kill: fine, but it must have succeeded. */
      if (WEXITSTATUS(st) != 0) unit_fail_(__FILE__, __LINE__, "round %d: agora exited %d", round, WEXITSTATUS(st));
      completed++;
    } else if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) {
      unit_fail_(__FILE__, __LINE__, "round %d: agora ended with wait status %#x", round, st);
    }
    if (access(dir, F_OK) != 0) continue; /* killed before it created anything */
    if (check_db(dir, have_prev ? prev : NULL, cur)) {
      unit_fail_(__FILE__, __LINE__, "round %d (killed after %.1f ms): inconsistent database", round, delay / 1000.0);
      break;
    }
    if (WIFSIGNALED(st) && have_prev && total_messages(cur) > total_messages(prev)) mid_chat++;
    if (WIFSIGNALED(st) && !have_prev && total_messages(cur) > 0) mid_chat++;
    check_ctx *t = prev;
    prev = cur;
    cur = t;
    have_prev = 1;
  }
  fprintf(stderr, "  %d rounds in %.1f s: %d killed mid-chat, %d completed, %zu chats, %llu messages\n", ROUNDS,
          now_s() - t0, mid_chat, completed, prev->n_chats, (unsigned long long)total_messages(prev));
  /* The kills must really have landed while messages were being written. */
  CHECK(mid_chat >= 3);
  CHECK(have_prev);

  /* A run to the end on the survivor. */
  const char *args[] = {"run", world, "--db", dir, "--json", NULL};
  proc_result r;
  CHECK_INT(proc_agora(args, NULL, NULL, &r), 0);
  CHECK_INT(r.status, 0);
  if (r.status) fprintf(stderr, "  stderr: %.500s\n", r.err);
  char *msgs = proc_messages(r.out);
  size_t lines = 0;
  for (const char *p = msgs; (p = strchr(p, '\n')); p++) lines++;
  CHECK_INT(lines, 3 * STEP_MESSAGES);
  free(msgs);
  proc_result_free(&r);
  if (check_db(dir, have_prev ? prev : NULL, cur) == 0) {
    /* Its second chat is current and complete. */
    const chat_seen *c = NULL;
    for (size_t i = 0; i < cur->n_chats; i++)
      if (!strcmp(cur->chats[i].id, cur->current)) c = &cur->chats[i];
    CHECK(c != NULL);
    if (c) CHECK_INT(c->count, STEP_MESSAGES);
    CHECK(cur->n_chats >= 2);
  } else {
    unit_fail_(__FILE__, __LINE__, "inconsistent database after the final run");
  }
  free(prev);
  free(cur);
  unit_rmrf(tmp);
  free(tmp);
}

/* The checker itself: a database damaged on purpose through the store API is reported. */
typedef struct damage_arg {
  int damaged;
} damage_arg;

static int damage_txn(store_txn *t, void *arg) {
  damage_arg *d = arg;
  store_world w = {.id = "crash-court", .name = "Crash Court", .settings_json = "{}", .current_chat = ""};
  int rc = store_world_put(t, &w);
  const char *ids[] = {"c1", "c2"};
  for (int i = 0; i < 2 && !rc; i++) {
    /* c1: says 3 messages, holds 1 and 2; c2: holds 1 and 3 (damaged) or 1 and 2 (sound). */
    store_chat c = {.id = ids[i], .world_id = "crash-court", .title = "T", .message_count = i == 0 && d->damaged ? 3 : 2,
                    .created_at_ms = 1, .updated_at_ms = 2 + i};
    rc = store_chat_put(t, &c);
    for (uint64_t k = 1; k <= 2 && !rc; k++) {
      store_message m = {.seq = i == 1 && k == 2 && d->damaged ? 3 : k, .ts_ms = 5, .kind = AG_KIND_AGENT,
                         .sender = "ping", .text = "x"};
      rc = store_message_put(t, ids[i], &m);
      if (!rc) rc = store_memory_append(t, ids[i], "ping", m.seq);
    }
  }
  if (!rc) rc = store_world_set_current(t, "crash-court", "c1");
  return rc;
}

static void checker_finds_damage(void) {
  for (int damaged = 0; damaged < 2; damaged++) {
    char *tmp = unit_tmpdir();
    store *st = NULL;
    ag_errmsg em = {""};
    CHECK_INT(store_open(tmp, &st, &em), 0);
    damage_arg d = {damaged};
    CHECK_INT(store_write(st, damage_txn, &d, &em), 0);
    store_close(st);
    check_ctx *prev = calloc(1, sizeof *prev), *cc = calloc(1, sizeof *cc);
    prev->n_chats = 1; /* a chat the previous check saw, now gone */
    snprintf(prev->chats[0].id, sizeof prev->chats[0].id, "%s", damaged ? "c9" : "c2");
    prev->chats[0].count = 2;
    quiet = damaged;
    int rc = check_db(tmp, prev, cc);
    quiet = 0;
    if (damaged) {
      CHECK_INT(rc, -1);
      CHECK_INT(cc->bad, 5); /* c1: count; c2: seq, last seq, memory past the count; c9 gone */
    } else {
      CHECK_INT(rc, 0);
      CHECK_INT(cc->n_chats, 2);
      CHECK_STR(cc->current, "c1");
    }
    free(prev);
    free(cc);
    unit_rmrf(tmp);
    free(tmp);
  }
}

static const unit_test tests[] = {
  UNIT(checker_finds_damage),
  UNIT(kill_run_repeatedly),
};

int main(int argc, char **argv) { return unit_main(argc, argv, tests, sizeof tests / sizeof *tests); }
