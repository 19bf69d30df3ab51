/* Crash safety end to end (a crash campaign): `agora run --json` on a long offline world (two script
 * agents volleying by mention, a new chat between steps) is SIGKILLed ROUNDS times at seeded random
 * moments counted in its own printed progress (messages, state-saved events), never in time. After
 * each kill the database must open consistent (seqs contiguous, counts, memories, the current chat,
 * each agent's context equal to the reduction of the chat's event thread: the agents save contexts),
 * hold every message the run printed before a state-saved event covering it, with the text and sender
 * printed, and lose nothing an earlier round had; a final run must complete on it. CRASH_SEED replays
 * a campaign, CRASH_ROUNDS sets its length (bench/crash_campaign.sh runs 100+). */
#include <cjson/cJSON.h>

#include "agents/msg.h"
#include "storage/store.h"
#include "support/proc.h"
#include "support/reduce.h"
#include "support/suite.h"
#include "support/unit.h"
#include "support/wait.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TURN_LIMIT 100
#define STEP_MESSAGES (2 * TURN_LIMIT + 2) /* the opener, L replies each, the turn-limit notice */
#define ROUNDS 20
#define MAX_CHATS 256

static const char world_text[] =
  "{\"name\": \"Crash Court\", \"turn_limit\": 100, \"memory_window\": 6,"
  " \"defaults\": {\"provider\": \"script\"},"
  " \"agents\": [{\"name\": \"ping\", \"monadic\": true, \"replies\": [\"@pong ping\", \"@pong ping again\","
  "               {\"tool\": \"save_context\", \"args\": {\"topics\": [\"rally\"], \"notes\": [\"served\"]}},"
  "               \"@pong and again\"]},"
  "              {\"name\": \"pong\", \"monadic\": true, \"replies\": [\"@ping pong\","
  "               {\"tool\": \"save_context\", \"args\": {\"notes\": [\"returned\"], \"drop\": {\"topics\": [\"rally\"]}}},"
  "               \"@ping pong back\"]}],"
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

static unsigned long contexts_checked; /* saved ones (version > 0) compared with their thread */

/* The agent's stored context is the reduction of the chat's event thread (none: version 0). */
static int check_context(check_ctx *cc, const char *chat, const char *agent) {
  context_state want, got;
  context_init(&want);
  context_init(&got);
  int rc = reduce_thread_txn(cc->t, chat, agent, &want);
  store_context c;
  memset(&c, 0, sizeof c);
  int found = rc ? rc : store_context_get(cc->t, chat, agent, &c);
  if (found == AG_OK) {
    got.version = c.version;
    got.updated_at_ms = c.updated_at_ms;
    cJSON_Delete(got.data);
    got.data = cJSON_Parse(c.data_json);
    store_context_free(&c);
  }
  if (!rc && found != AG_OK && found != AG_ERR_NOT_FOUND) rc = found;
  contexts_checked += want.version > 0;
  if (!rc && (!got.data || !reduce_same_context(&want, &got)))
    BAD(cc, "chat %s: %s's context is version %llu, its thread reduces to version %llu", chat, agent,
        (unsigned long long)got.version, (unsigned long long)want.version);
  context_free(&want);
  context_free(&got);
  return rc;
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
      if ((rc = check_memory(cc, c->id, agent_ids[a])) || (rc = check_context(cc, c->id, agent_ids[a]))) return rc;
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

/* What a run printed before it was killed: its messages and, per chat, the last state-saved seq. */
typedef struct printed_msg {
  char chat[STORE_ID_MAX];
  uint64_t seq;
  char *sender, *text;
} printed_msg;

typedef struct run_seen {
  printed_msg *msgs;
  size_t n, cap;
  struct {
    char chat[STORE_ID_MAX];
    uint64_t seq;
  } saved[MAX_CHATS];
  size_t n_saved;
} run_seen;

static void run_seen_free(run_seen *rs) {
  for (size_t i = 0; i < rs->n; i++) {
    free(rs->msgs[i].sender);
    free(rs->msgs[i].text);
  }
  free(rs->msgs);
  memset(rs, 0, sizeof *rs);
}

static const char *jstr(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItem(o, k);
  return cJSON_IsString(v) ? v->valuestring : "";
}

/* One NDJSON line of the run's output. */
static void run_seen_line(run_seen *rs, const char *line, size_t len) {
  cJSON *j = cJSON_ParseWithLength(line, len);
  const cJSON *seq = cJSON_GetObjectItem(j, "seq");
  const char *chat = jstr(j, "chat");
  if (!cJSON_IsNumber(seq) || !chat[0]) goto done;
  if (!strcmp(jstr(j, "type"), "message")) {
    if (rs->n == rs->cap) {
      rs->cap = rs->cap ? rs->cap * 2 : 256;
      rs->msgs = realloc(rs->msgs, rs->cap * sizeof *rs->msgs);
    }
    printed_msg *m = &rs->msgs[rs->n++];
    snprintf(m->chat, sizeof m->chat, "%s", chat);
    m->seq = (uint64_t)seq->valuedouble;
    m->sender = strdup(jstr(j, "sender"));
    m->text = strdup(jstr(j, "text"));
  } else if (!strcmp(jstr(j, "event"), "state-saved")) {
    size_t i = 0;
    while (i < rs->n_saved && strcmp(rs->saved[i].chat, chat)) i++;
    if (i == MAX_CHATS) goto done;
    if (i == rs->n_saved) snprintf(rs->saved[rs->n_saved++].chat, STORE_ID_MAX, "%s", chat);
    if ((uint64_t)seq->valuedouble > rs->saved[i].seq) rs->saved[i].seq = (uint64_t)seq->valuedouble;
  }
done:
  cJSON_Delete(j);
}

/* Starts `agora run world --db dir --json` and reads its output into rs; kills it once it has printed
 * messages messages and at least one state-saved event (messages 0: at once, during its start-up).
 * Returns the wait status, or -1. */
static int run_and_kill(const char *world, const char *dir, size_t messages, run_seen *rs) {
  const char *bin = getenv("AGORA_BIN");
  if (!bin) bin = "./agora";
  int out[2];
  if (pipe(out)) return -1;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int fd = open("/dev/null", O_RDWR);
    dup2(fd, 0);
    dup2(out[1], 1);
    dup2(fd, 2);
    close(out[0]);
    close(out[1]);
    char *argv[] = {(char *)bin, "run", (char *)world, "--db", (char *)dir, "--json", NULL};
    execv(bin, argv);
    _exit(127);
  }
  close(out[1]);
  char *buf = malloc(1 << 20);
  size_t have = 0;
  int killed = 0;
  if (messages == 0) killed = !kill(pid, SIGKILL);
  for (;;) {
    ssize_t r = read(out[0], buf + have, (1 << 20) - 1 - have);
    if (r <= 0) break;
    have += (size_t)r;
    char *line = buf, *nl;
    while ((nl = memchr(line, '\n', (size_t)(buf + have - line)))) {
      if (!killed) run_seen_line(rs, line, (size_t)(nl - line));
      line = nl + 1;
    }
    have -= (size_t)(line - buf);
    memmove(buf, line, have);
    if (have == (1 << 20) - 1) have = 0; /* a line longer than any this world prints */
    if (!killed && rs->n >= messages && rs->n_saved) killed = !kill(pid, SIGKILL);
  }
  free(buf);
  close(out[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0) {
  }
  return st;
}

typedef struct saved_check {
  const run_seen *rs;
  int bad;
} saved_check;

/* Every message printed with a seq a state-saved event of its chat covers is stored as printed. */
static int saved_txn(store_txn *t, void *arg) {
  saved_check *sc = arg;
  const run_seen *rs = sc->rs;
  for (size_t i = 0; i < rs->n; i++) {
    const printed_msg *p = &rs->msgs[i];
    uint64_t upto = 0;
    for (size_t k = 0; k < rs->n_saved; k++)
      if (!strcmp(rs->saved[k].chat, p->chat)) upto = rs->saved[k].seq;
    if (p->seq > upto) continue;
    store_message m;
    memset(&m, 0, sizeof m);
    int rc = store_message_get(t, p->chat, p->seq, &m);
    if (rc || strcmp(m.sender, p->sender) || strcmp(m.text, p->text)) {
      sc->bad++;
      if (!quiet)
        unit_fail_(__FILE__, __LINE__, "chat %s: message %llu printed as saved (%s: %s) is %s", p->chat,
                   (unsigned long long)p->seq, p->sender, p->text, rc ? "missing" : "different");
    }
    if (!rc) store_message_free(&m);
  }
  return AG_OK;
}

static int check_saved(const char *dir, const run_seen *rs) {
  store *st = NULL;
  ag_errmsg em = {""};
  if (store_open(dir, &st, &em)) return -1;
  saved_check sc = {rs, 0};
  int rc = store_read(st, saved_txn, &sc, &em);
  store_close(st);
  return rc || sc.bad ? -1 : 0;
}

/* One round: a run killed after messages printed messages; checks the database against the previous
 * round (prev, when have_prev) into cur and against what the run printed as saved. Returns -1 when the
 * campaign must stop, else 1 when the kill landed mid-chat (after a state-saved), 0 otherwise. */
static int crash_round(const char *world, const char *dir, int round, size_t messages, const check_ctx *prev,
                       check_ctx *cur, int *completed) {
  run_seen rs;
  memset(&rs, 0, sizeof rs);
  int st = run_and_kill(world, dir, messages, &rs), ret = 0;
  if (st == -1) {
    unit_fail_(__FILE__, __LINE__, "round %d: cannot start agora", round);
    ret = -1;
  } else if (WIFEXITED(st)) {
    /* It finished before the kill: fine, but it must have succeeded. */
    if (WEXITSTATUS(st) != 0) unit_fail_(__FILE__, __LINE__, "round %d: agora exited %d", round, WEXITSTATUS(st));
    (*completed)++;
  } else if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) {
    unit_fail_(__FILE__, __LINE__, "round %d: agora ended with wait status %#x", round, st);
  }
  if (ret == 0 && access(dir, F_OK) == 0) {
    if (check_db(dir, prev, cur) || check_saved(dir, &rs)) {
      unit_fail_(__FILE__, __LINE__, "round %d (killed after %zu messages printed): inconsistent database", round,
                 messages);
      ret = -1;
    } else {
      ret = WIFSIGNALED(st) && rs.n_saved > 0;
    }
  } else if (ret == 0) {
    ret = 2; /* killed before it created anything: nothing to compare with */
  }
  run_seen_free(&rs);
  return ret;
}

static void kill_run_repeatedly(void) {
  char *tmp = unit_tmpdir();
  CHECK(tmp != NULL);
  if (!tmp) return;
  char world[4096], dir[4096];
  snprintf(world, sizeof world, "%s/crash.json", tmp);
  snprintf(dir, sizeof dir, "%s/db", tmp);
  CHECK_INT(unit_write_file(world, world_text), 0);
  const char *env = getenv("CRASH_SEED");
  unsigned seed = env ? (unsigned)strtoul(env, NULL, 10) : (unsigned)time(NULL) ^ (unsigned)getpid();
  env = getenv("CRASH_ROUNDS");
  int rounds = env && atoi(env) > 1 ? atoi(env) : ROUNDS;
  fprintf(stderr, "  CRASH_SEED=%u CRASH_ROUNDS=%d\n", seed, rounds);

  double t0 = now_s();
  check_ctx *prev = calloc(1, sizeof *prev), *cur = calloc(1, sizeof *cur);
  int have_prev = 0, mid_chat = 0, completed = 0;
  for (int round = 0; round < rounds; round++) {
    /* The first at start-up (database creation); then anywhere in the run's 3 * STEP_MESSAGES: first
     * messages, deep in a rally, around the new chat between steps. */
    size_t messages = round == 0 ? 0 : 1 + (size_t)rand_r(&seed) % (3 * STEP_MESSAGES - 1);
    int r = crash_round(world, dir, round, messages, have_prev ? prev : NULL, cur, &completed);
    if (r < 0) break;
    if (r == 2) continue;
    mid_chat += r;
    check_ctx *t = prev;
    prev = cur;
    cur = t;
    have_prev = 1;
  }
  fprintf(stderr, "  %d rounds in %.1f s: %d killed mid-chat, %d completed, %zu chats, %llu messages, %lu contexts checked\n",
          rounds, now_s() - t0, mid_chat, completed, prev->n_chats, (unsigned long long)total_messages(prev),
          contexts_checked);
  CHECK(contexts_checked > 0);
  /* The kills landed while messages were being written (a kill in the last buffered lines of a run
   * may come after its end). */
  CHECK(mid_chat >= rounds / 2);
  CHECK(have_prev);

  /* A run to the end on the survivor. */
  const char *args[] = {"run", world, "--db", dir, "--json", NULL};
  proc_result r;
  PROC_OK(args, NULL, NULL, &r);
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
  store_context cx = {1, 5, "{\"notes\": [\"no save_context in the thread\"]}", NULL};
  if (!rc && d->damaged) rc = store_context_put(t, "c1", "pong", &cx);
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
    /* A message the run printed as saved must be stored as printed: c1's 2 is "ping: x". */
    run_seen rs;
    memset(&rs, 0, sizeof rs);
    const char *two = damaged ? "{\"type\":\"message\",\"chat\":\"c1\",\"seq\":2,\"sender\":\"ping\",\"text\":\"y\"}"
                              : "{\"type\":\"message\",\"chat\":\"c1\",\"seq\":2,\"sender\":\"ping\",\"text\":\"x\"}";
    const char *three = "{\"type\":\"message\",\"chat\":\"c1\",\"seq\":3,\"sender\":\"ping\",\"text\":\"x\"}";
    run_seen_line(&rs, two, strlen(two));
    run_seen_line(&rs, three, strlen(three));
    const char *ev = "{\"type\":\"event\",\"event\":\"state-saved\",\"chat\":\"c1\",\"seq\":2}";
    run_seen_line(&rs, ev, strlen(ev));
    CHECK_INT(rs.n, 2);
    quiet = damaged;
    CHECK_INT(check_saved(tmp, &rs), damaged ? -1 : 0); /* seq 3 was never saved: not required */
    quiet = 0;
    run_seen_free(&rs);
    if (damaged) {
      CHECK_INT(rc, -1);
      CHECK_INT(cc->bad, 6); /* c1: count, a context without a thread; c2: seq, last seq, memory past the count; c9 gone */
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

SUITE_RUN((UNIT(checker_finds_damage), UNIT(kill_run_repeatedly)))
