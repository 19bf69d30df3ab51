/* End to end through the built binary: where output goes. A command whose stdout cannot be written
 * (/dev/full) fails with exit 1 and a message; `chats export -o PATH` writes through a temporary file
 * only for regular files and never replaces a symlink, a FIFO or a device. */
#include "support/proc.h"
#include "support/unit.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char counter_world[] =
  "{\"name\": \"Counter\", \"defaults\": {\"provider\": \"script\"},"
  " \"agents\": [{\"name\": \"a\", \"replies\": [\"one\", \"two\", \"three\"]}],"
  " \"script\": [{\"from\": \"human\", \"text\": \"@a count with me\"}]}";

/* A scratch directory with w.json and a database db/ holding one chat. */
typedef struct fixture {
  char *dir;
  char world[4096], db[4096], chat[64];
} fixture;

static void fixture_open(fixture *fx) {
  memset(fx, 0, sizeof *fx);
  fx->dir = unit_tmpdir();
  snprintf(fx->world, sizeof fx->world, "%s/w.json", fx->dir);
  snprintf(fx->db, sizeof fx->db, "%s/db", fx->dir);
  CHECK_INT(unit_write_file(fx->world, counter_world), 0);
  const char *args[] = {"run", fx->world, "--db", fx->db, "--json", NULL};
  proc_result r;
  CHECK_INT(proc_agora(args, NULL, NULL, &r), 0);
  CHECK_INT(r.status, 0);
  char *c = strstr(r.out ? r.out : "", "\"chat\":\"");
  if (c) snprintf(fx->chat, sizeof fx->chat, "%.*s", (int)strcspn(c + 8, "\""), c + 8);
  CHECK(fx->chat[0] != '\0');
  proc_result_free(&r);
}

static void fixture_close(fixture *fx) {
  unit_rmrf(fx->dir);
  free(fx->dir);
}

/* Runs $AGORA_BIN args with stdout opened on out_path and stderr into err (cap bytes); the exit status. */
static int run_to(const char *out_path, const char *const *args, char *err, size_t cap) {
  const char *bin = getenv("AGORA_BIN");
  int ep[2];
  if (pipe(ep)) return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(out_path, O_WRONLY);
    if (fd < 0) _exit(126);
    dup2(fd, 1);
    dup2(ep[1], 2);
    close(ep[0]);
    char *argv[16] = {(char *)(bin ? bin : "./agora")};
    for (int i = 0; args[i] && i < 14; i++) argv[i + 1] = (char *)args[i];
    execv(argv[0], argv);
    _exit(127);
  }
  close(ep[1]);
  size_t n = 0;
  ssize_t k;
  while (n + 1 < cap && (k = read(ep[0], err + n, cap - 1 - n)) > 0) n += (size_t)k;
  err[n] = '\0';
  close(ep[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void stdout_full_fails(void) {
  fixture fx;
  fixture_open(&fx);
  const char *cmds[][8] = {
    {"chats", "list", "--db", fx.db, NULL},
    {"chats", "show", fx.chat, "--db", fx.db, NULL},
    {"chats", "export", fx.chat, "--db", fx.db, NULL},
    {"worlds", "list", "--db", fx.db, NULL},
    {"replay", fx.chat, "--db", fx.db, NULL},
    {"run", fx.world, "--db", fx.db, NULL},
    {"run", fx.world, "--no-save", "--json", NULL},
    {"--help", NULL},
  };
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
    char err[4096];
    int status = run_to("/dev/full", cmds[i], err, sizeof err);
    if (status != 1 || !strstr(err, "agora: cannot write the output"))
      unit_fail_(__FILE__, __LINE__, "%s %s > /dev/full: exit %d, stderr: %s", cmds[i][0],
                 cmds[i][1] ? cmds[i][1] : "", status, err);
    /* The same command writing to /dev/null succeeds. */
    status = run_to("/dev/null", cmds[i], err, sizeof err);
    if (status != 0) unit_fail_(__FILE__, __LINE__, "%s > /dev/null: exit %d: %s", cmds[i][0], status, err);
  }
  fixture_close(&fx);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {
    UNIT(stdout_full_fails),
  };
  return unit_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
