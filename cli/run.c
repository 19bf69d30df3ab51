/* agora run: load a world file, publish its script step by step, waiting after each until the world
 * is quiet, and print the transcript. */
#include "agora.h"
#include "cli/cli.h"
#include "common/error.h"
#include "cli/event_screen.h"
#include "cli/runner.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char run_usage[] =
  "usage: agora run WORLD.json|WORLD-ID [--db DIR] [--json] [--stream] [--quiet] [--no-save] [--chat ID]\n"
  "                [--yes] [--answers FILE] [--allow-env NAME] [--allow-key-to URL] [--model M] [--provider P]\n"
  "                [--base-url URL]\n"
  "                [--llm-cache off|use|replay] [--cache-db DIR]\n"
  "                [--nats URL [--nats-creds FILE] [--nats-ca FILE] [--nats-replicas N]]\n"
  "       agora run [WORLD.json] --resume CHAT_ID [--db DIR] [--json] ...\n"
  "\n"
  "Loads the world from WORLD.json, starts a new chat (an empty 'New Chat' is reused) or continues\n"
  "--chat ID, publishes the file's script steps in order, waiting after each step until no agent is\n"
  "thinking and no message is queued, and prints the transcript. On a terminal each reply shows as it\n"
  "streams, then the whole message; a status line on stderr shows the step, who is thinking, the\n"
  "messages so far and the time.\n"
  "\n"
  "WORLD-ID (or the world's name, quoted) opens a world the database holds (agora worlds list) with the\n"
  "settings last stored for it. The database keeps a world's agents and settings, not its script: run\n"
  "refuses a stored world that has no schedule either, unless with --resume.\n"
  "\n"
  "  --json      one JSON object per line (messages and events)\n"
  "  --stream    also print llm-chunk events as replies stream in (NDJSON with --json, else\n"
  "              '-- llm-chunk:' lines; on a terminal the live lines already show them)\n"
  "  --quiet, -q on a terminal, print only whole messages (no live lines for streaming replies)\n"
  "  --no-save   keep everything in memory; nothing is written\n"
  "  --db DIR    the database directory (default: $AGORA_HOME, $XDG_DATA_HOME/agora,\n"
  "              ~/.local/share/agora)\n"
  "  --chat ID   continue a saved chat instead of starting a new one\n"
  "  --resume CHAT_ID  finish what a chat had in flight when its process stopped (a crash, a kill):\n"
  "              every agent whose reply was under way is asked again, once; prints what follows\n"
  "              and exits. Publishes no script steps; without WORLD.json the chat's stored world\n"
  "              is used\n"
  "  --yes       approve every tool call that needs approval (otherwise they are denied)\n"
  "  --answers FILE  answer ask_human's questions with FILE's lines, one per question in order\n"
  "              (without it, or once it runs out, the tool's result is an error: no human to answer)\n"
  "  --allow-env NAME  let api_key_env name NAME although it does not end in _API_KEY, _TOKEN or _KEY\n"
  "  --allow-key-to URL\n"
  "              a stored world's agents may send their API key to base_url URL (otherwise only to\n"
  "              the provider's default URL; a stored world may be someone else's)\n"
  "  --model M, --provider P, --base-url URL\n"
  "              use this model, provider or server for every agent (overrides the file)\n"
  "  --llm-cache off|use|replay  the LLM response cache (default: the file's llm_cache, else off): use\n"
  "              answers a request answered before from the cache and stores new answers; replay never\n"
  "              calls a model (a miss is an llm-error cache_miss)\n"
  "  --cache-db DIR  the cache's database (default: DB/llm-cache beside the chats)\n"
  "  --nats URL  join the world on NATS JetStream as a publisher: the steps go to the world's stream\n"
  "              and `agora host` processes answer (docs/distributed.md); with --nats-creds FILE,\n"
  "              --nats-ca FILE, --nats-replicas N; AGORA_NATS_TOKEN or AGORA_NATS_USER and\n"
  "              AGORA_NATS_PASSWORD from the environment (and AGORA_NATS_SIGNING_KEY: signed records).\n"
  "              A step waits until every addressed agent has answered in some host (agents no live\n"
  "              host holds are named after 3 s). With --chat ID the script continues the stream's\n"
  "              current chat ID (the database then holds the stream's copy); --resume cannot go\n"
  "              with --nats\n"
  "\n"
  "Exit status: 0 success, 1 if an agent's LLM call failed (with --nats: in any host) or storage\n"
  "failed, 2 bad usage or input.\n";

static int parse_args(int argc, char **argv, cli_runner_opts *a) {
  memset(a, 0, sizeof *a);
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    int taken = cli_runner_arg(a, "run", argc, argv, &i);
    if (taken > 1) return taken;
    if (taken) continue;
    if (!strcmp(s, "--chat") || !strcmp(s, "--resume")) {
      if (i + 1 >= argc) return cli_error(AG_ERR_INVALID, "run: %s needs a value", s);
      if (!strcmp(s, "--chat")) a->chat = argv[++i];
      else a->resume_chat = argv[++i];
    } else if (s[0] == '-' && s[1]) {
      return cli_error(AG_ERR_INVALID, "run: unknown option '%s' (see agora run --help)", s);
    } else if (!a->world_path) {
      a->world_path = s;
    } else {
      return cli_error(AG_ERR_INVALID, "run: unexpected argument '%s'", s);
    }
  }
  if (a->chat && a->resume_chat) return cli_error(AG_ERR_INVALID, "run: --chat and --resume cannot go together");
  if (a->no_save && (a->chat || a->resume_chat))
    return cli_error(AG_ERR_INVALID, "run: --%s continues a saved chat and cannot go with --no-save",
                     a->chat ? "chat" : "resume");
  if (a->nats.url && a->resume_chat)
    return cli_error(AG_ERR_INVALID, "run: --resume cannot go with --nats: the hosts finish the turns a chat had in "
                     "flight themselves");
  if (!a->world_path && !a->resume_chat)
    return cli_error(AG_ERR_INVALID, "run: missing WORLD.json or a stored world's id or name (see agora run --help)");
  a->script = !a->resume_chat;
  return 0;
}

/* run on libagora (include/agora.h): the transcript and the terminal display from the library's
 * events (event_screen), the script through agora_script_step, and a tick a tenth of a second for the
 * status line and for Ctrl-C (issue 15 item 9), which the signal handler only notes: the tick cancels
 * the replies in flight (agora_cancel), the script stops, what was published is saved, and the person
 * is told so (run_interrupted). */
typedef struct run_state {
  event_screen *scr;
  char **answers; /* --answers' lines, owned */
  size_t n_answers, next_answer;
  int hit;          /* Ctrl-C was pressed */
  size_t cancelled; /* the replies it cancelled */
} run_state;

static volatile sig_atomic_t sigint_seen;

static void on_sigint(int sig) {
  (void)sig;
  sigint_seen = 1;
}

static void run_on_event(const agora_event *ev, void *ctx) {
  run_state *st = ctx;
  if (!cli_runner_request(ev, st->answers, st->n_answers, &st->next_answer)) event_screen_on_event(st->scr, ev);
}

static void run_tick(agora_world *w, void *ctx) {
  run_state *st = ctx;
  if (sigint_seen) { /* replies in flight are cancelled (a cancelled event names them); else the script stops */
    size_t thinking = agora_thinking(w);
    sigint_seen = 0;
    st->hit = 1;
    st->cancelled += thinking;
    if (thinking) agora_cancel(w);
    else agora_interrupt(w);
  }
  event_screen_tick(st->scr, w);
}

static int run_interrupted(const run_state *st, agora_world *w, int no_save) {
  const char *chat = agora_chat_current(w);
  char id[AGORA_ID_MAX];
  snprintf(id, sizeof id, "%s", chat ? chat : "");
  /* The cancelled turns' turn-end events reach the store before the exit, so that a later resume does
   * not ask again what the person cancelled. */
  agora_step(w);
  event_screen_done(st->scr);
  size_t lost = agora_unsaved(w);
  fprintf(stderr, "agora: interrupted: cancelled %zu repl%s, ", st->cancelled, st->cancelled == 1 ? "y" : "ies");
  if (no_save) fputs("nothing saved (--no-save)\n", stderr);
  else if (lost) fprintf(stderr, "%zu message(s) could not be saved\n", lost);
  else fprintf(stderr, "saved chat %s\n", id);
  return 130;
}

/* The script's steps, each run until the world is quiet, on the world's clock (virtual time jumps to
 * scheduled items between steps; `wait` steps advance it), then its schedule until `until`. Returns an
 * exit status (0: all ran). */
static int run_steps(agora_world *w, event_screen *scr) {
  size_t n = agora_script_steps(w);
  int rc = AGORA_OK;
  if (!n) event_screen_step(scr, w, 0, 0); /* no step to show */
  for (size_t i = 0; i < n && rc != AGORA_ENDED; i++) {
    event_screen_step(scr, w, i + 1, n);
    if ((rc = agora_script_step(w, i)) < 0)
      return rc == AGORA_ERR_CANCELLED ? 130 : cli_error(rc, "script[%zu]: %s", i, agora_errmsg());
  }
  if (rc != AGORA_ENDED && (rc = agora_script_finish(w)))
    return rc == AGORA_ERR_CANCELLED ? 130 : cli_error(rc, "clock: %s", agora_strerror(rc));
  return 0;
}

/* --resume: the re-run turns, and what they lead to. */
static int run_resumed(agora_world *w) {
  int rc = agora_run_until_quiet(w);
  if (!rc) return 0;
  return rc == AGORA_ERR_CANCELLED ? 130 : cli_error(rc, "run: %s", agora_strerror(rc));
}

/* The library's options for run's arguments: a new chat unless one is named, the script driven unless
 * --resume (which only finishes a chat's turns in flight). */
static agora_options run_options(const cli_runner_opts *a, run_state *st) {
  int stream = a->stream && (a->json || !isatty(STDOUT_FILENO));
  st->scr = event_screen_new(a->json, stream, a->quiet);
  agora_options o = cli_runner_options(a, "run", stream || (st->scr && st->scr->live), run_on_event, st);
  o.chat = a->resume_chat ? a->resume_chat : a->chat;
  o.flags |= (o.chat ? 0 : AGORA_NEW_CHAT) | (a->resume_chat ? AGORA_NO_CLOCK : AGORA_SCRIPT);
  return o;
}

/* Opens the world, runs it with Ctrl-C noted, and comes to the exit status. */
static int run_world(const cli_runner_opts *a, run_state *st) {
  agora_world *w = NULL;
  agora_options o = run_options(a, st);
  if (!st->scr) return cli_error(AG_ERR_NOMEM, "run: %s", agora_strerror(AG_ERR_NOMEM));
  int status = agora_world_open(a->world_path, a->db, &o, &w);
  if (status) return cli_error(status, "%s", agora_errmsg());
  /* SA_RESTART: a write to a slow terminal or pipe that Ctrl-C interrupts carries on (stdio fails it on
   * EINTR, and the exit said "cannot write the output"); the tick below notices the flag. */
  struct sigaction sa = {.sa_handler = on_sigint, .sa_flags = SA_RESTART}, old;
  sigemptyset(&sa.sa_mask);
  sigint_seen = 0;
  sigaction(SIGINT, &sa, &old);
  if ((status = agora_tick(w, 100, run_tick, st))) status = cli_error(status, "run: %s", agora_errmsg());
  else status = a->resume_chat ? run_resumed(w) : run_steps(w, st->scr);
  run_tick(w, st); /* a Ctrl-C that came as the script ended */
  if (st->hit) status = run_interrupted(st, w, a->no_save);
  event_screen_done(st->scr); /* the status line goes before the exit status's sentences */
  if (!status) status = cli_runner_status(w);
  agora_world_close(w);
  sigaction(SIGINT, &old, NULL);
  return status;
}

int cli_run(int argc, char **argv) {
  if (argc > 0 && cli_is_help(argv[0])) {
    fputs(run_usage, stdout);
    return 0;
  }
  cli_runner_opts args;
  run_state st = {.hit = 0};
  int status = parse_args(argc, argv, &args);
  if (!status && !(args.answers && (status = cli_answers_read(args.answers, "run", &st.answers, &st.n_answers))))
    status = run_world(&args, &st);
  event_screen_free(st.scr);
  cli_answers_free(st.answers, st.n_answers);
  return status;
}
