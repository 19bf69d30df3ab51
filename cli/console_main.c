/* agora console's arguments (the console itself is console/): parsing, then console_run. */
#include "cli/args.h"
#include "cli/cli.h"
#include "cli/event_print.h"
#include "common/error.h"
#include "console/console.h"

#include <stdio.h>
#include <string.h>

static const char console_usage[] =
  "usage: agora console [WORLD.json | WORLD-ID] [--db DIR] [--model M] [--provider P] [--base-url URL]\n"
  "                     [--nats URL [--nats-creds FILE] [--nats-ca FILE] [--nats-replicas N]]\n"
  "\n"
  "Talk to a world. With WORLD.json the world is loaded (or updated) in the database and its current\n"
  "chat continues (a new chat when it has none); with WORLD-ID (or the world's name, quoted) the world\n"
  "the database holds opens with the settings last stored for it; without either, the only world in the\n"
  "database opens.\n"
  "Plain lines are sent as the human; commands start with '/' (type /help). On a terminal, replies\n"
  "stream in while you type, Ctrl-C cancels the replies in flight and Ctrl-D quits. With stdin not a\n"
  "terminal, lines are handled one by one, each waiting until the world is quiet, until EOF.\n"
  "\n"
  "  --db DIR    the database directory (default: $AGORA_HOME, $XDG_DATA_HOME/agora,\n"
  "              ~/.local/share/agora)\n"
  "  --allow-env NAME  let api_key_env name NAME although it does not end in _API_KEY, _TOKEN or _KEY\n"
  "  --allow-key-to URL\n"
  "              a stored world's agents may send their API key to base_url URL (otherwise only to\n"
  "              the provider's default URL; a stored world may be someone else's)\n"
  "  --model M, --provider P, --base-url URL\n"
  "              use this model, provider or server for every agent of WORLD.json\n"
  "  --llm-cache off|use|replay  the LLM response cache (default: the file's llm_cache, else off): use\n"
  "              answers a request answered before from the cache and stores new answers; replay never\n"
  "              calls a model (a miss is an llm-error cache_miss)\n"
  "  --cache-db DIR  the cache's database (default: DB/llm-cache beside the chats)\n"
  "  --nats URL  join the world on NATS JetStream: messages anyone publishes show here, lines typed\n"
  "              go to the world's stream and `agora host` processes answer (docs/distributed.md);\n"
  "              the current chat is the stream's. With --nats-creds FILE, --nats-ca FILE,\n"
  "              --nats-replicas N; AGORA_NATS_TOKEN or AGORA_NATS_USER and AGORA_NATS_PASSWORD from\n"
  "              the environment\n";

/* What the command line gives: the console's options are made from it (strings borrowed from argv). */
typedef struct console_args {
  const char *world, *db;
  cli_allow allow;
  cli_overrides over;
  cli_nats nats;
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
    } else if (cli_is_allow_arg(s)) {
      int st = cli_allow_env_arg(&a->allow, "console", argc, argv, &i);
      if (st) return st;
    } else if (s[0] == '-' && s[1]) {
      return cli_error(AG_ERR_INVALID, "console: unknown option '%s' (see agora console --help)", s);
    } else if (!a->world) {
      a->world = s;
    } else {
      return cli_error(AG_ERR_INVALID, "console: unexpected argument '%s'", s);
    }
  }
  if (!a->world && (a->over.model || a->over.provider || a->over.base_url))
    return cli_error(AG_ERR_INVALID, "console: --model, --provider and --base-url need WORLD.json");
  return 0;
}

/* The console prints the transcript as `run` does (cli/event_print.c): handed down to it, since the
 * console sits below cli/. */
static void print_event(void *ctx, const agora_event *ev) { cli_event_print_one(ctx, ev); }

static void print_entry(void *ctx, const cJSON *j, int seqs) {
  cli_event_print p = *(const cli_event_print *)ctx;
  p.seqs = seqs;
  cli_event_print_entry(&p, j);
}

int cli_console(int argc, char **argv) {
  if (argc > 0 && cli_is_help(argv[0])) {
    fputs(console_usage, stdout);
    return 0;
  }
  console_args a;
  int status = parse_args(argc, argv, &a);
  if (status) return status;
  cli_event_print pr = cli_event_print_make(stdout, 0, 0);
  console_opts o = {.world = a.world, .db = a.db, .open = {.flags = AGORA_OPTIONS_3 | AGORA_OPTIONS_4},
                    .print = {.event = print_event, .entry = print_entry, .ctx = &pr}};
  cli_options_fill(&o.open, &a.allow, &a.over, &a.nats);
  return console_run(&o);
}
