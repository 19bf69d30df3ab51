/* MCP server processes: spawn, reap from the loop, stop (see child.h). */
#include "mcp/child.h"

#include <errno.h>
#include <stdint.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct mcp_child {
  pid_t pid;
  mcp_child_exit_fn fn; /* NULL once released */
  void *ud;
  struct event *timer;  /* released: the next signal to send; lingering: the next look at the group */
  int stage;            /* released: 0 = SIGTERM next, 1 = SIGKILL next, 2 = done */
  long grace_ms;
  int lingering;        /* reaped, but its group (pgid = pid) still has members: SIGTERMed, watched */
  int64_t lingered_ms;  /* lingering: how long so far */
  mcp_child *next;
};

/* How often a lingering group is looked at, and how long it has after SIGTERM before SIGKILL. */
#define CHILD_GROUP_POLL_MS 20
#define CHILD_GROUP_GRACE_MS 1000

/* Process-wide: the children not reaped yet, and the SIGCHLD event while there are any. */
static mcp_child *g_children;
static size_t g_count;
static struct event *g_sigchld;

/* Drops the SIGCHLD event when no child needs it (after a failed first spawn). */
static void sigchld_drop_unused(void) {
  if (!g_children && g_sigchld) {
    event_free(g_sigchld);
    g_sigchld = NULL;
  }
}

static void child_unlink(mcp_child *c) {
  for (mcp_child **p = &g_children; *p; p = &(*p)->next)
    if (*p == c) {
      *p = c->next;
      if (!c->lingering) g_count--;
      break;
    }
  sigchld_drop_unused();
}

static void child_free(mcp_child *c) {
  if (c->timer) event_free(c->timer);
  free(c);
}

static void child_signal(mcp_child *c, int sig) {
  if (c->lingering) kill(-c->pid, sig); /* the leader is gone: only the group is left to signal */
  else if (kill(-c->pid, sig) < 0) kill(c->pid, sig); /* the whole group (npx runs node under it) */
}

static void arm_ms(mcp_child *c, long ms) {
  struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
  evtimer_add(c->timer, &tv);
}

/* The leader c (exited, not reaped yet) is reaped; what it started in its group gets SIGTERM first,
 * while the zombie still holds the pid, so the group id cannot name anyone else yet. npx-style servers
 * run the real server as a child that does not end with its parent. A group that outlives the leader
 * is kept (lingering) and watched until it is gone, SIGKILLed after CHILD_GROUP_GRACE_MS. Returns the
 * exit status. */
static int child_reap(mcp_child *c) {
  int status = 0;
  kill(-c->pid, SIGTERM);
  while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR) {}
  if (kill(-c->pid, 0) == 0) {
    c->lingering = 1;
    c->lingered_ms = 0;
    c->fn = NULL;
    g_count--;
    evtimer_del(c->timer);
    arm_ms(c, CHILD_GROUP_POLL_MS);
  }
  return status;
}

typedef enum child_look { CHILD_RUNNING, CHILD_EXITED, CHILD_GONE } child_look;

/* Whether the leader has exited, without reaping it (waitid's WNOWAIT keeps the zombie); GONE when
 * it was reaped elsewhere (its pid may name another process by now: it is never signalled). */
static child_look child_exited(const mcp_child *c) {
  siginfo_t info = {0};
  if (waitid(P_PID, (id_t)c->pid, &info, WEXITED | WNOHANG | WNOWAIT) < 0)
    return errno == EINTR ? CHILD_RUNNING : CHILD_GONE;
  return info.si_pid == c->pid ? CHILD_EXITED : CHILD_RUNNING;
}

/* Reaps whatever has exited. A callback may release or spawn children, so the walk restarts after one. */
static void on_sigchld(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what, (void)arg;
  for (int again = 1; again;) {
    again = 0;
    for (mcp_child *c = g_children; c; c = c->next) {
      child_look look = c->lingering ? CHILD_RUNNING : child_exited(c);
      if (look == CHILD_RUNNING) continue;
      mcp_child_exit_fn fn = c->fn;
      void *ud = c->ud;
      int status = look == CHILD_EXITED ? child_reap(c) : 0;
      if (!c->lingering) {
        child_unlink(c);
        child_free(c);
      }
      if (fn) fn(ud, status);
      again = 1;
      break;
    }
  }
}

/* A lingering group: forgotten once empty, SIGKILLed when its grace is over. */
static void on_lingering(mcp_child *c) {
  c->lingered_ms += CHILD_GROUP_POLL_MS;
  int alive = kill(-c->pid, 0) == 0;
  if (alive && c->lingered_ms < CHILD_GROUP_GRACE_MS) {
    arm_ms(c, CHILD_GROUP_POLL_MS);
    return;
  }
  if (alive) kill(-c->pid, SIGKILL);
  child_unlink(c);
  child_free(c);
}

static void on_timer(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  mcp_child *c = arg;
  if (c->lingering) {
    on_lingering(c);
    return;
  }
  child_signal(c, c->stage == 0 ? SIGTERM : SIGKILL);
  if (++c->stage == 1) arm_ms(c, c->grace_ms);
}

static void child_exec(const mcp_spawn *sp) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  signal(SIGPIPE, SIG_DFL);
  signal(SIGINT, SIG_DFL);
  setpgid(0, 0);
  if (dup2(sp->fd_in, 0) < 0 || dup2(sp->fd_out, 1) < 0 || dup2(sp->fd_err, 2) < 0) _exit(126);
  /* Nothing else of Agora's leaks into the server (an inherited chat lock would outlive Agora). */
  if (close_range(3, ~0u, 0) < 0)
    for (int fd = 3; fd < 1024; fd++) close(fd);
  if (sp->cwd && chdir(sp->cwd) < 0) _exit(126);
  execve(sp->path, sp->argv, sp->envp);
  _exit(127);
}

int mcp_child_spawn(struct event_base *base, const mcp_spawn *sp, mcp_child_exit_fn fn, void *ud,
                    mcp_child **out, ag_errmsg *em) {
  mcp_child *c = calloc(1, sizeof *c);
  if (!c) return ag_fail(em, AG_ERR_NOMEM, "out of memory");
  c->timer = evtimer_new(base, on_timer, c);
  if (!g_sigchld) {
    g_sigchld = evsignal_new(base, SIGCHLD, on_sigchld, NULL);
    if (g_sigchld && event_add(g_sigchld, NULL)) {
      event_free(g_sigchld);
      g_sigchld = NULL;
    }
  }
  if (!c->timer || !g_sigchld) {
    sigchld_drop_unused();
    child_free(c);
    return ag_fail(em, AG_ERR_NOMEM, "cannot set up the child's events");
  }
  pid_t pid = fork();
  if (pid == 0) child_exec(sp);
  if (pid < 0) {
    int e = errno;
    sigchld_drop_unused();
    child_free(c);
    return ag_fail(em, AG_ERR_IO, "cannot start %s: %s", sp->path, strerror(e));
  }
  setpgid(pid, pid); /* also here, so a signal to the group right away cannot miss */
  c->pid = pid;
  c->fn = fn;
  c->ud = ud;
  c->next = g_children;
  g_children = c;
  g_count++;
  *out = c;
  return AG_OK;
}

pid_t mcp_child_pid(const mcp_child *c) { return c->pid; }

void mcp_child_release(mcp_child *c, long grace_ms) {
  c->fn = NULL;
  c->ud = NULL;
  c->grace_ms = grace_ms;
  c->stage = 0;
  struct timeval tv = {grace_ms / 1000, (grace_ms % 1000) * 1000};
  evtimer_add(c->timer, &tv);
}

size_t mcp_child_count(void) { return g_count; }

/* Released (or lingering, whose fn is gone too): what a drain waits for and ends. A child whose owner
 * still holds it is another world's server on the same loop, and none of the drain's business. */
static int child_released(const mcp_child *c) { return c->fn == NULL; }

size_t mcp_child_released_count(void) {
  size_t n = 0;
  for (const mcp_child *c = g_children; c; c = c->next) n += child_released(c) && !c->lingering;
  return n;
}

static int any_released(void) {
  for (const mcp_child *c = g_children; c; c = c->next)
    if (child_released(c)) return 1;
  return 0;
}

static void on_drain_deadline(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what, (void)arg;
  for (mcp_child *c = g_children, *next; c; c = next) {
    next = c->next;
    if (!child_released(c)) continue;
    child_signal(c, SIGKILL);
    if (c->lingering) { /* no SIGCHLD will come for a group that is not ours: done with it */
      child_unlink(c);
      child_free(c);
    }
  }
}

void mcp_child_drain(struct event_base *base, long ms) {
  if (!any_released()) return;
  struct event *deadline = evtimer_new(base, on_drain_deadline, NULL);
  struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
  if (deadline) evtimer_add(deadline, &tv);
  for (mcp_child *c = g_children; c; c = c->next)
    if (child_released(c) && c->stage == 0) { /* do not wait for its grace period */
      c->stage = 1;
      child_signal(c, SIGTERM);
    }
  /* -1: the loop is running (a drain from one of its callbacks): the children's own timers end them. */
  while (any_released() && deadline && event_base_loop(base, EVLOOP_ONCE) >= 0) {}
  if (deadline) event_free(deadline);
}

int mcp_child_which(const char *command, char **out) {
  *out = NULL;
  if (!command[0]) return AG_ERR_NOT_FOUND;
  if (strchr(command, '/')) {
    if (access(command, X_OK)) return AG_ERR_NOT_FOUND;
    *out = strdup(command);
    return *out ? AG_OK : AG_ERR_NOMEM;
  }
  const char *path = getenv("PATH");
  if (!path) path = "/usr/local/bin:/usr/bin:/bin";
  size_t cn = strlen(command);
  for (const char *p = path;;) {
    const char *end = strchr(p, ':');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    char *full = malloc(n + cn + 3);
    if (!full) return AG_ERR_NOMEM;
    snprintf(full, n + cn + 3, "%.*s/%s", (int)n, n ? p : ".", command);
    if (!access(full, X_OK)) {
      *out = full;
      return AG_OK;
    }
    free(full);
    if (!end) return AG_ERR_NOT_FOUND;
    p = end + 1;
  }
}
