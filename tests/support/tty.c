/* Driving `agora` on a pseudo-terminal (see tty.h). */
#include "support/tty.h"
#include "support/wait.h"
#include "support/unit.h"

#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


extern char **environ;

long long tty_now_ms(void) { return now_ms(); }

/* The child's environment: ours without the variables that would change what it shows, plus TERM, a
 * private HOME (no ~/.editrc of the user), and extra ("NAME=value", NULL-terminated). */
static char **child_env(const char *home_dir, const char *const *extra) {
  size_t n = 0, k = 0;
  while (environ[n]) n++;
  char **env = calloc(n + 16, sizeof *env);
  static const char *const drop[] = {"TERM=", "HOME=", "LANG=", "LC_", "NO_COLOR=", "AGORA_HOME=", NULL};
  for (size_t i = 0; i < n; i++) {
    int skip = 0;
    for (size_t d = 0; drop[d]; d++) skip |= strncmp(environ[i], drop[d], strlen(drop[d])) == 0;
    if (!skip) env[k++] = environ[i];
  }
  static char home[4200];
  snprintf(home, sizeof home, "HOME=%s", home_dir);
  env[k++] = "TERM=xterm";
  env[k++] = home;
  for (size_t i = 0; extra && extra[i] && k < n + 15; i++) env[k++] = (char *)extra[i];
  return env;
}

int tty_start(tty *t, const char *home, const char *const *args, const char *const *extra_env) {
  memset(t, 0, sizeof *t);
  const char *bin = getenv("AGORA_BIN");
  if (!bin) bin = "./agora";
  size_t n = 0;
  while (args[n]) n++;
  char **argv = calloc(n + 2, sizeof *argv);
  argv[0] = (char *)bin;
  for (size_t i = 0; i < n; i++) argv[i + 1] = (char *)args[i];
  char **env = child_env(home, extra_env);
  struct winsize ws = {24, 100, 0, 0};
  t->pid = forkpty(&t->fd, NULL, NULL, &ws);
  if (t->pid == 0) {
    execve(bin, argv, env);
    _exit(127);
  }
  free(argv);
  free(env);
  t->cap = 65536;
  t->raw = calloc(1, t->cap);
  t->text = calloc(1, t->cap);
  return t->pid > 0 ? 0 : -1;
}

/* Re-derives text from raw: CSI and OSC sequences, other escapes, '\r' and bells removed. */
static void tty_strip(tty *t) {
  size_t o = 0;
  for (size_t i = 0; i < t->len; i++) {
    unsigned char ch = (unsigned char)t->raw[i];
    if (ch == 0x1b && i + 1 < t->len && t->raw[i + 1] == '[') {
      for (i += 2; i < t->len && !((unsigned char)t->raw[i] >= 0x40 && (unsigned char)t->raw[i] <= 0x7e); i++) {
      }
    } else if (ch == 0x1b && i + 1 < t->len && t->raw[i + 1] == ']') {
      for (i += 2; i < t->len && t->raw[i] != 0x07; i++) {
      }
    } else if (ch == 0x1b) {
      i++;
    } else if (ch != '\r' && ch != 0x07 && ch != '\b') {
      t->text[o++] = (char)ch;
    }
  }
  t->text[o] = '\0';
}

/* Reads what the console wrote for up to ms; returns 0 once the pty closed (the child is gone). */
int tty_pump(tty *t, int ms) {
  if (t->closed) {
    usleep(10000);
    return 0;
  }
  struct pollfd p = {t->fd, POLLIN, 0};
  int r = poll(&p, 1, ms < 0 ? 0 : ms);
  if (r <= 0) return 1;
  if (t->len + 4096 + 1 > t->cap) {
    t->cap *= 2;
    t->raw = realloc(t->raw, t->cap);
    t->text = realloc(t->text, t->cap);
  }
  ssize_t n = read(t->fd, t->raw + t->len, t->cap - t->len - 1);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return 1;
  if (n <= 0) {
    t->closed = 1;
    return 0;
  }
  t->len += (size_t)n;
  tty_strip(t);
  return 1;
}

/* Waits until needle shows after what earlier expectations matched; 1 when it did. */
int tty_send_expect(tty *t, const char *s, const char *needle) {
  tty_send(t, s);
  return tty_expect(t, needle);
}

int tty_expect(tty *t, const char *needle) { return tty_expect_count(t, needle, 1); }

int tty_expect_count(tty *t, const char *needle, size_t n) {
  long long end = tty_now_ms() + wait_budget_ms(WAIT_MS);
  size_t len = strlen(needle), found = 0;
  for (;;) {
    const char *after = t->text + t->seen, *hit;
    for (found = 0; found < n && (hit = strstr(after, needle)); found++) after = hit + len;
    if (found == n) {
      t->seen = (size_t)(after - t->text);
      return 1;
    }
    long long left = end - tty_now_ms();
    if (left <= 0 || !tty_pump(t, (int)(left > 100 ? 100 : left))) break;
  }
  if (n == 1) fprintf(stderr, "  expected \"%s\" after:\n----\n%s\n----\n", needle, t->text + t->seen);
  else fprintf(stderr, "  expected \"%s\" %zu times (saw %zu) after:\n----\n%s\n----\n", needle, n, found,
               t->text + t->seen);
  return 0;
}

void tty_send(tty *t, const char *s) {
  if (write(t->fd, s, strlen(s)) < 0) unit_fail_(__FILE__, __LINE__, "write to the pty failed");
}

/* Reads for ms whatever comes (to see that something does not). */
void tty_idle(tty *t, int ms) {
  long long end = tty_now_ms() + ms;
  while (tty_now_ms() < end && tty_pump(t, 50)) {
  }
}

/* The child's exit status once it ends within ms, reading the pty meanwhile when pump (a child blocked
 * on a full pty would never end); past ms it is killed: -1. With the pty closed there is no descriptor
 * to wait on, so its end is polled. */
static int tty_reap(tty *t, int ms, int pump) {
  long long end = tty_now_ms() + ms;
  int st = 0;
  for (;;) {
    if (pump) tty_pump(t, 20);
    pid_t r = waitpid(t->pid, &st, WNOHANG);
    if (r == t->pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (tty_now_ms() > end) {
      kill(t->pid, SIGKILL);
      waitpid(t->pid, &st, 0);
      return -1;
    }
    if (!pump) wait_nap_ms(10);
  }
}

/* The child's exit status once it ends (killed after WAIT_MS: -1). */
int tty_exit(tty *t) { return tty_reap(t, (int)wait_budget_ms(WAIT_MS), 1); }

void tty_close(tty *t) {
  if (t->fd >= 0) close(t->fd);
  free(t->raw);
  free(t->text);
}

/* The id after "<event>: id=" at or after the last expectation's match. */
int tty_event_id(tty *t, const char *event, char id[64]) {
  char key[96];
  snprintf(key, sizeof key, "%s: id=", event);
  if (!tty_expect(t, key)) return -1;
  for (long long end = now_ms() + wait_budget_ms(5000); !strchr(t->text + t->seen, '\n') && now_ms() < end;)
    tty_pump(t, 100);
  const char *p = t->text + t->seen;
  size_t n = strspn(p, "0123456789abcdefghijklmnopqrstuvwxyz");
  if (!n || n > 63) return -1;
  memcpy(id, p, n);
  id[n] = '\0';
  return 0;
}

int tty_exit_within(tty *t, int ms) { return tty_reap(t, ms, 0); }

void tty_hang_up(tty *t) {
  if (t->fd >= 0) close(t->fd);
  t->fd = -1;
  t->closed = 1;
}

int tty_skip_without_pty(void) {
  int m, s;
  if (!openpty(&m, &s, NULL, NULL, NULL)) {
    close(m);
    close(s);
    return 0;
  }
  printf("skipped: no pseudo-terminals here (openpty failed)\n0 passed, 0 failed\n");
  return 1;
}
