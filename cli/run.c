/* agora run: load a world file, publish its script step by step, waiting after each until the world
 * is quiet, and print the transcript. */
#include "cli/cli.h"
#include "chat/archive.h"
#include "cli/runner.h"
#include "world/clock.h"
#include "world/world.h"

#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  if (!a->world_path && !a->resume_chat)
    return cli_error(AG_ERR_INVALID, "run: missing WORLD.json or a stored world's id or name (see agora run --help)");
  a->script = !a->resume_chat;
  return 0;
}

/* Ctrl-C (issue 15 item 9): the replies in flight are cancelled, the script stops, what was published
 * is saved, and the person is told so (run_interrupted). */
typedef struct run_stop {
  world *w;
  int hit;
  size_t cancelled;
} run_stop;

static void on_sigint(evutil_socket_t sig, short what, void *arg) {
  (void)sig;
  (void)what;
  run_stop *rs = arg;
  rs->hit = 1;
  rs->cancelled += world_thinking(rs->w);
  world_cancel_all(rs->w);
  world_interrupt(rs->w);
}

static int run_interrupted(const run_stop *rs, chat_session *cs) {
  const char *chat = cs ? chat_session_current(cs) : NULL;
  char id[CHAT_ID_MAX];
  snprintf(id, sizeof id, "%s", chat ? chat : "");
  /* The cancelled turns' turn-end events reach the store phase before the last save, so that a later
   * resume does not ask again what the person cancelled. */
  event_base_loop(world_base(rs->w), EVLOOP_NONBLOCK);
  if (cs) chat_session_detach(cs); /* saves what was delivered */
  size_t lost = cs ? chat_session_failures(cs) : 0;
  fprintf(stderr, "agora: interrupted: cancelled %zu repl%s, ", rs->cancelled, rs->cancelled == 1 ? "y" : "ies");
  if (!cs) fputs("nothing saved (--no-save)\n", stderr);
  else if (lost) fprintf(stderr, "%zu message(s) could not be saved\n", lost);
  else fprintf(stderr, "saved chat %s\n", id);
  return 130;
}

/* The script's steps, each run until the world is quiet, on the world's clock (virtual time jumps to
 * scheduled items between steps; `wait` steps advance it). Returns an exit status (0: all ran). */
static int run_steps(const world_spec *spec, world *w, world_clock *clk, chat_session *cs, output *out,
                     run_screen *scr) {
  ag_errmsg em = {""};
  int rc = AG_OK, ended = 0;
  for (size_t i = 0; i < spec->n_steps && !ended; i++) {
    const world_step *step = &spec->steps[i];
    run_screen_step(scr, i + 1, spec->n_steps);
    if (step->new_chat) {
      if (!cs) {
        world_reset_conversation(w);
      } else if (!(rc = chat_session_new(cs, &em))) {
        output_set_chat(out, chat_session_current(cs));
      }
      if (!rc) rc = world_run_until_quiet(w);
    } else {
      rc = world_clock_step(clk, step, &ended);
    }
    if (rc) {
      if (rc == AG_ERR_CANCELLED) return 130; /* Ctrl-C */
      return cli_error(rc, "script[%zu]: %s", i, em.text[0] ? em.text : ag_strerror(rc));
    }
  }
  if (!ended && (rc = world_clock_finish(clk)))
    rc = rc == AG_ERR_CANCELLED ? 130 : cli_error(rc, "clock: %s", ag_strerror(rc));
  return rc;
}

int cli_run(int argc, char **argv) {
  if (argc > 0 && cli_is_help(argv[0])) {
    fputs(run_usage, stdout);
    return 0;
  }
  cli_runner_opts args;
  int status = parse_args(argc, argv, &args);
  if (status) return status;
  cli_runner r;
  if (!(status = cli_runner_open(&r, &args, "run", NULL, NULL))) {
    world *w = rt_world(r.rt);
    chat_session *cs = rt_session(r.rt);
    run_stop stop = {w, 0, 0};
    struct event *sigint = evsignal_new(rt_base(r.rt), SIGINT, on_sigint, &stop);
    if (sigint) event_add(sigint, NULL);
    if (!args.resume_chat) status = run_steps(rt_spec(r.rt), w, rt_clock(r.rt), cs, r.out, r.scr);
    else if ((status = world_run_until_quiet(w))) /* the re-run turns, and what they lead to */
      status = status == AG_ERR_CANCELLED ? 130 : cli_error(status, "run: %s", ag_strerror(status));
    if (sigint) event_free(sigint);
    if (stop.hit) status = run_interrupted(&stop, cs);
    if (!status) status = cli_runner_finish(&r);
  }
  cli_runner_close(&r);
  return status;
}
