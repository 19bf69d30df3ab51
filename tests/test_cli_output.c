/* End to end through the built binary: where output goes. A command whose stdout cannot be written
 * (/dev/full) fails with exit 1 and a message; `chats export -o PATH` writes through a temporary file
 * only for regular files and never replaces a symlink, a FIFO or a device. */
#include "support/fixture.h"
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

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
  fixture_open(&fx, 1);
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

static int export_to(const fixture *fx, const char *path, proc_result *r) {
  const char *args[] = {"chats", "export", fx->chat, "-o", path, "--db", fx->db, NULL};
  int rc = proc_agora(args, NULL, NULL, r);
  CHECK_INT(rc, 0);
  return rc ? -1 : r->status;
}

static int is_snapshot(const char *text) { return text && strstr(text, "\"@a count with me\"") != NULL; }

static void export_regular_and_symlink(void) {
  fixture fx;
  fixture_open(&fx, 1);
  char file[4200], link[4200], dir[4200];
  snprintf(file, sizeof file, "%s/out.json", fx.dir);
  snprintf(link, sizeof link, "%s/link.json", fx.dir);
  snprintf(dir, sizeof dir, "%s/adir", fx.dir);
  proc_result r;
  /* A regular file is replaced whole. */
  CHECK_INT(unit_write_file(file, "old"), 0);
  CHECK_INT(export_to(&fx, file, &r), 0);
  proc_result_free(&r);
  char *text = unit_read_file(file);
  CHECK(is_snapshot(text));
  free(text);
  /* A symbolic link is refused: neither replaced by a file nor followed. */
  CHECK_INT(unit_write_file(file, "target"), 0);
  CHECK_INT(symlink(file, link), 0);
  CHECK_INT(export_to(&fx, link, &r), 2);
  CHECK(strstr(r.err, "is a symbolic link") != NULL);
  proc_result_free(&r);
  struct stat st;
  CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
  text = unit_read_file(file);
  CHECK_STR(text, "target");
  free(text);
  CHECK_INT(mkdir(dir, 0700), 0);
  CHECK_INT(export_to(&fx, dir, &r), 2);
  CHECK(strstr(r.err, "is a directory") != NULL);
  proc_result_free(&r);
  fixture_close(&fx);
}

/* A FIFO is written in place: a reader on it gets the snapshot and it stays a FIFO. */
static void export_fifo(void) {
  fixture fx;
  fixture_open(&fx, 1);
  char fifo[4200], got[4200];
  snprintf(fifo, sizeof fifo, "%s/pipe", fx.dir);
  snprintf(got, sizeof got, "%s/got.json", fx.dir);
  CHECK_INT(mkfifo(fifo, 0600), 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(20); /* a writer that replaced the FIFO instead never comes */
    int in = open(fifo, O_RDONLY), out = open(got, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char buf[4096];
    ssize_t n;
    while (in >= 0 && (n = read(in, buf, sizeof buf)) > 0)
      if (write(out, buf, (size_t)n) != n) _exit(1);
    _exit(0);
  }
  proc_result r;
  CHECK_INT(export_to(&fx, fifo, &r), 0);
  proc_result_free(&r);
  CHECK(waitpid(pid, NULL, 0) == pid);
  struct stat st;
  CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
  char *text = unit_read_file(got);
  CHECK(is_snapshot(text));
  free(text);
  fixture_close(&fx);
}

/* A character device (a null device of our own when we may make one) is written, not replaced. */
static void export_device(void) {
  fixture fx;
  fixture_open(&fx, 1);
  char dev[4200];
  snprintf(dev, sizeof dev, "%s/null", fx.dir);
  if (mknod(dev, S_IFCHR | 0666, makedev(1, 3)) != 0) {
    /* Never aim at the system's /dev/null: a regression would replace it. */
    fprintf(stderr, "  export_device: skipped, cannot make a device node: %s\n", strerror(errno));
    fixture_close(&fx);
    return;
  }
  proc_result r;
  CHECK_INT(export_to(&fx, dev, &r), 0);
  proc_result_free(&r);
  struct stat st;
  CHECK(lstat(dev, &st) == 0 && S_ISCHR(st.st_mode));
  fixture_close(&fx);
}

SUITE_RUN((UNIT(stdout_full_fails), UNIT(export_regular_and_symlink), UNIT(export_fifo), UNIT(export_device)))
