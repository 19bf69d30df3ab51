/* agora console (see console.h): a person talks to a stored world. Everything runs on the world's one
 * libevent loop: the terminal is an event on fd 0 fed to libedit's callback interface, bus messages and
 * events are printed as they are delivered, and streamed replies live on transient lines above the input. */
#include "cli/console.h"
#include "cli/mcp.h"

#include "cli/console_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli/key_env.h"
#include "cli/load.h"
#include "cli/nats_args.h"
#include "cluster/cluster.h"
#include "cli/prepare.h"

#include <fcntl.h>
#include <signal.h>

static const char console_usage[] =
  "usage: agora console [WORLD.json] [--db DIR] [--model M] [--provider P] [--base-url URL]\n"
  "                     [--nats URL [--nats-creds FILE] [--nats-ca FILE] [--nats-replicas N]]\n"
  "\n"
  "Talk to a world. With WORLD.json the world is loaded (or updated) in the database and its current\n"
  "chat continues (a new chat when it has none); without it, the only world in the database opens.\n"
  "Plain lines are sent as the human; commands start with '/' (type /help). On a terminal, replies\n"
  "stream in while you type, Ctrl-C cancels the replies in flight and Ctrl-D quits. With stdin not a\n"
  "terminal, lines are handled one by one, each waiting until the world is quiet, until EOF.\n"
  "\n"
  "  --db DIR    the database directory (default: $AGORA_HOME, $XDG_DATA_HOME/agora,\n"
  "              ~/.local/share/agora)\n"
  "  --allow-env NAME  let api_key_env name NAME although it does not end in _API_KEY, _TOKEN or _KEY\n"
  "  --model M, --provider P, --base-url URL\n"
  "              use this model, provider or server for every agent of WORLD.json\n"
  "  --nats URL  join the world on NATS JetStream: messages anyone publishes show here, lines typed\n"
  "              go to the world's stream and `agora host` processes answer (docs/distributed.md);\n"
  "              the current chat is the stream's. With --nats-creds FILE, --nats-ca FILE,\n"
  "              --nats-replicas N; AGORA_NATS_TOKEN or AGORA_NATS_USER and AGORA_NATS_PASSWORD from\n"
  "              the environment\n";

console *the_console;

/* ---- Ctrl-C and other signals (evsignal: the work happens on the loop, not in a signal handler) ---- */

static void cancel_replies(console *c) {
  char names[512];
  cli_thinking_names(c->cw.w, names, sizeof names);
  world_cancel_all(c->cw.w);
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

typedef struct console_args {
  const char *world_path;
  const char *db;
  cli_allow_env allow;
  cli_overrides over;
  cluster_opts nats;
} console_args;

static int parse_args(int argc, char **argv, console_args *a) {
  memset(a, 0, sizeof *a);
  cli_nats_defaults(&a->nats);
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    int taken = cli_override_arg(&a->over, "console", argc, argv, &i);
    if (!taken) taken = cli_nats_arg(&a->nats, "console", 0, argc, argv, &i);
    if (taken > 1) return taken;
    if (taken) continue;
    if (!strcmp(s, "--db")) {
      if (i + 1 >= argc) return cli_error(AG_ERR_INVALID, "console: --db needs a value");
      a->db = argv[++i];
    } else if (!strcmp(s, "--allow-env")) {
      int st = cli_allow_env_arg(&a->allow, "console", argc, argv, &i);
      if (st) return st;
    } else if (s[0] == '-' && s[1]) {
      return cli_error(AG_ERR_INVALID, "console: unknown option '%s' (see agora console --help)", s);
    } else if (!a->world_path) {
      a->world_path = s;
    } else {
      return cli_error(AG_ERR_INVALID, "console: unexpected argument '%s'", s);
    }
  }
  if (!a->world_path && (a->over.model || a->over.provider || a->over.base_url))
    return cli_error(AG_ERR_INVALID, "console: --model, --provider and --base-url need WORLD.json");
  return 0;
}

/* Finds the stored world info of id (chat_worlds_each callback). */
static int stored_row(const chat_world_info *w, void *arg) {
  chat_world_info *out = arg;
  if (strcmp(w->id, out->id)) return 0;
  *out = *w;
  return CHAT_STOP;
}

/* A file's world shares its id (its name) with the stored world it updates. When that stored world has
 * other agents it is most likely another world of the same name (two starters): said on stderr before
 * its settings are replaced, naming it. */
static void note_replaced_world(console *c, const char *path, const world *w) {
  world_spec old;
  ag_errmsg em = {""};
  if (chat_world_spec(c->st, world_id(w), &old, &em)) return; /* not stored yet, or unreadable: nothing */
  int same = old.n_agents == world_agent_count(w);
  for (size_t i = 0; same && i < old.n_agents; i++) same = world_agent_find(w, old.agents[i].name) != NULL;
  if (!same) {
    chat_world_info info = {0};
    snprintf(info.id, sizeof info.id, "%s", world_id(w));
    chat_worlds_each(c->st, stored_row, &info, &em);
    fprintf(stderr, "console: %s is world '%s', which the database holds as a different world (id %s, %d agent%s",
            path, old.name, info.id, (int)old.n_agents, old.n_agents == 1 ? "" : "s");
    for (size_t i = 0; i < old.n_agents && i < 5; i++) fprintf(stderr, "%s%s", i ? ", " : ": ", old.agents[i].name);
    fprintf(stderr, "%s; %llu chat%s): its stored settings are replaced by the file's\n", old.n_agents > 5 ? ", ..." : "",
            (unsigned long long)info.chats, info.chats == 1 ? "" : "s");
  }
  world_spec_free(&old);
}

static int open_file_world(console *c, const char *path, const console_args *a, ag_errmsg *em) {
  const cli_allow_env *allow = &a->allow;
  world_spec spec;
  int rc = world_spec_load(path, &spec, em);
  if (rc) return rc;
  cli_world *cw = &c->cw;
  if ((rc = cli_spec_prepare(&spec, &a->over))) ag_fail(em, rc, "%s", ag_strerror(rc));
  else if (!(rc = cli_world_build(path, &spec, &cw->base, &cw->w, em)) &&
           !(rc = cli_key_env_check(cw->w, path, allow, em))) { /* before anything is stored */
    note_replaced_world(c, path, cw->w);
    if (!(rc = chat_session_open(c->st, cw->w, &cw->cs, em)))
      rc = cli_mcp_start(cw->w, chat_store_dir(c->st), 0, em); /* only from a file: never a stored world's commands */
  }
  world_spec_free(&spec);
  return rc;
}

static int open_stored_world(console *c, const cli_allow_env *allow, ag_errmsg *em) {
  struct { size_t n; char id[CHAT_ID_MAX]; } ow = {0, ""};
  int rc = chat_worlds_count(c->st, &ow.n, ow.id, em);
  if (rc) return rc;
  if (ow.n == 0)
    return ag_fail(em, AG_ERR_INVALID, "the database in %s holds no world yet: pass a world file "
                   "(agora console WORLD.json)", chat_store_dir(c->st));
  if (ow.n > 1)
    return ag_fail(em, AG_ERR_INVALID, "the database in %s holds %zu worlds: pass the world file of the "
                   "one to open (agora console WORLD.json)", chat_store_dir(c->st), ow.n);
  rc = cli_world_open(c->st, ow.id, &c->cw, em);
  /* A stored world may come from an imported snapshot: as untrusted as a file. */
  return rc ? rc : cli_key_env_check(c->cw.w, "the stored world", allow, em);
}

static int console_signals(console *c) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGCONT};
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
    if (!(c->ev_sig[i] = evsignal_new(c->cw.base, sigs[i], on_signal, c)) || event_add(c->ev_sig[i], NULL))
      return AG_ERR_NOMEM;
  }
  return AG_OK;
}

/* Store, world, session, transcript printer and signals; then the chat: the current one continues, or
 * a new one starts when the world has none. Returns an exit status. */
static int console_open(console *c, const console_args *a) {
  ag_errmsg em = {""};
  /* The NATS client library is opened once, before any connection is made. */
  if (a->nats.url && cluster_init()) return cli_error(AG_ERR_NOMEM, "console: cannot start the NATS client");
  int rc = cli_store_open(a->db, &c->st, &em);
  if (rc) return cli_error(rc, "%s", em.text);
  rc = a->world_path ? open_file_world(c, a->world_path, a, &em) : open_stored_world(c, &a->allow, &em);
  if (rc) return cli_error(rc, "%s%s", a->world_path ? "" : "console: ", em.text[0] ? em.text : ag_strerror(rc));
  /* On NATS the stream's history is caught up before the transcript is shown: it is stored, not printed. */
  if (a->nats.url && (rc = cli_nats_join_open(c->cw.w, c->st, c->cw.cs, &a->nats, con_stream_chat, c, &c->nats, &em)))
    return cli_error(rc, "console: %s", em.text[0] ? em.text : ag_strerror(rc));
  const char *nc = getenv("NO_COLOR");
  c->tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
#ifndef AGORA_HAVE_LIBEDIT
  c->tty = 0;
#endif
  c->color = isatty(STDOUT_FILENO) && !(nc && nc[0]);
  output_opts oo;
  memset(&oo, 0, sizeof oo); /* plain, live, no progress line: the console is the display */
  if ((rc = output_new(stdout, world_id(c->cw.w), &oo, &c->out)) ||
      (rc = bus_subscribe(world_bus(c->cw.w), BUS_MESSAGE | BUS_EVENT, BUS_PHASE_OUTPUT, con_on_bus, c, NULL)) ||
      (rc = console_signals(c)) || (rc = con_clock_open(c, &em)))
    return cli_error(rc, "console: %s", ag_strerror(rc));
  world_set_emit_chunks(c->cw.w, c->tty);
  world_set_approver(c->cw.w, &(world_approver){con_ask, con_withdrawn}, c);
  chat_session_rerun_turns(c->cw.cs, 1);
  char was[CHAT_ID_MAX];
  snprintf(was, sizeof was, "%s", chat_session_current(c->cw.cs) ? chat_session_current(c->cw.cs) : "");
  if (c->nats) rc = AG_OK; /* the stream's chat is current already */
  else rc = was[0] ? chat_session_resume(c->cw.cs, &em) : chat_session_new(c->cw.cs, &em);
  if (rc) return cli_error(rc, "console: %s", em.text[0] ? em.text : ag_strerror(rc));
  output_set_chat(c->out, chat_session_current(c->cw.cs));
  c->resumed = was[0] && !strcmp(was, chat_session_current(c->cw.cs)); /* a held chat gives a new one */
  if (c->nats) c->resumed = !cli_nats_join_fresh(c->nats);
  return 0;
}

/* Replies still in flight are cancelled; what was published is delivered, and so saved. */
static void console_finish(console *c) {
  for (int i = 0; i < 100000 && !world_is_quiet(c->cw.w); i++) {
    world_cancel_all(c->cw.w);
    event_base_loop(c->cw.base, EVLOOP_NONBLOCK);
  }
}

static void console_close(console *c) {
  if (c->ev_in) event_free(c->ev_in);
  for (size_t i = 0; i < sizeof c->ev_sig / sizeof *c->ev_sig; i++)
    if (c->ev_sig[i]) event_free(c->ev_sig[i]);
#ifdef AGORA_HAVE_LIBEDIT
  con_cands_clear(c);
#endif
  con_clock_close(c);
  cli_nats_join_free(c->nats); /* leaves the stream while the world is whole */
  cli_world_close(&c->cw);
  output_free(c->out);
  chat_store_close(c->st);
  con_ask_clear(c);
  free(c->in);
}

int cli_console(int argc, char **argv) {
  if (argc > 0 && cli_is_help(argv[0])) {
    fputs(console_usage, stdout);
    return 0;
  }
  console_args a;
  int status = parse_args(argc, argv, &a);
  if (status) return status;
  console c;
  memset(&c, 0, sizeof c);
  the_console = &c;
  status = console_open(&c, &a);
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
