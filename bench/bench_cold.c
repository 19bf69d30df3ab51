/* Cold start of the agora binary on a big database: 1,000 chats of 1,000 messages plus one chat of
 * 100,000 (1.1 M messages). Measures process start to `agora chats list` done, and to `agora replay`
 * of the 100,000-message chat done (messages per second). Usage: bench_cold AGORA_BIN [runs] [dir]. */
#include "agents/msg.h"
#include "storage/store.h"
#include "support/bench_stat.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


typedef struct fill {
  const char *chat;
  uint64_t from, to;
  int64_t ts;
  int create;
} fill;

static const char *const senders[] = {"human", "alice", "bob", "carol"};

static int fill_txn(store_txn *t, void *arg) {
  fill *f = arg;
  int rc;
  if (f->create) {
    store_chat c = {.id = f->chat, .world_id = "big", .title = "A long conversation about the town library",
                    .created_at_ms = f->ts, .updated_at_ms = f->ts};
    if ((rc = store_chat_put(t, &c))) return rc;
  }
  for (uint64_t s = f->from; s <= f->to; s++) {
    store_message m = {s, f->ts + (int64_t)s, s % 4 ? AG_KIND_AGENT : AG_KIND_HUMAN, senders[s % 4],
                       "@bob I think the reading room should stay open late on Thursdays, what do you say?", 0, NULL, 0, 0};
    if ((rc = store_message_put(t, f->chat, &m))) return rc;
  }
  store_chat c = {.id = f->chat, .world_id = "big", .title = "A long conversation about the town library",
                  .message_count = f->to, .created_at_ms = f->ts, .updated_at_ms = f->ts + (int64_t)f->to};
  return store_chat_put(t, &c);
}

static int world_txn(store_txn *t, void *arg) {
  (void)arg;
  store_world w = {"big", "Big", "{\"name\":\"Big\",\"agents\":[{\"name\":\"alice\"},{\"name\":\"bob\"},{\"name\":\"carol\"}]}",
                   "", 1, 1, NULL};
  return store_world_put(t, &w);
}

static void build(const char *dir, char long_chat[STORE_ID_MAX]) {
  store *st = NULL;
  store_options opt = {1u << 30, STORE_SYNC_NONE, 0};
  ag_errmsg em = {""};
  if (store_open_ex(dir, &opt, &st, &em) || store_write(st, world_txn, NULL, &em)) {
    fprintf(stderr, "bench_cold: %s\n", em.text);
    exit(1);
  }
  int64_t ts = 1790000000000;
  for (int c = 0; c < 1000; c++) {
    char id[STORE_ID_MAX];
    store_chat_id_new(id);
    fill f = {id, 1, 1000, ts + c * 10000, 1};
    if (store_write(st, fill_txn, &f, &em)) {
      fprintf(stderr, "bench_cold: %s\n", em.text);
      exit(1);
    }
  }
  store_chat_id_new(long_chat);
  for (uint64_t from = 1; from <= 100000; from += 5000) {
    fill f = {long_chat, from, from + 4999, ts, from == 1};
    if (store_write(st, fill_txn, &f, &em)) {
      fprintf(stderr, "bench_cold: %s\n", em.text);
      exit(1);
    }
  }
  store_sync_now(st, NULL);
  store_close(st);
}

/* Wall time of one run of the binary, stdout to /dev/null. */
static double time_cmd(char *const argv[]) {
  double t0 = bench_now_s();
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open("/dev/null", O_WRONLY);
    dup2(fd, 1);
    execv(argv[0], argv);
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  double dt = bench_now_s() - t0;
  if (!WIFEXITED(st) || WEXITSTATUS(st)) {
    fprintf(stderr, "bench_cold: %s %s failed\n", argv[0], argv[1]);
    exit(1);
  }
  return dt;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_cold AGORA_BIN [runs] [dir]\n");
    return 2;
  }
  int runs = argc > 2 ? atoi(argv[2]) : 5;
  if (runs < 1) runs = 1;
  char tmpl[] = "/tmp/agora-cold-XXXXXX";
  const char *dir = argc > 3 ? argv[3] : mkdtemp(tmpl);
  char long_chat[STORE_ID_MAX];
  double t0 = bench_now_s();
  build(dir, long_chat);
  double built = bench_now_s() - t0;
  double *a = calloc((size_t)runs, sizeof *a), *b = calloc((size_t)runs, sizeof *b),
         *c = calloc((size_t)runs, sizeof *c);
  char *list[] = {argv[1], "chats", "list", "--db", (char *)dir, NULL};
  char *list_world[] = {argv[1], "chats", "list", "--world", "big", "--db", (char *)dir, "--json", NULL};
  char *replay[] = {argv[1], "replay", long_chat, "--db", (char *)dir, "--json", NULL};
  char *replay_plain[] = {argv[1], "replay", long_chat, "--db", (char *)dir, NULL};
  time_cmd(list); /* warm the page cache: "cold start" is the process, not the disk */
  for (int r = 0; r < runs; r++) a[r] = time_cmd(list) * 1000;
  for (int r = 0; r < runs; r++) b[r] = time_cmd(list_world) * 1000;
  for (int r = 0; r < runs; r++) c[r] = 100000 / time_cmd(replay) / 1000;
  printf("(database: 1,100,000 messages in 1,001 chats, built in %.1f s)\n", built);
  bench_row("process start to `chats list` done (1,001)", "ms", a, runs);
  bench_row("process start to `chats list --world --json`", "ms", b, runs);
  bench_row("`replay --json` of 100,000 messages", "k msg/s", c, runs);
  for (int r = 0; r < runs; r++) c[r] = 100000 / time_cmd(replay_plain) / 1000;
  bench_row("`replay` (plain) of 100,000 messages", "k msg/s", c, runs);
  if (argc <= 3) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) {
    }
  }
  free(a);
  free(b);
  free(c);
  return 0;
}
