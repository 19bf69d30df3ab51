/* End to end: several agora processes on one database (issue 15 item 1, docs/decisions.md "One process
 * per chat"). Four `run`s and a console at once: every message of every process is stored, seqs are
 * contiguous per chat, all exit 0. A held chat is refused to --chat and `chats delete`, skipped by
 * `chats new`; a SIGKILLed holder leaves it free. */
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
#include <time.h>
#include <unistd.h>

static char *tmp;

#define STEPS 12
#define RUNS 4

static void world_file(char path[4096]) {
  snprintf(path, 4096, "%s/world.json", tmp);
  char text[8192];
  int n = snprintf(text, sizeof text,
                   "{\"name\": \"Busy\", \"defaults\": {\"provider\": \"script\"},"
                   " \"agents\": [{\"name\": \"alice\", \"replies\": [\"one\", \"two\", \"three\"]}],"
                   " \"script\": [");
  for (int i = 0; i < STEPS; i++)
    n += snprintf(text + n, sizeof text - (size_t)n, "%s{\"from\": \"human\", \"text\": \"@alice step %d\"}",
                  i ? ", " : "", i);
  snprintf(text + n, sizeof text - (size_t)n, "]}\n");
  if (unit_write_file(path, text)) unit_fail_(__FILE__, __LINE__, "cannot write %s", path);
}

/* agora console WORLD --db DB with stdin a pipe the test writes; stdout/stderr to files in tmp. */
typedef struct con {
  pid_t pid;
  FILE *in;
} con;

static void con_start(con *c, const char *world, const char *db, const char *tag) {
  int p[2];
  c->pid = -1;
  c->in = NULL;
  if (pipe2(p, O_CLOEXEC)) return; /* the console keeps only its stdin: EOF comes when we close ours */
  char out[4096], err[4096];
  snprintf(out, sizeof out, "%s/%s.out", tmp, tag);
  snprintf(err, sizeof err, "%s/%s.err", tmp, tag);
  const char *args[] = {"console", world, "--db", db, NULL};
  c->pid = proc_spawn(args, p[0], out, err, NULL);
  close(p[0]);
  c->in = fdopen(p[1], "w");
}

static void con_say(con *c, const char *line) {
  fputs(line, c->in);
  fflush(c->in);
}

static int con_end(con *c) {
  fclose(c->in);
  int st;
  if (waitpid(c->pid, &st, 0) != c->pid) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

typedef struct msg_goal {
  const char *db;
  int n, total;
} msg_goal;

/* Whether the database holds at least g->n messages in all (the total in g->total). */
static int messages_reached(void *arg) {
  msg_goal *g = arg;
  cJSON *l = proc_chats_list(g->db);
  const cJSON *c;
  g->total = 0;
  cJSON_ArrayForEach(c, l) g->total += (int)cJSON_GetNumberValue(cJSON_GetObjectItem(c, "message_count"));
  cJSON_Delete(l);
  return g->total >= g->n;
}

/* Waits (20 s, stretched on slow builds) until the database holds at least n messages in all; returns
 * that total. */
static int wait_messages(const char *db, int n) {
  msg_goal g = {.db = db, .n = n};
  wait_until_every(messages_reached, &g, 20000, 50); /* each poll runs `agora chats list` */
  return g.total;
}

/* Checks that chat id's stored messages have seqs 1..count; returns how many it holds. */
static int check_chat(const char *db, const char *id, int count) {
  const char *args[] = {"chats", "show", id, "--db", db, "--json", NULL};
  proc_result r;
  if (proc_agora(args, NULL, NULL, &r)) return -1;
  int n = 0;
  for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
    cJSON *j = cJSON_Parse(line);
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(j, "type"));
    if (type && !strcmp(type, "message")) {
      n++;
      CHECK_INT((int)cJSON_GetNumberValue(cJSON_GetObjectItem(j, "seq")), n);
    }
    cJSON_Delete(j);
  }
  CHECK_INT(r.status, 0);
  CHECK_INT(n, count);
  proc_result_free(&r);
  return n;
}

/* The world file, database tmp/NAME and a console on it that has said `line` and saved it: 0 when
 * all of that worked. */
static int console_up(const char *name, const char *line, char world[4096], char db[4096], con *c) {
  world_file(world);
  snprintf(db, 4096, "%s/%s", tmp, name);
  con_start(c, world, db, name);
  CHECK(c->pid > 0);
  if (c->pid <= 0) return -1;
  con_say(c, line);
  CHECK_INT(wait_messages(db, 2), 2); /* the console's chat exists and is saved */
  return 0;
}

/* Four runs and a console on one database at once. Before the fix the runs reused the console's chat
 * (and one another's): "already has message N" and "message(s) could not be saved". */
static void test_concurrent_writers(void) {
  char world[4096], db[4096];
  con c;
  if (console_up("con1", "@alice hello from the console\n", world, db, &c)) return;
  pid_t kids[RUNS];
  for (int i = 0; i < RUNS; i++) {
    kids[i] = fork();
    if (kids[i] == 0) {
      const char *args[] = {"run", world, "--db", db, NULL};
      proc_result r;
      if (proc_agora(args, NULL, NULL, &r)) _exit(99);
      if (r.status) fprintf(stderr, "run %d: status %d: %s\n", i, r.status, r.err);
      _exit(r.status);
    }
  }
  for (int i = 0; i < 5; i++) {
    char line[64];
    snprintf(line, sizeof line, "@alice console line %d\n", i);
    con_say(&c, line);
  }
  for (int i = 0; i < RUNS; i++) {
    int st = -1;
    CHECK(waitpid(kids[i], &st, 0) == kids[i]);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  CHECK_INT(con_end(&c), 0);
  char errpath[4096];
  snprintf(errpath, sizeof errpath, "%s/con1.err", tmp);
  char *err = unit_read_file(errpath);
  CHECK(err && !strstr(err, "storage-error") && !strstr(err, "could not be saved"));
  free(err);
  /* Every message stored: 2 per console line, 2 per script step of each run; seqs 1..n per chat. */
  cJSON *l = proc_chats_list(db);
  int total = 0;
  const cJSON *ch;
  CHECK_INT(cJSON_GetArraySize(l), RUNS + 1);
  cJSON_ArrayForEach(ch, l) {
    total += check_chat(db, cJSON_GetStringValue(cJSON_GetObjectItem(ch, "id")),
                        (int)cJSON_GetNumberValue(cJSON_GetObjectItem(ch, "message_count")));
  }
  CHECK_INT(total, 2 * 6 + RUNS * 2 * STEPS);
  cJSON_Delete(l);
}

/* The chat of a console is refused to others while it lives; once the console is SIGKILLed, a run
 * continues it. */
static void test_held_chat(void) {
  char world[4096], db[4096];
  con c;
  if (console_up("con2", "@alice hi\n", world, db, &c)) return;
  cJSON *l = proc_chats_list(db);
  char id[64];
  snprintf(id, sizeof id, "%s", cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(l, 0), "id")));
  cJSON_Delete(l);
  char pid[32];
  snprintf(pid, sizeof pid, "(pid %ld)", (long)c.pid);

  proc_result r;
  const char *cont[] = {"run", world, "--db", db, "--chat", id, NULL};
  CHECK_INT(proc_agora(cont, NULL, NULL, &r), 0);
  CHECK_INT(r.status, 1);
  CHECK(strstr(r.err, "is in use by another agora process") && strstr(r.err, pid));
  proc_result_free(&r);

  const char *del[] = {"chats", "delete", id, "--db", db, NULL};
  CHECK_INT(proc_agora(del, NULL, NULL, &r), 0);
  CHECK_INT(r.status, 1);
  CHECK(strstr(r.err, "cannot delete chat") && strstr(r.err, pid));
  proc_result_free(&r);

  /* A second console starts a chat of its own, and cannot /load the held one. */
  const char *con2[] = {"console", world, "--db", db, NULL};
  char load[96];
  snprintf(load, sizeof load, "/load %s\n", id);
  PROC_OK(con2, load, NULL, &r);
  CHECK(strstr(r.out, "-- new-chat-created: id=") != NULL);
  CHECK(strstr(r.err, "error: /load: chat '") && strstr(r.err, "is in use by another agora process") &&
        strstr(r.err, pid));
  proc_result_free(&r);

  const char *nw[] = {"chats", "new", "--db", db, NULL};
  PROC_OK(nw, NULL, NULL, &r);
  CHECK(strncmp(r.out, id, strlen(id)) != 0); /* not the held chat */
  proc_result_free(&r);

  const char *wdel[] = {"worlds", "delete", "Busy", "--yes", "--db", db, NULL};
  CHECK_INT(proc_agora(wdel, NULL, NULL, &r), 0);
  CHECK_INT(r.status, 1);
  CHECK(strstr(r.err, "is in use by another agora process") && strstr(r.err, pid));
  proc_result_free(&r);

  kill(c.pid, SIGKILL);
  CHECK_INT(con_end(&c), 128 + SIGKILL);
  PROC_OK(cont, NULL, NULL, &r);
  proc_result_free(&r);
  check_chat(db, id, 2 + 2 * STEPS);
  PROC_OK(del, NULL, NULL, &r);
  proc_result_free(&r);
  PROC_OK(wdel, NULL, NULL, &r);
  /* The 2nd console's chat and the one `chats new` made: the held chat stayed the world's current one
   * (issue 23 item 8), so neither was current and `chats new` had none to reuse. */
  CHECK(strstr(r.out, "deleted world busy and 2 chats\n") != NULL);
  proc_result_free(&r);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {
    {"concurrent_writers", test_concurrent_writers},
    {"held_chat", test_held_chat},
  };
  return suite_main(argc, argv, &(suite){SUITE_TESTS(tests), .tmp = &tmp, .no_sigpipe = 1});
}
