/* MCP server processes: spawn, watch from the owner's loop, hand over to the reaper (see child.h). */
#include "mcp/child.h"

#include <errno.h>
#include <event2/event.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mcp/reaper.h"

struct mcp_child {
  pid_t pid;
  int pidfd;            /* readable once the child exited */
  mcp_child_exit_fn fn;
  void *ud;
  struct event *watch;  /* the pidfd, on the owner's loop */
};

/* Children spawned and still held by their owner, on whichever loop (threads of their own). */
static atomic_size_t g_held;

static void child_free(mcp_child *c) {
  if (c->watch) event_free(c->watch);
  if (c->pidfd >= 0) close(c->pidfd);
  free(c);
}

/* The pidfd is readable: the child exited. Reaped here, on the owner's loop; a group that outlives it
 * goes to the reaper; the owner hears of it last (it may free its transport in the callback). */
static void on_exit_fd(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  mcp_child *c = arg;
  int status = 0, lingers = 0;
  if (mcp_reaper_collect(c->pid, &status, &lingers) == MCP_REAPER_RUNNING) return;
  mcp_child_exit_fn fn = c->fn;
  void *ud = c->ud;
  pid_t pid = c->pid;
  child_free(c);
  atomic_fetch_sub(&g_held, 1);
  if (lingers) mcp_reaper_take(pid, -1, 0);
  if (fn) fn(ud, status);
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
  int rc = AG_OK;
  mcp_child *c = calloc(1, sizeof *c);
  if (!c) return ag_fail(em, AG_ERR_NOMEM, "out of memory");
  c->pidfd = -1;
  pid_t pid = fork();
  if (pid == 0) child_exec(sp);
  if (pid < 0) {
    rc = ag_fail(em, AG_ERR_IO, "cannot start %s: %s", sp->path, strerror(errno));
    goto fail;
  }
  setpgid(pid, pid); /* also here, so a signal to the group right away cannot miss */
  c->pid = pid;
  c->pidfd = pidfd_open(pid, 0); /* the child is not reaped yet: pid names it still */
  if (c->pidfd < 0 || !(c->watch = event_new(base, c->pidfd, EV_READ | EV_PERSIST, on_exit_fd, c)) ||
      event_add(c->watch, NULL)) {
    rc = ag_fail(em, AG_ERR_IO, "cannot watch %s (pid %d): %s", sp->path, (int)pid,
                 c->pidfd < 0 ? strerror(errno) : "cannot add its event");
    if (c->pidfd >= 0) mcp_reaper_take(pid, c->pidfd, 0); /* ended and reaped at once */
    else {
      kill(-pid, SIGKILL); /* no pidfd to hand over: ended and reaped here */
      while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    }
    c->pidfd = -1;
    goto fail;
  }
  c->fn = fn;
  c->ud = ud;
  atomic_fetch_add(&g_held, 1);
  *out = c;
  return AG_OK;
fail:
  child_free(c);
  return rc;
}

pid_t mcp_child_pid(const mcp_child *c) { return c->pid; }

void mcp_child_release(mcp_child *c, long grace_ms) {
  int pidfd = c->pidfd;
  /* Off the loop first: once the reaper has the pidfd it may close it at once, and removing its event
   * afterwards raced that close (ThreadSanitizer, test_library_close), or reached a descriptor reused. */
  if (c->watch) event_free(c->watch);
  c->watch = NULL;
  c->pidfd = -1; /* the reaper's now */
  mcp_reaper_take(c->pid, pidfd, grace_ms);
  child_free(c);
  atomic_fetch_sub(&g_held, 1);
}

size_t mcp_child_count(void) { return atomic_load(&g_held) + mcp_reaper_count(); }

size_t mcp_child_released_count(void) { return mcp_reaper_count(); }

int mcp_child_wait_released(long ms) { return mcp_reaper_wait(ms); }

void mcp_child_drain(long ms) { mcp_reaper_drain(ms); }

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
