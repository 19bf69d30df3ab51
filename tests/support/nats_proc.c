/* Test processes: nats-server nodes and background agora commands (see nats_proc.h). */
#include "support/nats_proc.h"
#include "support/ports.h"
#include "support/proc.h"
#include "support/wait.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int nats_available(void) { return system("command -v nats-server >/dev/null 2>&1") == 0; }

int nats_node_start(nats_node *nd) {
  nd->pid = fork();
  if (nd->pid == 0) {
    int fd = open(nd->log, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd >= 0) dup2(fd, 1), dup2(fd, 2);
    execlp("nats-server", "nats-server", "-c", nd->conf, (char *)NULL);
    _exit(127);
  }
  for (long long end = now_ms() + wait_budget_ms(5000); nd->pid > 0 && now_ms() < end;) {
    if (ports_open(nd->port)) return 0;
    wait_nap_ms(25);
  }
  return -1;
}

void nats_node_stop(nats_node *nd, int sig) {
  if (nd->pid <= 0) return;
  kill(nd->pid, sig);
  waitpid(nd->pid, NULL, 0);
  nd->pid = 0;
}

static int write_conf(const char *dir, int n, int i, const char *extra, nats_node *nodes) {
  char text[8192];
  int k = snprintf(text, sizeof text,
                   "server_name: n%d\nlisten: 127.0.0.1:%d\njetstream { store_dir: \"%s/js%d\" }\n%s\n", i,
                   nodes[i].port, dir, i, extra ? extra : "");
  if (n > 1) {
    k += snprintf(text + k, sizeof text - (size_t)k, "cluster { name: agora\n listen: 127.0.0.1:%d\n routes: [",
                  nodes[i].cport);
    for (int j = 0; j < n; j++)
      if (j != i) k += snprintf(text + k, sizeof text - (size_t)k, "\n  nats-route://127.0.0.1:%d", nodes[j].cport);
    snprintf(text + k, sizeof text - (size_t)k, " ]\n}\n");
  }
  snprintf(nodes[i].conf, sizeof nodes[i].conf, "%s/n%d.conf", dir, i);
  snprintf(nodes[i].log, sizeof nodes[i].log, "%s/n%d.log", dir, i);
  FILE *f = fopen(nodes[i].conf, "w");
  if (!f) return -1;
  fputs(text, f);
  return fclose(f) ? -1 : 0;
}

int nats_start(const char *dir, int n, const char *extra, nats_node *nodes) {
  for (int i = 0; i < n; i++) {
    memset(&nodes[i], 0, sizeof nodes[i]);
    nodes[i].port = ports_free();
    nodes[i].cport = ports_free();
  }
  for (int i = 0; i < n; i++)
    if (write_conf(dir, n, i, extra, nodes) || nats_node_start(&nodes[i])) return -1;
  return 0;
}

const char *nats_url(const nats_node *nodes, int from, int n) {
  static char buf[1024];
  size_t k = 0;
  buf[0] = '\0';
  for (int i = from; i < from + n; i++)
    k += (size_t)snprintf(buf + k, sizeof buf - k, "%snats://127.0.0.1:%d", i > from ? "," : "", nodes[i].port);
  return buf;
}

pid_t agora_spawn(const char *const *args, const char *out_path, const char *err_path, const char *const *extra_env) {
  return proc_spawn(args, -1, out_path, err_path, extra_env);
}

static int status_of(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st); }

int agora_stop(pid_t pid, int sig) {
  int st = 0;
  if (pid <= 0) return -1;
  kill(pid, sig);
  if (waitpid(pid, &st, 0) != pid) return -1;
  return status_of(st);
}

int agora_wait(pid_t pid, long ms) {
  int st = 0;
  for (long long end = now_ms() + wait_budget_ms(ms);; wait_nap_ms(20)) {
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) return status_of(st);
    if (r < 0 || now_ms() >= end) return -1;
  }
}

pid_t agora_spawn_piped(const char *const *args, const char *out_path, const char *err_path,
                        const char *const *extra_env, int *in_fd) {
  int p[2];
  if (pipe2(p, O_CLOEXEC)) return -1; /* the child keeps only its stdin (dup2 clears close-on-exec) */
  pid_t pid = proc_spawn(args, p[0], out_path, err_path, extra_env);
  close(p[0]);
  if (pid < 0) close(p[1]);
  else *in_fd = p[1];
  return pid;
}

int file_wait_for(const char *path, const char *needle, long ms) {
  for (long long end = now_ms() + wait_budget_ms(ms);; wait_nap_ms(50)) {
    FILE *f = fopen(path, "r");
    int found = 0;
    if (f) {
      char *text = NULL;
      size_t cap = 0;
      ssize_t n = getdelim(&text, &cap, '\0', f);
      found = n > 0 && strstr(text, needle) != NULL;
      free(text);
      fclose(f);
    }
    if (found) return 1;
    if (now_ms() >= end) return 0;
  }
}
