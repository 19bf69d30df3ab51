/* Test peers from npm as server processes (see npm_peer.h). */
#include "support/npm_peer.h"
#include "support/ports.h"
#include "support/wait.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void exec_peer(const char *bin, const char *const *args, const char *const *extra_env, const char *log) {
  const char *argv[64] = {bin};
  for (int i = 0; args && args[i] && i < 62; i++) argv[i + 1] = args[i];
  for (int i = 0; extra_env && extra_env[i]; i++) putenv((char *)extra_env[i]);
  int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd >= 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    close(fd);
  }
  execv(bin, (char *const *)argv);
  _exit(127);
}

typedef struct starting {
  npm_peer *p;
  int exited;
} starting;

static int listening(void *arg) {
  starting *s = arg;
  if (waitpid(s->p->pid, NULL, WNOHANG) == s->p->pid) s->exited = 1;
  return s->exited || ports_open(s->p->port);
}

int npm_peer_start(npm_peer *p, const char *name, const char *const *args, const char *const *extra_env, int port,
                   const char *log) {
  const char *peers = getenv("AGORA_PEERS");
  char bin[4096];
  *p = (npm_peer){.pid = 0, .port = port};
  snprintf(p->log, sizeof p->log, "%s", log);
  snprintf(bin, sizeof bin, "%s/node_modules/.bin/%s", peers ? peers : "", name);
  if (!peers || access(bin, X_OK) != 0 || port <= 0) {
    fprintf(stderr, "npm_peer_start: %s is missing or no port (the peers fixture installs it)\n", bin);
    return -1;
  }
  p->pid = fork();
  if (p->pid < 0) return -1;
  if (p->pid == 0) exec_peer(bin, args, extra_env, log);
  starting s = {p, 0};
  if (wait_until(listening, &s, 30000) && !s.exited) return 0;
  fprintf(stderr, "npm_peer_start: %s did not listen on port %d (log %s)\n", name, port, log);
  if (s.exited) p->pid = 0;
  npm_peer_stop(p);
  return -1;
}

static int gone(void *arg) {
  npm_peer *p = arg;
  return waitpid(p->pid, NULL, WNOHANG) == p->pid;
}

void npm_peer_stop(npm_peer *p) {
  if (p->pid <= 0) return;
  kill(p->pid, SIGTERM);
  if (!wait_until(gone, p, 2000)) {
    kill(p->pid, SIGKILL);
    waitpid(p->pid, NULL, 0);
  }
  p->pid = 0;
}
