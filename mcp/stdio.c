/* The stdio MCP transport (see stdio.h): pipes on the loop, framing by mcp/rpc.c, the process by
 * mcp/child.c. */
#include "mcp/stdio.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "mcp/child.h"
#include "mcp/expand.h"
#include "mcp/rpc.h"

#define STDIO_OUT_CAP (64u << 20) /* messages queued for a server that does not read */
#define STDIO_READ_CHUNK 65536
#define STDIO_READS_PER_EVENT 16  /* then back to the loop, so one chatty server cannot starve others */

typedef struct stdio_t {
  mcp_transport hdr;
  struct event_base *base;
  const mcp_transport_sink *sink;
  void *ud;
  mcp_child *child; /* NULL once reaped */
  int in_fd, out_fd, log_fd;
  struct event *rd, *wr, *ending;
  ag_buf outq;
  size_t out_off;
  mcp_lines lines;
  int garbage;     /* lines in a row that were not JSON-RPC */
  int dispatching; /* inside a sink callback: close() only marks want_close */
  int want_close;
  int ended;       /* the end is known; on_closed is queued or done */
  int eof;         /* stdout closed; the exit status is awaited briefly */
  char why[160];
  char *name;
} stdio_t;

static void stdio_note(stdio_t *t, const char *fmt, const char *detail) {
  if (t->log_fd < 0) return;
  char line[512];
  int n = snprintf(line, sizeof line, "agora: mcp server %s: ", t->name);
  n += snprintf(line + n, sizeof line - (size_t)n, fmt, detail);
  if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
  line[n++] = '\n';
  if (write(t->log_fd, line, (size_t)n) < 0) { /* a note lost is not worth failing for */ }
}

/* The transport ended: stop its I/O and tell the sink from the loop (never from inside send). */
static void stdio_end(stdio_t *t, const char *why) {
  if (t->ended) return;
  t->ended = 1;
  snprintf(t->why, sizeof t->why, "%s", why);
  event_del(t->rd);
  event_del(t->wr);
  struct timeval now = {0, 0};
  evtimer_add(t->ending, &now);
}

static void stdio_free(stdio_t *t) {
  if (t->in_fd >= 0) close(t->in_fd); /* EOF on its stdin asks the server to end */
  if (t->out_fd >= 0) close(t->out_fd);
  if (t->log_fd >= 0) close(t->log_fd);
  if (t->child) mcp_child_release(t->child, MCP_STDIO_GRACE_MS);
  if (t->rd) event_free(t->rd);
  if (t->wr) event_free(t->wr);
  if (t->ending) event_free(t->ending);
  ag_buf_free(&t->outq);
  mcp_lines_free(&t->lines);
  free(t->name);
  free(t);
}

static void on_ending(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  stdio_t *t = arg;
  if (t->want_close) return;
  t->ended = 1;
  t->sink->on_closed(t->ud, t->why); /* may close (free) t */
}

static int deliver(void *ud, const char *json, size_t len) {
  stdio_t *t = ud;
  if (t->want_close) return 1;
  t->sink->on_message(t->ud, json, len);
  return t->want_close;
}

static int on_line(void *ud, const char *line, size_t len, int too_long) {
  stdio_t *t = ud;
  while (len && (*line == ' ' || *line == '\t')) line++, len--;
  int ok = !too_long && (*line == '{' || *line == '[');
  if (ok) {
    int rc = mcp_rpc_split(line, len, deliver, t);
    if (rc == AG_ERR_INVALID) ok = 0;
    else if (rc) return rc;
  }
  if (ok) {
    t->garbage = 0;
    return AG_OK;
  }
  stdio_note(t, "skipped a line on stdout that is not JSON-RPC%s", too_long ? " (over 4 MiB)" : "");
  if (++t->garbage < MCP_STDIO_GARBAGE_MAX) return AG_OK;
  stdio_end(t, "protocol garbage on stdout");
  return 1;
}

/* Reads what is there (at most a few chunks); 1 when the pipe reached its end. */
static int stdio_read(stdio_t *t, int budget) {
  char buf[STDIO_READ_CHUNK];
  for (int i = 0; budget <= 0 || i < budget; i++) {
    ssize_t n = read(t->out_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : 1;
    if (n == 0) return 1;
    t->dispatching = 1;
    int rc = mcp_lines_feed(&t->lines, buf, (size_t)n);
    t->dispatching = 0;
    if (t->want_close || t->ended) return 0;
    if (rc == AG_ERR_NOMEM) {
      stdio_end(t, "out of memory");
      return 0;
    }
  }
  return 0;
}

static void on_readable(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  stdio_t *t = arg;
  int eof = stdio_read(t, STDIO_READS_PER_EVENT);
  if (t->want_close) {
    stdio_free(t);
    return;
  }
  if (!eof) return;
  if (!t->child) {
    stdio_end(t, "the server closed its output");
    return;
  }
  /* Its exit status says more than the closed pipe: wait a little for it (on_child_exit ends then). */
  event_del(t->rd);
  snprintf(t->why, sizeof t->why, "the server closed its output");
  t->eof = 1;
  struct timeval grace = {0, 500000};
  evtimer_add(t->ending, &grace);
}

static void on_child_exit(void *ud, int status) {
  stdio_t *t = ud;
  t->child = NULL;
  if (!t->eof) stdio_read(t, 0); /* what it wrote before exiting still counts */
  if (t->want_close) {
    stdio_free(t);
    return;
  }
  char why[96];
  if (WIFEXITED(status)) snprintf(why, sizeof why, "the server exited with status %d", WEXITSTATUS(status));
  else if (WIFSIGNALED(status)) snprintf(why, sizeof why, "the server was killed by signal %d", WTERMSIG(status));
  else snprintf(why, sizeof why, "the server ended");
  if (t->eof) evtimer_del(t->ending);
  stdio_end(t, why);
}

/* write() that turns a gone reader into EPIPE without a SIGPIPE for the whole process. */
static ssize_t write_nosigpipe(int fd, const char *p, size_t n) {
  sigset_t pipe_set, old, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigpending(&pending);
  int was_pending = sigismember(&pending, SIGPIPE);
  sigprocmask(SIG_BLOCK, &pipe_set, &old);
  ssize_t r = write(fd, p, n);
  int e = errno;
  if (r < 0 && e == EPIPE && !was_pending) {
    struct timespec zero = {0, 0};
    sigtimedwait(&pipe_set, NULL, &zero);
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  errno = e;
  return r;
}

/* Writes what is queued; AG_ERR_IO when the server's stdin is gone. */
static int stdio_flush(stdio_t *t) {
  while (t->out_off < t->outq.len) {
    ssize_t n = write_nosigpipe(t->in_fd, t->outq.data + t->out_off, t->outq.len - t->out_off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      event_add(t->wr, NULL);
      return AG_OK;
    }
    if (n < 0) {
      stdio_end(t, "the server closed its input");
      return AG_ERR_IO;
    }
    t->out_off += (size_t)n;
  }
  ag_buf_reset(&t->outq);
  t->out_off = 0;
  return AG_OK;
}

static void on_writable(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  stdio_flush(arg);
}

static int stdio_send(mcp_transport *tr, const char *json, size_t len) {
  stdio_t *t = (stdio_t *)tr;
  if (t->ended || t->want_close) return AG_ERR_IO;
  if (memchr(json, '\n', len)) return AG_ERR_INVALID; /* one message per line */
  if (t->out_off && t->out_off == t->outq.len) ag_buf_reset(&t->outq), t->out_off = 0;
  int pending = t->outq.len > t->out_off;
  int rc = ag_buf_append(&t->outq, json, len);
  if (!rc) rc = ag_buf_append(&t->outq, "\n", 1);
  if (rc) return rc;
  return pending ? AG_OK : stdio_flush(t);
}

static void stdio_close(mcp_transport *tr) {
  stdio_t *t = (stdio_t *)tr;
  if (t->dispatching) {
    t->want_close = 1;
    return;
  }
  stdio_free(t);
}

static const mcp_transport_ops stdio_ops = {stdio_send, stdio_close};

int mcp_stdio_pid(const mcp_transport *tr) {
  const stdio_t *t = (const stdio_t *)tr;
  return t->child ? (int)mcp_child_pid(t->child) : 0;
}

extern char **environ;

/* argv and envp for the child; freed (and the values, which may hold secrets, cleared) by spawn_free. */
typedef struct spawn_args {
  char **argv;
  char **envp;
  size_t n_envp;
} spawn_args;

static void spawn_free(spawn_args *a) {
  free(a->argv);
  for (size_t i = 0; a->envp && i < a->n_envp; i++) {
    memset(a->envp[i], 0, strlen(a->envp[i]));
    free(a->envp[i]);
  }
  free(a->envp);
}

static int env_overridden(const mcp_stdio_config *cfg, const char *entry) {
  for (size_t i = 0; i < cfg->n_env; i++) {
    size_t n = strlen(cfg->env_names[i]);
    if (!strncmp(entry, cfg->env_names[i], n) && entry[n] == '=') return 1;
  }
  return 0;
}

static int spawn_prepare(const mcp_stdio_config *cfg, const char *path, spawn_args *a, ag_errmsg *em) {
  size_t n_environ = 0;
  while (environ[n_environ]) n_environ++;
  a->argv = calloc(cfg->n_args + 2, sizeof *a->argv);
  a->envp = calloc(n_environ + cfg->n_env + 1, sizeof *a->envp);
  if (!a->argv || !a->envp) return ag_fail(em, AG_ERR_NOMEM, "out of memory");
  a->argv[0] = (char *)path;
  for (size_t i = 0; i < cfg->n_args; i++) a->argv[i + 1] = (char *)cfg->args[i];
  for (size_t i = 0; i < n_environ; i++) {
    if (env_overridden(cfg, environ[i])) continue;
    if (!(a->envp[a->n_envp] = strdup(environ[i]))) return ag_fail(em, AG_ERR_NOMEM, "out of memory");
    a->n_envp++;
  }
  for (size_t i = 0; i < cfg->n_env; i++) {
    char what[300], *val;
    snprintf(what, sizeof what, "mcp_servers.%s.env.%s", cfg->name, cfg->env_names[i]);
    int rc = mcp_expand(cfg->env_values[i], what, &val, em);
    if (rc) return rc;
    size_t n = strlen(cfg->env_names[i]) + strlen(val) + 2;
    char *e = malloc(n);
    if (e) snprintf(e, n, "%s=%s", cfg->env_names[i], val);
    memset(val, 0, strlen(val));
    free(val);
    if (!e) return ag_fail(em, AG_ERR_NOMEM, "out of memory");
    a->envp[a->n_envp++] = e;
  }
  return AG_OK;
}

/* Pipes and the log: in[1] and out[0] are ours (non-blocking), in[0] and out[1] the child's. */
static int stdio_fds(stdio_t *t, const mcp_stdio_config *cfg, int in[2], int out[2], ag_errmsg *em) {
  if (pipe2(in, O_CLOEXEC)) return ag_fail(em, AG_ERR_IO, "cannot make pipes: %s", strerror(errno));
  t->in_fd = in[1];
  if (pipe2(out, O_CLOEXEC)) return ag_fail(em, AG_ERR_IO, "cannot make pipes: %s", strerror(errno));
  t->out_fd = out[0];
  if (fcntl(t->in_fd, F_SETFL, O_NONBLOCK) || fcntl(t->out_fd, F_SETFL, O_NONBLOCK))
    return ag_fail(em, AG_ERR_IO, "cannot set up pipes: %s", strerror(errno));
  const char *log = cfg->log_path ? cfg->log_path : "/dev/null";
  t->log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (t->log_fd < 0) return ag_fail(em, AG_ERR_IO, "%s: %s", log, strerror(errno));
  t->rd = event_new(t->base, t->out_fd, EV_READ | EV_PERSIST, on_readable, t);
  t->wr = event_new(t->base, t->in_fd, EV_WRITE, on_writable, t);
  t->ending = evtimer_new(t->base, on_ending, t);
  if (!t->rd || !t->wr || !t->ending || event_add(t->rd, NULL)) return ag_fail(em, AG_ERR_NOMEM, "cannot set up events");
  return AG_OK;
}

int mcp_stdio_open(struct event_base *base, const mcp_stdio_config *cfg, const mcp_transport_sink *sink,
                   void *ud, mcp_transport **out, ag_errmsg *em) {
  int in[2] = {-1, -1}, pout[2] = {-1, -1};
  char *path = NULL;
  spawn_args args = {0};
  stdio_t *t = calloc(1, sizeof *t);
  if (!t || !(t->name = strdup(cfg->name ? cfg->name : "?"))) {
    free(t);
    return ag_fail(em, AG_ERR_NOMEM, "out of memory");
  }
  t->hdr.ops = &stdio_ops;
  t->base = base;
  t->sink = sink;
  t->ud = ud;
  t->in_fd = t->out_fd = t->log_fd = -1;
  ag_buf_init(&t->outq, STDIO_OUT_CAP);
  mcp_lines_init(&t->lines, MCP_LINE_CAP, on_line, t);
  int rc = mcp_child_which(cfg->command, &path);
  if (rc == AG_ERR_NOT_FOUND) rc = ag_fail(em, rc, "command '%s' not found", cfg->command);
  else if (rc) rc = ag_fail(em, rc, "out of memory");
  if (!rc) rc = spawn_prepare(cfg, path, &args, em);
  if (!rc) rc = stdio_fds(t, cfg, in, pout, em);
  if (!rc) {
    mcp_spawn sp = {path, args.argv, args.envp, cfg->cwd, in[0], pout[1], t->log_fd};
    rc = mcp_child_spawn(base, &sp, on_child_exit, t, &t->child, em);
  }
  if (in[0] >= 0) close(in[0]);
  if (pout[1] >= 0) close(pout[1]);
  spawn_free(&args);
  free(path);
  if (rc) {
    stdio_free(t);
    return rc;
  }
  *out = &t->hdr;
  return AG_OK;
}
