/* Agora's own cost, measured in process on the offline script provider: turn overhead of a two-agent
 * ping-pong (with and without LMDB, per sync mode; also the last 1,000 turns alone, to show it does
 * not grow with history), bus rule evaluation with 100 declining subscribers, and memory per agent.
 * Prints a table with min/median/max over repeated runs. Usage: bench_world [turns] [runs]. */
#include "chat/session.h"
#include "storage/store.h"
#include "world/world.h"

#include "support/bench_stat.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


static world *make_world(struct event_base *base, const char *json) {
  world_spec spec;
  ag_errmsg em = {""};
  if (world_spec_parse(json, strlen(json), "bench", &spec, &em)) {
    fprintf(stderr, "%s\n", em.text);
    exit(1);
  }
  world *w = NULL;
  if (world_new(base, &spec, &w, &em)) {
    fprintf(stderr, "%s\n", em.text);
    exit(1);
  }
  world_spec_free(&spec);
  return w;
}

/* ---- 1. turn overhead ---- */

typedef struct stamps {
  double *t; /* time each message seq was output */
  size_t cap;
} stamps;

static void stamp(void *ud, bus_topic topic, void *payload) {
  stamps *s = ud;
  if (topic != BUS_MESSAGE) return;
  uint64_t seq = ((ag_msg *)payload)->seq;
  if (seq < s->cap) s->t[seq] = bench_now_s();
}

/* mode: -1 no storage; else a store_sync value. Returns µs per turn overall and for the last 1,000. */
static void ping_pong(int turns, int mode, double *all_us, double *tail_us) {
  char json[512];
  snprintf(json, sizeof json,
           "{\"name\": \"pingpong\", \"turn_limit\": %d, \"memory_window\": 10, \"agents\": ["
           "{\"name\": \"p\", \"replies\": [\"@q ping, your move\"]}, {\"name\": \"q\", \"replies\": [\"@p pong, yours\"]}]}",
           turns / 2 + 1);
  struct event_base *base = event_base_new();
  world *w = make_world(base, json);
  store *st = NULL;
  chat_session *cs = NULL;
  char dir[] = "/tmp/agora-bench-XXXXXX";
  if (mode >= 0) {
    if (!mkdtemp(dir)) exit(1);
    store_options opt = {0, (store_sync)mode, 0};
    ag_errmsg em = {""};
    if (store_open_ex(dir, &opt, &st, &em) || chat_session_open(st, w, &cs, &em) || chat_session_new(cs, &em)) {
      fprintf(stderr, "store: %s\n", em.text);
      exit(1);
    }
  }
  stamps s = {calloc((size_t)turns + 3, sizeof(double)), (size_t)turns + 3};
  bus_subscribe(world_bus(w), BUS_MESSAGE, BUS_PHASE_OUTPUT, stamp, &s, NULL);
  double t0 = bench_now_s();
  world_publish(w, "human", "@p start", NULL);
  world_run_until_quiet(w);
  double t1 = bench_now_s();
  *all_us = (t1 - t0) * 1e6 / turns;
  size_t last = (size_t)turns + 1; /* seq of the last reply */
  *tail_us = (s.t[last] - s.t[last - 1000]) * 1e6 / 1000;
  free(s.t);
  chat_session_free(cs);
  world_free(w);
  event_base_free(base);
  if (st) {
    store_close(st);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) {
    }
  }
}

/* ---- 5. bus: 100 subscribers that all decline ---- */

/* human: a human message every agent must evaluate (and decline); else a message from an agent
 * mentioning nobody of the world, which the world routes to no one. */
static double bus_declines(int agents, int messages, int human) {
  char *json = malloc((size_t)agents * 64 + 256);
  strcpy(json, "{\"name\": \"bus\", \"agents\": [");
  for (int i = 0; i < agents; i++) sprintf(json + strlen(json), "%s{\"name\": \"a%d\"}", i ? "," : "", i);
  strcat(json, "]}");
  struct event_base *base = event_base_new();
  world *w = make_world(base, json);
  free(json);
  double t0 = bench_now_s();
  for (int i = 0; i < messages; i++) {
    if (human) /* no leading mention, a mention elsewhere: addressed to no one, but every agent checks */
      world_publish(w, "human", "status report, nothing for @nobody here", NULL);
    else
      world_publish(w, "outsider", "@nobody status report, nothing for you", NULL);
    if (i % 1000 == 999) world_run_until_quiet(w);
  }
  world_run_until_quiet(w);
  double dt = bench_now_s() - t0;
  world_free(w);
  event_base_free(base);
  return messages / dt;
}

/* ---- 3. memory: peak RSS after a 100-message chat, in a fresh process ---- */

static long rss_after_chat(int agents) {
  pid_t pid = fork();
  if (pid == 0) {
    char *json = malloc((size_t)agents * 96 + 256);
    strcpy(json, "{\"name\": \"mem\", \"agents\": [");
    for (int i = 0; i < agents; i++)
      sprintf(json + strlen(json), "%s{\"name\": \"a%d\", \"replies\": [\"noted, thank you\"]}", i ? "," : "", i);
    strcat(json, "]}");
    struct event_base *base = event_base_new();
    world *w = agents ? make_world(base, json) : NULL;
    free(json);
    if (w) {
      char dir[] = "/tmp/agora-bench-XXXXXX";
      if (!mkdtemp(dir)) _exit(1);
      store *st = NULL;
      chat_session *cs = NULL;
      store_options opt = {0, STORE_SYNC_NONE, 0};
      if (store_open_ex(dir, &opt, &st, NULL) || chat_session_open(st, w, &cs, NULL) || chat_session_new(cs, NULL))
        _exit(1);
      for (int i = 0; i < 50; i++) { /* 50 questions, 50 answers */
        char text[64];
        snprintf(text, sizeof text, "@a%d what do you think?", i % agents);
        world_publish(w, "human", text, NULL);
        world_run_until_quiet(w);
      }
      chat_session_free(cs);
      struct rusage ru;
      getrusage(RUSAGE_SELF, &ru);
      printf("%ld\n", ru.ru_maxrss);
      fflush(stdout);
      char cmd[128];
      snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
      if (system(cmd)) {
      }
      _exit(0);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%ld\n", ru.ru_maxrss);
    fflush(stdout);
    _exit(0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return 0;
}

static long child_rss(int agents) {
  int fd[2];
  if (pipe(fd)) return -1;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], 1);
    close(fd[0]);
    rss_after_chat(agents);
    _exit(0);
  }
  close(fd[1]);
  char buf[64] = "";
  ssize_t n = read(fd[0], buf, sizeof buf - 1);
  close(fd[0]);
  waitpid(pid, NULL, 0);
  if (n <= 0) return -1;
  buf[n] = '\0';
  return atol(buf);
}

int main(int argc, char **argv) {
  int turns = argc > 1 ? atoi(argv[1]) : 10000;
  int runs = argc > 2 ? atoi(argv[2]) : 5;
  if (turns < 2000) turns = 2000;
  if (runs < 1) runs = 1;
  double *a = calloc((size_t)runs, sizeof *a), *b = calloc((size_t)runs, sizeof *b);
  printf("| %-46s | %10s | %10s | %10s | %-9s |\n", "scenario", "min", "median", "max", "unit");
  printf("|%s|%s|%s|%s|%s|\n", "------------------------------------------------", "------------",
         "------------", "------------", "-----------");
  static const struct {
    int mode;
    const char *name;
  } modes[] = {{-1, "no storage (--no-save)"},
               {STORE_SYNC_NONE, "LMDB, commit per message, no fsync"},
               {STORE_SYNC_NOMETA, "LMDB, commit per message, data fsync"},
               {STORE_SYNC_FULL, "LMDB, commit per message, full fsync"}};
  for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
    for (int r = 0; r < runs; r++) ping_pong(turns, modes[m].mode, &a[r], &b[r]);
    char name[128];
    snprintf(name, sizeof name, "turn, %s", modes[m].name);
    bench_row(name, "µs/turn", a, runs);
    snprintf(name, sizeof name, "  last 1,000 turns of %d", turns);
    bench_row(name, "µs/turn", b, runs);
  }
  for (int r = 0; r < runs; r++) a[r] = bus_declines(100, 100000, 1) / 1000.0;
  bench_row("bus: 100 agents all evaluate and decline", "k msg/s", a, runs);
  for (int r = 0; r < runs; r++) a[r] *= 100;
  bench_row("  rule evaluations", "k evals/s", a, runs);
  for (int r = 0; r < runs; r++) a[r] = bus_declines(100, 100000, 0) / 1000.0;
  bench_row("bus: agent message routed past 100 agents", "k msg/s", a, runs);
  long base = child_rss(0), r50 = child_rss(50), r1000 = child_rss(1000);
  double v[1];
  v[0] = (double)r50 / 1024.0;
  bench_row("peak RSS, 50 agents, 100-message chat", "MiB", v, 1);
  v[0] = (double)r1000 / 1024.0;
  bench_row("peak RSS, 1,000 agents, 100-message chat", "MiB", v, 1);
  v[0] = (double)(r1000 - base) * 1024.0 / 1000.0 / 1024.0;
  bench_row("  per agent (1,000 agents, over an empty process)", "KiB", v, 1);
  free(a);
  free(b);
  return 0;
}
