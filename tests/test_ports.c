/* tests/support/ports.c across processes: test binaries run side by side, and two of them must never be
 * handed the same port, even when they try ports in the same order. */
#include "support/ports.h"
#include "support/suite.h"
#include "support/unit.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PICKS 20

/* A child that picks PICKS ports with seed 42, writes them to out, and holds them (stays alive) until
 * hold reaches end of file: the way a test binary holds ports while its servers run. */
static pid_t picker(int out, int hold, const int *fds, int n_fds) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  for (int i = 0; i < n_fds; i++) /* only its own ends: EOF on hold must come when the parent closes it */
    if (fds[i] != out && fds[i] != hold) close(fds[i]);
  ports_seed(42);
  int ports[PICKS];
  for (int i = 0; i < PICKS; i++) ports[i] = ports_free();
  if (write(out, ports, sizeof ports) != (ssize_t)sizeof ports) _exit(1);
  close(out);
  char c;
  while (read(hold, &c, 1) > 0) {
  }
  _exit(0);
}

static int read_all(int fd, int *ports) {
  size_t got = 0;
  for (ssize_t n; got < PICKS * sizeof *ports && (n = read(fd, (char *)ports + got, PICKS * sizeof *ports - got)) > 0;)
    got += (size_t)n;
  return got == PICKS * sizeof *ports ? 0 : -1;
}

static void two_processes_never_share(void) {
  int o1[2], h1[2], o2[2], h2[2];
  CHECK(!pipe(o1) && !pipe(h1) && !pipe(o2) && !pipe(h2));
  const int fds[] = {o1[0], o1[1], h1[0], h1[1], o2[0], o2[1], h2[0], h2[1]};
  pid_t a = picker(o1[1], h1[0], fds, 8);
  pid_t b = picker(o2[1], h2[0], fds, 8);
  close(o1[1]), close(h1[0]), close(o2[1]), close(h2[0]);
  int pa[PICKS], pb[PICKS];
  CHECK_INT(read_all(o1[0], pa), 0); /* both hold all theirs now */
  CHECK_INT(read_all(o2[0], pb), 0);
  int shared = 0;
  for (int i = 0; i < PICKS; i++) {
    CHECK(pa[i] > 0 && pb[i] > 0);
    for (int j = 0; j < PICKS; j++) shared += pa[i] == pb[j];
  }
  CHECK_INT(shared, 0);
  close(h1[1]), close(h2[1]), close(o1[0]), close(o2[0]);
  int st = -1;
  CHECK(waitpid(a, &st, 0) == a && WIFEXITED(st) && WEXITSTATUS(st) == 0);
  CHECK(waitpid(b, &st, 0) == b && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* A port a process held is free for others once it exits (the lock goes with it). */
static void freed_when_the_holder_exits(void) {
  int o[2];
  CHECK(!pipe(o));
  pid_t pid = fork();
  if (pid == 0) {
    close(o[0]);
    ports_seed(7);
    int port = ports_free();
    _exit(write(o[1], &port, sizeof port) == (ssize_t)sizeof port ? 0 : 1);
  }
  close(o[1]);
  int held = -1;
  CHECK(read(o[0], &held, sizeof held) == (ssize_t)sizeof held);
  close(o[0]);
  CHECK(waitpid(pid, NULL, 0) == pid);
  ports_seed(7);
  CHECK_INT(ports_free(), held);
}

SUITE_RUN((UNIT(two_processes_never_share), UNIT(freed_when_the_holder_exits)))
