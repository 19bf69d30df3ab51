/* agora console (see console.h): a person talks to a stored world. Everything runs on the world's one
 * libevent loop: the terminal is an event on fd 0 fed to libedit's callback interface, bus messages and
 * events are printed as they are delivered, and streamed replies live on transient lines above the input. */
#include "console/console.h"

#include "console/console_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>


#include <fcntl.h>
#include <signal.h>

console *the_console;

/* ---- Ctrl-C and other signals (evsignal: the work happens on the loop, not in a signal handler) ---- */

static void cancel_replies(console *c) {
  char names[512];
  rt_cancel(c->rt, names, sizeof names);
  con_live_prune(c);
  con_event(c, &(world_event){EV_CANCELLED, .u.cancelled = {names[0] ? names : NULL}});
}

#ifdef AGORA_HAVE_LIBEDIT
#endif

static void on_interrupt(console *c) {
  if (!world_is_quiet(c->cw.w)) {
    cancel_replies(c);
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

static void on_signal(evutil_socket_t sig, short what, void *arg) {
  (void)what;
  console *c = arg;
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
    world_interrupt(c->cw.w);
  }
}

/* ---- opening and closing ---- */

/* The world is built: the transcript printer for it (plain, live, no progress line: the console is the
 * display). */
static int con_on_world(void *ud, runtime *rt, ag_errmsg *em) {
  console *c = ud;
  c->cw.base = rt_base(rt), c->cw.w = rt_world(rt);
  int rc = output_new(stdout, world_id(c->cw.w), &(output_opts){.json = 0}, &c->out);
  return rc ? ag_fail(em, rc, "%s", ag_strerror(rc)) : AG_OK;
}

static int console_signals(console *c) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGCONT};
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
    if (!(c->ev_sig[i] = evsignal_new(c->cw.base, sigs[i], on_signal, c)) || event_add(c->ev_sig[i], NULL))
      return AG_ERR_NOMEM;
  }
  return AG_OK;
}

/* Store, then the world through the runtime (its current chat continues, or a new one starts when it
 * has none; on NATS the stream's chat), then signals. Returns an exit status. */
static int console_open(console *c, const console_opts *a) {
  ag_errmsg em = {""};
  int rc = rt_store_open(a->db, &c->st, &em);
  if (rc) return rt_report(rc, "%s", em.text);
  const char *nc = getenv("NO_COLOR");
  c->tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
#ifndef AGORA_HAVE_LIBEDIT
  c->tty = 0;
#endif
  c->color = isatty(STDOUT_FILENO) && !(nc && nc[0]);
  rt_opts ro = {.cmd = "console", .world = a->world, .st = c->st, .db = chat_store_dir(c->st), .over = a->over,
                .allow = &a->allow, .nats = &a->nats, .nats_role = a->nats.url ? RT_NATS_VIEW : RT_NATS_OFF,
                .pick = RT_CHAT_CURRENT, .rerun_turns = 1, .mcp = 1, .clock = 1, .emit_chunks = c->tty,
                .on_world = con_on_world, .on_bus = con_on_bus, .on_bus_ud = c,
                .approver = &(world_approver){con_ask, con_withdrawn}, .approver_ud = c,
                .on_stream_chat = con_stream_chat};
  if ((rc = rt_open(&ro, &c->rt, &em))) return rt_report(rc, "%s", em.text);
  c->cw.cs = rt_session(c->rt);
  c->clock = rt_clock(c->rt);
  c->nats = rt_join(c->rt);
  if ((rc = console_signals(c))) return rt_report(rc, "console: %s", ag_strerror(rc));
  output_set_chat(c->out, chat_session_current(c->cw.cs));
  c->resumed = rt_resumed(c->rt);
  c->file = rt_source_of(c->rt) == RT_FROM_FILE ? a->world : NULL;
  return 0;
}

/* Replies still in flight are cancelled; what was published is delivered, and so saved. Input is no
 * longer read: a terminal that hung up stays readable (EPOLLHUP) and would spin the loop. The wait is
 * bounded, so that the process ends (and its chat's lock with it) within FINISH_MS whatever happens. */
static void console_finish(console *c) {
  if (c->ev_in) event_del(c->ev_in);
  rt_settle(c->rt, FINISH_MS);
}

static void console_close(console *c) {
  if (c->ev_in) event_free(c->ev_in);
  for (size_t i = 0; i < sizeof c->ev_sig / sizeof *c->ev_sig; i++)
    if (c->ev_sig[i]) event_free(c->ev_sig[i]);
#ifdef AGORA_HAVE_LIBEDIT
  con_cands_clear(c);
#endif
  rt_close(c->rt); /* the clock, the NATS join, the MCP servers, the session and the world */
  output_free(c->out);
  chat_store_close(c->st);
  con_ask_clear(c);
  free(c->in);
}

int console_run(const console_opts *a) {
  console c;
  memset(&c, 0, sizeof c);
  the_console = &c;
  int status = console_open(&c, a);
  if (!status) {
    status = c.tty ? con_tty_run(&c) : con_lines_run(&c);
    console_finish(&c);
    if (chat_session_failures(c.cw.cs)) {
      fprintf(stderr, "agora: %zu message(s) could not be saved (see the storage-error events)\n",
              chat_session_failures(c.cw.cs));
      status = 1;
    }
  }
  console_close(&c);
  the_console = NULL;
  return status;
}
