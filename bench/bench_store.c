/* Storage benchmarks: chat turns (message + chat update + memories + agent states) stored per second
 * with a durable commit each, batched, and with LMDB's lighter sync modes; opening a database of
 * 1,000,000 messages and listing its chats; scanning a 100,000-message chat.
 * Usage: bench_store [SCALE] [--dir DIR]: SCALE multiplies every count (default 1). Latency columns
 * are per commit (store_write call). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "agents/msg.h"
#include "storage/store.h"
#include "support/unit.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(int rc, const ag_errmsg *em, const char *what) {
  fprintf(stderr, "bench_store: %s: %s (%s)\n", what, em ? em->text : "", ag_strerror(rc));
  exit(1);
}

/* A chat turn as the session manager saves it. text is a typical ~200-byte chat message. */
typedef struct turn_arg {
  const char *world;
  char chat[STORE_ID_MAX];
  uint64_t next_seq;  /* seq of the first message this transaction writes */
  int turns;          /* turns per transaction */
  int memories;       /* memory appends per turn */
} turn_arg;

static const char bench_text[] =
    "@bob I think the argument holds only if we assume the market is efficient, which the last three "
    "quarters suggest it is not. Can you walk me through the numbers again, with sources this time?";

static int turns_tx(store_txn *t, void *argp) {
  turn_arg *a = argp;
  static const char *const agents[] = {"alice", "bob", "carol", "dave"};
  int rc = AG_OK;
  uint64_t seq = a->next_seq;
  for (int i = 0; !rc && i < a->turns; i++, seq++) {
    store_message m = {.seq = seq, .ts_ms = (int64_t)seq, .kind = AG_KIND_AGENT, .sender = "alice",
                       .text = bench_text};
    store_chat c = {.id = a->chat, .world_id = a->world, .title = "Benchmark chat", .message_count = seq,
                    .created_at_ms = 1, .updated_at_ms = (int64_t)seq};
    store_agent_state st = {.turn_count = (int32_t)(seq % 5), .counter = seq};
    rc = store_message_put(t, a->chat, &m);
    if (!rc) rc = store_chat_put(t, &c);
    for (int k = 0; !rc && k < a->memories; k++) rc = store_memory_append(t, a->chat, agents[k % 4], seq);
    for (int k = 0; !rc && k < 2; k++) rc = store_agent_state_put(t, a->chat, agents[k], &st);
  }
  return rc;
}

static int setup_tx(store_txn *t, void *argp) {
  turn_arg *a = argp;
  store_world w = {.id = a->world, .name = a->world, .settings_json = "{\"turn_limit\":5}"};
  store_world old;
  int rc = store_world_get(t, a->world, &old);
  store_world_free(&old);
  if (rc == AG_ERR_NOT_FOUND) rc = store_world_put(t, &w);
  store_chat c = {.id = a->chat, .world_id = a->world, .title = "Benchmark chat", .created_at_ms = 1};
  if (!rc) rc = store_chat_put(t, &c);
  return rc;
}

static store *open_or_die(const char *dir, const store_options *opt) {
  store *s = NULL;
  ag_errmsg em = {{0}};
  int rc = store_open_ex(dir, opt, &s, &em);
  if (rc) die(rc, &em, "open");
  return s;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Writes n turns, `batch` per transaction, into a fresh database; prints one table row. */
static void bench_writes(const char *root, const char *label, const store_options *opt, int batch, int n) {
  char dir[4096];
  static int run;
  snprintf(dir, sizeof dir, "%s/w%d", root, run++);
  store *s = open_or_die(dir, opt);
  ag_errmsg em = {{0}};
  turn_arg a = {.world = "bench", .turns = batch, .memories = 2, .next_seq = 1};
  store_chat_id_new(a.chat);
  int rc = store_write(s, setup_tx, &a, &em);
  if (rc) die(rc, &em, "setup");
  int commits = n / batch;
  double *lat = malloc(sizeof(double) * (size_t)commits);
  double t0 = now_s();
  for (int i = 0; i < commits; i++) {
    double c0 = now_s();
    rc = store_write(s, turns_tx, &a, &em);
    if (rc) die(rc, &em, "write");
    lat[i] = now_s() - c0;
    a.next_seq += (uint64_t)batch;
  }
  double dt = now_s() - t0;
  qsort(lat, (size_t)commits, sizeof *lat, cmp_double);
  printf("| %-44s | %5d | %10.0f | %8.1f | %8.1f | %8.1f |\n", label, batch, (double)(commits * batch) / dt,
         dt / (commits * batch) * 1e6, lat[commits / 2] * 1e6, lat[commits * 99 / 100] * 1e6);
  fflush(stdout);
  free(lat);
  store_close(s);
  unit_rmrf(dir);
}

typedef struct list_arg {
  int n;
} list_arg;

static int count_chat(const store_chat *c, void *arg) {
  (void)c;
  ((list_arg *)arg)->n++;
  return 0;
}

static int list_tx(store_txn *t, void *arg) { return store_chat_list(t, "big", count_chat, arg); }

typedef struct scan_arg {
  const char *chat;
  uint64_t n, bytes;
} scan_arg;

static int scan_msg(const store_message *m, void *arg) {
  scan_arg *a = arg;
  a->n++;
  a->bytes += m->text_len;
  return 0;
}

static int scan_tx(store_txn *t, void *arg) {
  scan_arg *a = arg;
  return store_message_scan(t, a->chat, 1, scan_msg, a);
}

static double file_mib(const char *dir) {
  char path[4200];
  struct stat st;
  snprintf(path, sizeof path, "%s/data.mdb", dir);
  return stat(path, &st) == 0 ? (double)st.st_size / (1 << 20) : 0;
}

/* 1. Writes. A turn = 1 message (~200 B) + chat update + 2 memory appends + 2 agent states. */
static void bench_write_table(const char *root, double scale) {
  int nd = (int)(2000 * scale), nf = (int)(50000 * scale);
  if (nd < 100) nd = 100;
  if (nf < 1000) nf = 1000;
  printf("| %-44s | %5s | %10s | %8s | %8s | %8s |\n", "chat turns, one store_write each (or batched)", "batch",
         "turns/s", "us/turn", "p50 us/c", "p99 us/c");
  printf("|%s|%s|%s|%s|%s|%s|\n", "----------------------------------------------", "-------", "------------",
         "----------", "----------", "----------");
  store_options full = {0}, wmap = {.write_map = 1}, nometa = {.sync = STORE_SYNC_NOMETA},
                none = {.sync = STORE_SYNC_NONE}, none_wmap = {.sync = STORE_SYNC_NONE, .write_map = 1};
  bench_writes(root, "durable (fdatasync per commit), default", &full, 1, nd);
  bench_writes(root, "durable, MDB_WRITEMAP (msync per commit)", &wmap, 1, nd);
  bench_writes(root, "durable, batched", &full, 10, nd * 5);
  bench_writes(root, "durable, batched", &full, 100, nd * 20);
  bench_writes(root, "NOMETA: data synced, meta left to the OS", &nometa, 1, nd);
  bench_writes(root, "no sync (reference: loses D on power loss)", &none, 1, nf);
  bench_writes(root, "no sync, MDB_WRITEMAP", &none_wmap, 1, nf);
  bench_writes(root, "no sync, batched", &none, 100, nf * 4);

}

/* 3. Scanning the long chat. */
static void bench_scan(store *s) {
  ag_errmsg em = {{0}};
  scan_arg sa = {.chat = "long"};
  double t0 = now_s();
  int rc = store_read(s, scan_tx, &sa, &em);
  double scan_t = now_s() - t0;
  if (rc) die(rc, &em, "scan");
  printf("| %-44s | %12llu |\n", "long chat: messages scanned", (unsigned long long)sa.n);
  printf("| %-44s | %7.2f M/s  |\n", "  scan rate, messages", (double)sa.n / scan_t / 1e6);
  printf("| %-44s | %7.0f MB/s |\n", "  scan rate, text", (double)sa.bytes / scan_t / 1e6);
  printf("| %-44s | %8.2f ms  |\n", "  whole scan", scan_t * 1e3);
}

/* 2. A big database: 1,000 chats of 1,000 messages (built in batched transactions), reopened and
 * listed; then 3., its long chat scanned. */
static void bench_big(const char *root, double scale) {
  int chats = (int)(1000 * scale), per_chat = 1000, scan_n = (int)(100000 * scale);
  if (chats < 10) chats = 10;
  if (scan_n < 1000) scan_n = 1000;
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/big", root);
  ag_errmsg em = {{0}};
  store *s = open_or_die(dir, NULL);
  double t0 = now_s();
  for (int c = 0; c < chats; c++) {
    turn_arg a = {.world = "big", .turns = per_chat, .memories = 1, .next_seq = 1};
    snprintf(a.chat, sizeof a.chat, "chat%06d", c);
    int rc = store_write(s, setup_tx, &a, &em);
    if (!rc) rc = store_write(s, turns_tx, &a, &em);
    if (rc) die(rc, &em, "build");
  }
  turn_arg a = {.world = "big", .turns = 1000, .memories = 0, .next_seq = 1};
  snprintf(a.chat, sizeof a.chat, "long");
  int rc = store_write(s, setup_tx, &a, &em);
  for (; !rc && a.next_seq <= (uint64_t)scan_n; a.next_seq += 1000) rc = store_write(s, turns_tx, &a, &em);
  if (rc) die(rc, &em, "build");
  double build = now_s() - t0;
  store_close(s);
  long long total = (long long)chats * per_chat + scan_n;
  printf("\n| %-44s | %12s |\n", "database of many messages", "");
  printf("|----------------------------------------------|--------------|\n");
  printf("| %-44s | %12lld |\n", "messages (chats x 1000 + the long chat)", total);
  printf("| %-44s | %9.1f s  |\n", "build, durable, 1000 turns per transaction", build);
  printf("| %-44s | %8.0f MiB |\n", "data.mdb size", file_mib(dir));

  t0 = now_s();
  s = open_or_die(dir, NULL);
  double open_t = now_s() - t0;
  list_arg la = {0};
  t0 = now_s();
  rc = store_read(s, list_tx, &la, &em);
  double list_t = now_s() - t0;
  if (rc) die(rc, &em, "list");
  printf("| %-44s | %8.2f ms  |\n", "open (store_open, warm page cache)", open_t * 1e3);
  printf("| %-44s | %8.2f ms  |\n", "list the world's chats, newest first", list_t * 1e3);
  printf("| %-44s | %12d |\n", "  chats listed", la.n);

  bench_scan(s);
  store_close(s);
}

int main(int argc, char **argv) {
  double scale = 1;
  const char *base = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) base = argv[++i];
    else if (atof(argv[i]) > 0) scale = atof(argv[i]);
    else {
      fprintf(stderr, "usage: bench_store [SCALE] [--dir DIR]\n");
      return 2;
    }
  }
  char *root = NULL;
  if (base) {
    root = malloc(strlen(base) + 32);
    sprintf(root, "%s/bench-store-%d", base, (int)getpid());
  } else {
    root = unit_tmpdir();
  }
  struct statfs fs;
  const char *fstype = "other";
  if (statfs(base ? base : root, &fs) == 0)
    fstype = fs.f_type == 0xEF53 ? "ext4" : fs.f_type == 0x01021994 ? "tmpfs (fsync is free)"
             : fs.f_type == 0x58465342 ? "xfs" : fs.f_type == 0x9123683E ? "btrfs" : "other";
  printf("bench_store: scale %.2f, databases under %s (%s)\n\n", scale, root, fstype);

  bench_write_table(root, scale);
  bench_big(root, scale);
  unit_rmrf(root);
  free(root);
  return 0;
}
