/* The process-wide reaper of released MCP server processes: one thread, pidfds and a wake pipe (see
 * reaper.h). Only the thread frees a record, so it keeps pointers to them across its poll. */
#include "mcp/reaper.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How often a lingering group is looked at. */
#define REAPER_GROUP_POLL_MS 20
#define REAPER_NEVER INT64_MAX

typedef struct reaped {
  pid_t pid;
  int pidfd;        /* -1: the leader is reaped, its group lingers */
  int stage;        /* leader: 0 = SIGTERM next, 1 = SIGKILL next, 2 = nothing left to send */
  long grace_ms;
  int64_t next_ms;  /* leader: the next signal; lingering: the next look at the group */
  int64_t until_ms; /* lingering: SIGKILL then */
  struct reaped *next;
} reaped;

/* Process-wide, under g_mu: the records, whether the thread runs, and its wake pipe (made once). */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_changed = PTHREAD_COND_INITIALIZER; /* a record went */
static reaped *g_list;
static int g_running;
static int g_wake[2] = {-1, -1};

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static void group_signal(pid_t pid, int sig) {
  if (kill(-pid, sig) < 0) kill(pid, sig); /* the whole group (npx runs node under it) */
}

mcp_reaper_look mcp_reaper_collect(pid_t pid, int *status, int *lingers) {
  siginfo_t info = {0};
  *status = 0;
  *lingers = 0;
  if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) < 0)
    return errno == EINTR ? MCP_REAPER_RUNNING : MCP_REAPER_GONE;
  if (info.si_pid != pid) return MCP_REAPER_RUNNING;
  kill(-pid, SIGTERM);
  while (waitpid(pid, status, 0) < 0 && errno == EINTR) {}
  *lingers = kill(-pid, 0) == 0;
  return MCP_REAPER_REAPED;
}

static void linger(reaped *r, int64_t now) {
  r->pidfd = -1;
  r->next_ms = now + REAPER_GROUP_POLL_MS;
  r->until_ms = now + MCP_REAPER_GROUP_GRACE_MS;
}

static void unlink_free(reaped *r) {
  for (reaped **p = &g_list; *p; p = &(*p)->next)
    if (*p == r) {
      *p = r->next;
      break;
    }
  if (r->pidfd >= 0) close(r->pidfd);
  free(r);
  pthread_cond_broadcast(&g_changed);
}

/* r's pidfd is readable: reaped, then forgotten or lingering. */
static void on_exited(reaped *r, int64_t now) {
  int status, lingers;
  mcp_reaper_look look = mcp_reaper_collect(r->pid, &status, &lingers);
  if (look == MCP_REAPER_RUNNING) return;
  if (!lingers) {
    unlink_free(r);
    return;
  }
  close(r->pidfd);
  linger(r, now);
  pthread_cond_broadcast(&g_changed); /* one leader fewer */
}

/* What is due at now: a leader's next signal, a lingering group's look. */
static void on_due(reaped *r, int64_t now) {
  if (r->pidfd < 0) {
    int alive = kill(-r->pid, 0) == 0;
    if (alive && now < r->until_ms) {
      r->next_ms = min64(now + REAPER_GROUP_POLL_MS, r->until_ms);
      return;
    }
    if (alive) kill(-r->pid, SIGKILL);
    unlink_free(r);
    return;
  }
  group_signal(r->pid, r->stage == 0 ? SIGTERM : SIGKILL);
  r->next_ms = ++r->stage == 1 ? now + r->grace_ms : REAPER_NEVER;
}

/* One round: what is due, then a poll of the pidfds and the wake pipe until the next due time. Called
 * and returns with g_mu held; polls without it. */
static void reaper_round(struct pollfd **pfd, reaped ***who, size_t *cap) {
  int64_t now = now_ms(), next = REAPER_NEVER;
  for (reaped *r = g_list, *nx; r; r = nx) {
    nx = r->next;
    if (r->next_ms <= now) on_due(r, now);
  }
  size_t n = 1;
  for (reaped *r = g_list; r; r = r->next) n += r->pidfd >= 0;
  if (n > *cap) {
    struct pollfd *p = realloc(*pfd, n * sizeof **pfd);
    if (p) *pfd = p;
    reaped **w = p ? realloc(*who, n * sizeof **who) : NULL;
    if (w) *who = w, *cap = n;
  }
  size_t k = 1;
  (*pfd)[0] = (struct pollfd){.fd = g_wake[0], .events = POLLIN};
  for (reaped *r = g_list; r; r = r->next) {
    next = min64(next, r->next_ms);
    if (r->pidfd >= 0 && k < *cap) (*who)[k] = r, (*pfd)[k++] = (struct pollfd){.fd = r->pidfd, .events = POLLIN};
  }
  /* Records past the capacity (no memory) are looked at again soon rather than never. */
  int timeout = next == REAPER_NEVER ? -1 : (int)min64(next - now, 60000);
  if (k < n) timeout = timeout < 0 ? REAPER_GROUP_POLL_MS : (int)min64(timeout, REAPER_GROUP_POLL_MS);
  pthread_mutex_unlock(&g_mu);
  poll(*pfd, k, timeout < 0 ? -1 : timeout);
  pthread_mutex_lock(&g_mu);
  char drop[64];
  while (read(g_wake[0], drop, sizeof drop) > 0) {}
  now = now_ms();
  for (size_t i = 1; i < k; i++)
    if ((*pfd)[i].revents) on_exited((*who)[i], now);
}

static void *reaper_main(void *arg) {
  (void)arg;
  struct pollfd *pfd = NULL;
  reaped **who = NULL;
  size_t cap = 0;
  pthread_mutex_lock(&g_mu);
  if ((pfd = malloc(sizeof *pfd)) && (who = malloc(sizeof *who))) cap = 1;
  while (g_list && cap) reaper_round(&pfd, &who, &cap);
  g_running = 0; /* with g_mu held: a record taken from now on starts a thread again */
  pthread_cond_broadcast(&g_changed);
  pthread_mutex_unlock(&g_mu);
  free(pfd);
  free(who);
  return NULL;
}

static void wake(void) {
  if (g_wake[1] >= 0 && write(g_wake[1], "", 1) < 0) {} /* full: a wake is pending anyway */
}

/* Starts the thread if it is not running. With g_mu held. */
static int thread_start(void) {
  if (g_running) return 0;
  if (g_wake[0] < 0 && pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) < 0) return -1;
  pthread_attr_t attr;
  pthread_t t;
  if (pthread_attr_init(&attr)) return -1;
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  /* Every signal is blocked in the thread, so that the program's (SIGINT, SIGCHLD...) reach its own. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(&t, &attr, reaper_main, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&attr);
  if (rc) return -1;
  g_running = 1;
  return 0;
}

/* No thread: the group is SIGKILLed and the leader reaped now, so that nothing is left behind. */
static void reap_now(pid_t pid, int pidfd) {
  kill(-pid, SIGKILL);
  if (pidfd >= 0) {
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    close(pidfd);
  }
}

void mcp_reaper_take(pid_t pid, int pidfd, long grace_ms) {
  reaped *r = calloc(1, sizeof *r);
  pthread_mutex_lock(&g_mu);
  if (r && !thread_start()) {
    int64_t now = now_ms();
    *r = (reaped){.pid = pid, .pidfd = pidfd, .grace_ms = grace_ms, .next_ms = now + grace_ms, .next = g_list};
    if (pidfd < 0) linger(r, now);
    g_list = r;
    r = NULL;
    wake();
  }
  pthread_mutex_unlock(&g_mu);
  if (!r) return;
  free(r);
  reap_now(pid, pidfd);
}

size_t mcp_reaper_count(void) {
  size_t n = 0;
  pthread_mutex_lock(&g_mu);
  for (const reaped *r = g_list; r; r = r->next) n += r->pidfd >= 0;
  pthread_mutex_unlock(&g_mu);
  return n;
}

/* Waits with g_mu held until pred holds or deadline (monotonic ms) passed; returns pred's last answer. */
static int wait_until(int (*pred)(void), int64_t deadline) {
  while (!pred()) {
    int64_t left = deadline - now_ms();
    if (left <= 0) return 0;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts); /* the condition's clock */
    long long ns = ts.tv_nsec + (min64(left, 50)) * 1000000LL; /* short turns: robust to clock steps */
    ts.tv_sec += ns / 1000000000LL;
    ts.tv_nsec = ns % 1000000000LL;
    pthread_cond_timedwait(&g_changed, &g_mu, &ts);
  }
  return 1;
}

static int none_held(void) { return g_list == NULL; }

static int no_leader(void) {
  for (const reaped *r = g_list; r; r = r->next)
    if (r->pidfd >= 0) return 0;
  return 1;
}

void mcp_reaper_drain(long ms) {
  pthread_mutex_lock(&g_mu);
  int64_t now = now_ms();
  for (reaped *r = g_list; r; r = r->next) {
    if (r->pidfd >= 0 && r->stage == 0) { /* do not wait for its grace period */
      group_signal(r->pid, SIGTERM);
      r->stage = 1;
      r->next_ms = now + ms;
    } else if (r->pidfd >= 0) {
      r->next_ms = min64(r->next_ms, now + ms);
    } else {
      r->until_ms = min64(r->until_ms, now + ms);
    }
  }
  wake();
  wait_until(none_held, now + ms + MCP_REAPER_GROUP_GRACE_MS);
  pthread_mutex_unlock(&g_mu);
}

int mcp_reaper_wait(long ms) {
  pthread_mutex_lock(&g_mu);
  int done = wait_until(no_leader, now_ms() + ms);
  pthread_mutex_unlock(&g_mu);
  return done;
}
