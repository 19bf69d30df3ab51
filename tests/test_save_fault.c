/* A failed group commit must not poison the chat (issue 17, defect 2): the batch of a save that failed
 * (disk full, file too big) is kept and written by the next save, so every delivered message is stored
 * with contiguous seqs. In process with an injected failure (RLIMIT_FSIZE), and end to end on a small
 * tmpfs that a filler file fills and frees while `agora run` is writing. */
#include "support/disk.h"
#include "support/proc.h"
#include "support/suite.h"
#include "support/tsession.h"
#include "support/unit.h"
#include "support/wait.h"

#include "chat/session.h"
#include "storage/store.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* What a check of one chat's records found. */
typedef struct chat_scan {
  const char *id;
  uint64_t count;      /* the chat record's message_count */
  uint64_t stored;     /* messages stored */
  uint64_t contiguous; /* 1 while seqs run 1, 2, 3, ... */
  uint64_t mem_bad;    /* memory entries naming no stored message */
  uint64_t mem;        /* memory entries seen */
} chat_scan;

static int msg_cb(const store_message *m, void *arg) {
  chat_scan *s = arg;
  if (m->seq != ++s->stored) s->contiguous = 0;
  return 0;
}

static int mem_cb(uint64_t seq, void *arg) {
  chat_scan *s = arg;
  s->mem++;
  if (seq < 1 || seq > s->stored) s->mem_bad++;
  return 0;
}

typedef struct scan_txn_arg {
  chat_scan *s;
  const char *const *agents;
} scan_txn_arg;

static int scan_txn(store_txn *t, void *arg) {
  scan_txn_arg *a = arg;
  chat_scan *s = a->s;
  store_chat c;
  int rc = store_chat_get(t, s->id, &c);
  if (rc) return rc;
  s->count = c.message_count;
  store_chat_free(&c);
  s->contiguous = 1;
  if ((rc = store_message_scan(t, s->id, 1, msg_cb, s))) return rc;
  for (size_t i = 0; a->agents[i]; i++)
    if ((rc = store_memory_scan(t, s->id, a->agents[i], mem_cb, s))) return rc;
  return AG_OK;
}

static int scan_chat(store *st, const char *id, const char *const *agents, chat_scan *out) {
  memset(out, 0, sizeof *out);
  out->id = id;
  scan_txn_arg a = {out, agents};
  ag_errmsg em = {""};
  int rc = store_read(st, scan_txn, &a, &em);
  if (rc) fprintf(stderr, "  scan of chat %s: %s\n", id, em.text);
  return rc;
}

static const char *const AGENTS[] = {"ann", "bob", NULL};

static off_t file_size(const char *path) {
  struct stat sb;
  return stat(path, &sb) ? -1 : sb.st_size;
}

/* In process: data.mdb may not grow (RLIMIT_FSIZE), so the save of a long message fails; once it may
 * grow again the next save writes the failed batch with the new one. */
static void failed_save_is_retried_with_the_next(void) {
  tsession f;
  tsession_open(&f, "{\"name\": \"Full\", \"turn_limit\": 50, \"agents\": ["
                    " {\"name\": \"ann\", \"replies\": [\"a1\", \"a2\"]},"
                    " {\"name\": \"bob\", \"replies\": [\"@ann b1\"]}]}");
  CHECK_INT(chat_session_new(f.cs, NULL), AG_OK);
  char id[STORE_ID_MAX];
  snprintf(id, sizeof id, "%s", chat_session_current(f.cs));
  tsession_say(&f, "human", "@ann @bob hello");
  CHECK_INT(chat_session_failures(f.cs), 0);

  char path[4200];
  snprintf(path, sizeof path, "%s/data.mdb", f.dir);
  off_t size = file_size(path);
  CHECK(size > 0);
  struct rlimit old, lim;
  CHECK_INT(getrlimit(RLIMIT_FSIZE, &old), 0);
  lim = old;
  lim.rlim_cur = (rlim_t)size;
  void (*prev)(int) = signal(SIGXFSZ, SIG_IGN); /* the write fails with EFBIG instead of killing us */
  CHECK_INT(setrlimit(RLIMIT_FSIZE, &lim), 0);
  size_t big_len = 256 * 1024;
  char *big = malloc(big_len + 8);
  memcpy(big, "@ann ", 5);
  memset(big + 5, 'x', big_len);
  big[big_len + 5] = '\0';
  tsession_say(&f, "human", big); /* the message, ann's reply, bob's: one batch that cannot be stored */
  free(big);
  CHECK(strstr(f.log.text, "-- storage-error") != NULL);
  size_t unsaved = chat_session_failures(f.cs);
  CHECK(unsaved >= 2);
  CHECK_INT(setrlimit(RLIMIT_FSIZE, &old), 0);
  signal(SIGXFSZ, prev);

  tsession_say(&f, "human", "@bob still there?"); /* the next save writes both batches */
  CHECK_INT(chat_session_failures(f.cs), 0);
  chat_scan s;
  CHECK_INT(scan_chat(f.st, id, AGENTS, &s), AG_OK);
  uint64_t last = world_last_seq(f.w);
  CHECK(last >= 6);
  CHECK_INT(s.stored, last);
  CHECK_INT(s.count, last);
  CHECK_INT(s.contiguous, 1);
  CHECK_INT(s.mem_bad, 0);
  CHECK(s.mem > 0);
  tsession_close(&f);
}

/* A save that still fails when the session closes is given up on and counted, never left pending. */
static void last_failed_save_counts_as_failure(void) {
  tsession f;
  tsession_open(&f, "{\"name\": \"Full\", \"agents\": [{\"name\": \"ann\", \"replies\": [\"a1\"]}]}");
  CHECK_INT(chat_session_new(f.cs, NULL), AG_OK);
  tsession_say(&f, "human", "hello");
  char path[4200];
  snprintf(path, sizeof path, "%s/data.mdb", f.dir);
  struct rlimit old, lim;
  CHECK_INT(getrlimit(RLIMIT_FSIZE, &old), 0);
  lim = old;
  lim.rlim_cur = (rlim_t)file_size(path);
  void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
  CHECK_INT(setrlimit(RLIMIT_FSIZE, &lim), 0);
  char big[200000];
  memset(big, 'y', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  tsession_say(&f, "human", big);
  size_t unsaved = chat_session_failures(f.cs); /* the message and ann's reply */
  CHECK_INT(unsaved, 2);
  chat_session_detach(f.cs); /* the last try fails too: counted, the batch dropped */
  CHECK_INT(chat_session_failures(f.cs), unsaved);
  CHECK_INT(setrlimit(RLIMIT_FSIZE, &old), 0);
  signal(SIGXFSZ, prev);
  tsession_close(&f);
}

/* ---- end to end on a tmpfs ---- */

static const char world_text[] =
  "{\"name\": \"Disk Full\", \"turn_limit\": 1500, \"memory_window\": 6,"
  " \"defaults\": {\"provider\": \"script\"},"
  " \"agents\": [{\"name\": \"ann\", \"replies\": [\"@bob %s one\", \"@bob %s two\"]},"
  "              {\"name\": \"bob\", \"replies\": [\"@ann %s three\"]}],"
  " \"script\": [{\"from\": \"human\", \"text\": \"@ann serve\"},"
  "            {\"new_chat\": true},"
  "            {\"from\": \"human\", \"text\": \"@bob again\"}]}";

typedef struct chats_seen {
  char ids[8][STORE_ID_MAX];
  size_t n;
} chats_seen;

static int chat_list_cb(const store_chat *c, void *arg) {
  chats_seen *cs = arg;
  if (cs->n < 8) snprintf(cs->ids[cs->n++], STORE_ID_MAX, "%s", c->id);
  return 0;
}

static int list_txn(store_txn *t, void *arg) { return store_chat_list(t, NULL, chat_list_cb, arg); }

/* The run's output (at path) shows its first few hundred messages. */
static int output_grown(void *path) { return file_size(path) >= 64 * 1024; }

/* The run's output (at path) shows it met the full disk. */
static int storage_failed(void *path) {
  char *text = unit_read_file(path);
  int met = text && unit_count(text, "storage-error") > 0;
  free(text);
  return met;
}

static void disk_full_and_freed_during_run(void) {
  char *tmp = unit_tmpdir();
  char mnt[4096], world[4096], out[4096], db[4200], filler[4200];
  snprintf(mnt, sizeof mnt, "%s/mnt", tmp);
  snprintf(world, sizeof world, "%s/full.json", tmp);
  snprintf(out, sizeof out, "%s/out.ndjson", tmp);
  snprintf(db, sizeof db, "%s/db", mnt);
  snprintf(filler, sizeof filler, "%s/filler", mnt);
  if (disk_tmpfs(mnt, "32m")) {
    unit_rmrf(tmp);
    free(tmp);
    return;
  }
  /* Long replies make the database grow fast, so the full disk is met within the window. */
  char pad[401];
  memset(pad, 'p', 400);
  pad[400] = '\0';
  char text[sizeof world_text + 4 * sizeof pad];
  snprintf(text, sizeof text, world_text, pad, pad, pad);
  CHECK_INT(unit_write_file(world, text), 0);

  double t0 = now_s();
  const char *args[] = {"run", world, "--db", db, "--json", NULL};
  int nul = open("/dev/null", O_RDONLY);
  pid_t pid = proc_spawn(args, nul, out, NULL, NULL);
  close(nul);
  /* The disk fills once the run has stored its first few hundred messages (its output shows them) and
   * is freed once the run has met it (its output shows a storage error), well before the run ends (the
   * run must outlast the full disk: what is still unsaved when it ends is lost, and reported). */
  CHECK(wait_until(output_grown, out, 10000));
  size_t filled = disk_fill(filler);
  CHECK(wait_until(storage_failed, out, 10000));
  unlink(filler);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  double took = now_s() - t0;
  char *ndjson = unit_read_file(out);
  CHECK(ndjson != NULL);
  if (!ndjson) ndjson = strdup("");
  size_t printed = unit_count(ndjson, "\"type\":\"message\"");
  size_t errors = unit_count(ndjson, "storage-error");
  fprintf(stderr, "  run took %.2f s; %zu bytes of filler; %zu messages printed, %zu storage errors\n", took,
          filled, printed, errors);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  CHECK(filled > 0);
  CHECK(errors > 0); /* the disk really was full during the run */
  CHECK_INT(printed, 2 * (2 * 1500 + 2)); /* two rallies: the opener, the replies, the turn-limit notice */

  store *s = NULL;
  ag_errmsg em = {""};
  CHECK_INT(store_open(db, &s, &em), AG_OK);
  chats_seen chats = {.n = 0};
  if (s) CHECK_INT(store_read(s, list_txn, &chats, NULL), AG_OK);
  CHECK_INT(chats.n, 2);
  uint64_t stored = 0;
  for (size_t i = 0; s && i < chats.n; i++) {
    chat_scan sc;
    CHECK_INT(scan_chat(s, chats.ids[i], AGENTS, &sc), AG_OK);
    CHECK_INT(sc.contiguous, 1);
    CHECK_INT(sc.count, sc.stored);
    CHECK_INT(sc.mem_bad, 0);
    stored += sc.stored;
  }
  CHECK_INT(stored, printed); /* everything the run printed was stored */
  store_close(s);
  free(ndjson);
  CHECK_INT(umount2(mnt, MNT_DETACH), 0);
  unit_rmrf(tmp);
  free(tmp);
}

SUITE_RUN((UNIT(failed_save_is_retried_with_the_next), UNIT(last_failed_save_counts_as_failure),
  UNIT(disk_full_and_freed_during_run)))
