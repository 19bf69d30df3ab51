/* agora console (see console.h): a person talks to a world opened through libagora. One poll drives
 * everything: the terminal (or the pipe) on fd 0, a pipe the signal handlers write to, and the world's
 * agora_fd with its agora_next_timeout; the world moves on agora_step, and what it hands the console's
 * subscriber is printed above the input line. */
#include "console/console_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

console *the_console;

/* ---- Ctrl-C and other signals: the handler only writes the signal to a pipe; the loop does the work ---- */

static const int con_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGCONT};
static int sig_wfd = -1;

static void on_sig(int sig) {
  int e = errno;
  unsigned char b = (unsigned char)sig;
  if (sig_wfd >= 0 && write(sig_wfd, &b, 1) < 0) { /* a full pipe already holds enough Ctrl-Cs */
  }
  errno = e;
}

static void on_interrupt(console *c) {
  if (!agora_is_quiet(c->w)) {
    agora_cancel(c->w); /* a "cancelled" event names the agents */
    con_live_prune(c);
    c->ctrl_c = 0;
    return;
  }
  if (!c->tty) {
    c->quit = 1; /* reading a script: an idle Ctrl-C ends it like EOF */
    return;
  }
#ifdef AGORA_HAVE_LIBEDIT
  if (rl_end > 0) {
    con_tty_clear_input(c);
    c->ctrl_c = 0;
    return;
  }
#endif
  if (++c->ctrl_c >= 2) c->quit = 1;
  else con_note(c, "press Ctrl-C again or Ctrl-D to quit");
}

static void on_signal(console *c, int sig) {
  if (sig == SIGINT) {
    on_interrupt(c);
#ifdef AGORA_HAVE_LIBEDIT
  } else if (sig == SIGWINCH && c->tty) {
    con_screen_hide(c);
    rl_resize_terminal();
    con_screen_show(c);
  } else if (sig == SIGCONT && c->tty) {
    con_tty_clear_input(c); /* back from Ctrl-Z: the terminal may have left raw mode */
#endif
  } else if (sig == SIGTERM || sig == SIGHUP) {
    c->quit = 1;
    agora_interrupt(c->w);
  }
}

void con_signals(console *c) {
  unsigned char b[16];
  ssize_t n;
  while ((n = read(c->sig[0], b, sizeof b)) > 0)
    for (ssize_t i = 0; i < n; i++) on_signal(c, b[i]);
}

static int signals_install(console *c) {
  if (pipe(c->sig)) return AG_ERR_IO;
  for (int i = 0; i < 2; i++) {
    fcntl(c->sig[i], F_SETFL, fcntl(c->sig[i], F_GETFL) | O_NONBLOCK);
    fcntl(c->sig[i], F_SETFD, FD_CLOEXEC);
  }
  sig_wfd = c->sig[1];
  /* SA_RESTART: a write to a full terminal interrupted by a signal (Ctrl-C, a resize) carries on; without it
   * stdio failed it (EINTR) and the console exited 1 ("cannot write the output"). poll still returns at
   * once, and the signal waits in the pipe. */
  struct sigaction sa = {.sa_handler = on_sig, .sa_flags = SA_RESTART};
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof con_sigs / sizeof *con_sigs; i++) sigaction(con_sigs[i], &sa, NULL);
  return AG_OK;
}

static void signals_remove(console *c) {
  struct sigaction sa = {.sa_handler = SIG_DFL};
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof con_sigs / sizeof *con_sigs; i++) sigaction(con_sigs[i], &sa, NULL);
  sig_wfd = -1;
  for (int i = 0; i < 2; i++)
    if (c->sig[i] >= 0) close(c->sig[i]);
}

/* ---- the loop ---- */

int con_wait(console *c, int want_in, long max_ms) {
  struct pollfd p[3] = {{.fd = c->sig[0], .events = POLLIN}, {.fd = agora_fd(c->w), .events = POLLIN},
                        {.fd = want_in ? STDIN_FILENO : -1, .events = POLLIN}};
  long t = agora_next_timeout(c->w);
  if (max_ms >= 0 && (t < 0 || t > max_ms)) t = max_ms;
  int n = poll(p, 3, t > 1000000 ? 1000000 : (int)t); /* EINTR: the signal is in the pipe for the next turn */
  if (n > 0 && p[0].revents) con_signals(c);
  agora_step(c->w);
  return n > 0 && want_in && (p[2].revents & (POLLIN | POLLHUP | POLLERR));
}

static void on_tick(agora_world *w, void *ctx) {
  (void)w;
  con_signals(ctx);
}

int con_run_quiet(console *c) {
  agora_tick(c->w, TICK_MS, on_tick, c);
  int rc = agora_run_until_quiet(c->w);
  agora_tick(c->w, 0, NULL, NULL);
  return rc;
}

/* ---- opening and closing ---- */

/* The world's messages, events and requests (the subscriber, also while the world opens). */
static void on_event(const agora_event *ev, void *ctx) {
  console *c = ctx;
  if (!c->w) c->w = agora_event_world(ev);
  int type = agora_event_type(ev);
  if (type == AGORA_EVENT_REQUEST) con_ask(c, ev);
  else if (type == AGORA_EVENT_WITHDRAWN) con_withdrawn(c, ev);
  else con_on_event(ev, c);
}

/* "agora: <why>" on stderr; the exit status for rc (2 for bad input, 1 else). */
static int con_report(int rc, const char *why) {
  fprintf(stderr, "agora: %s\n", why && why[0] ? why : agora_strerror(rc));
  return ag_exit_code(rc);
}

/* The world through libagora (its current chat continues, or a new one starts when it has none; on
 * NATS the stream's chat), then signals. Returns an exit status. */
static int console_open(console *c, const console_opts *a) {
  const char *nc = getenv("NO_COLOR");
  c->tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
#ifndef AGORA_HAVE_LIBEDIT
  c->tty = 0;
#endif
  c->color = isatty(STDOUT_FILENO) && !(nc && nc[0]);
  c->pr = a->print;
  agora_options o = a->open;
  c->view = (o.flags & AGORA_OPTIONS_4) && o.nats_url;
  o.flags |= AGORA_NOTES | AGORA_OPTIONS_3 | (c->tty ? AGORA_STREAM : 0) | (a->world ? 0 : AGORA_FROM_STORE) |
             (c->view ? AGORA_OPTIONS_5 | AGORA_VIEW : 0);
  o.program = "console";
  o.on_event = on_event;
  o.on_event_ctx = c;
  agora_world *w = NULL;
  int rc = agora_world_open(a->world, a->db, &o, &w);
  c->w = w; /* NULL on failure, though the subscriber saw the world while it opened */
  if (rc) return con_report(rc, agora_errmsg());
  if ((rc = signals_install(c))) return con_report(rc, "console: cannot watch signals");
  c->resumed = agora_chat_resumed(w);
  c->file = agora_world_stored(w) ? NULL : a->world;
  return 0;
}

int console_run(const console_opts *a) {
  console c;
  memset(&c, 0, sizeof c);
  c.sig[0] = c.sig[1] = -1;
  the_console = &c;
  int status = console_open(&c, a);
  if (!status) {
    status = c.tty ? con_tty_run(&c) : con_lines_run(&c);
    size_t unsaved = agora_unsaved(c.w);
    if (unsaved) {
      fprintf(stderr, "agora: %zu message(s) could not be saved (see the storage-error events)\n", unsaved);
      status = 1;
    }
  }
  /* Replies still in flight are cancelled; what was published is delivered, and so saved (within half a
   * second, so that the process ends, and its chat's lock with it, whatever happens). */
  agora_world_close(c.w);
  signals_remove(&c);
#ifdef AGORA_HAVE_LIBEDIT
  con_cands_clear(&c);
#endif
  con_ask_clear(&c);
  free(c.in);
  the_console = NULL;
  return status;
}
