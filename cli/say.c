/* agora say: one human message into a world's current chat (or a new one), the replies printed until
 * the world is quiet, saved; the one-shot use of a world, like `llm "prompt"`. */
#include "cli/cli.h"
#include "cli/runner.h"

#include <stdio.h>
#include <string.h>

static const char say_usage[] =
  "usage: agora say WORLD.json|WORLD-ID TEXT [--new-chat] [--db DIR] [--json] [--stream] [--quiet]\n"
  "                [--no-save] [--yes] [--answers FILE] [--allow-env NAME] [--allow-key-to URL] [--model M]\n"
  "                [--provider P] [--base-url URL]\n"
  "\n"
  "Publishes TEXT as one human message into the world's current chat (a new chat with --new-chat, or\n"
  "when the world has none), prints the replies until no agent is thinking and no message is queued,\n"
  "saves and exits. The script of WORLD.json is not run. TEXT '-' reads the message from stdin.\n"
  "WORLD-ID (or the world's name, quoted) opens a world the database holds (agora worlds list) with the\n"
  "settings last stored for it (the console's /set, /add, /remove and /turnlimit included). When another\n"
  "process holds the current chat, say starts a new one and says whose it is.\n"
  "\n"
  "  --new-chat  start a new chat instead of continuing the current one\n"
  "  --json      one JSON object per line (the human message too, then the replies and events)\n"
  "  --stream, --quiet, --no-save, --db, --yes, --answers, --allow-env, --allow-key-to, --model, --provider,\n"
  "  --base-url, --llm-cache, --cache-db\n"
  "              as for agora run\n"
  "\n"
  "Exit status: 0 success, 1 if an agent's LLM call failed or storage failed, 2 bad usage or input.\n";

typedef struct say_state {
  cli_runner *r;
  int echo_skipped; /* the person's own message is not printed back in plain output */
  int json;
} say_state;

static void say_on_bus(void *ud, bus_topic topic, void *payload) {
  say_state *s = ud;
  if (topic == BUS_MESSAGE && !s->json && !s->echo_skipped && ((const ag_msg *)payload)->kind == AG_KIND_HUMAN) {
    s->echo_skipped = 1;
    return;
  }
  run_screen_on_bus(s->r->scr, topic, payload);
}

static int parse_args(int argc, char **argv, cli_runner_opts *a, const char **text) {
  memset(a, 0, sizeof *a);
  a->resume = 1;
  *text = NULL;
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    int taken = cli_runner_arg(a, "say", argc, argv, &i);
    if (taken > 1) return taken;
    if (taken) continue;
    if (!strcmp(s, "--new-chat")) a->new_chat = 1;
    else if (s[0] == '-' && s[1]) return cli_error(AG_ERR_INVALID, "say: unknown option '%s' (see agora say --help)", s);
    else if (!a->world_path) a->world_path = s;
    else if (!*text) *text = s;
    else return cli_error(AG_ERR_INVALID, "say: unexpected argument '%s' (quote the message)", s);
  }
  if (!a->world_path || !*text) return cli_error(AG_ERR_INVALID, "say: usage: agora say WORLD.json|WORLD-ID TEXT (see agora say --help)");
  return 0;
}

/* TEXT "-": the message from stdin, up to 64 KiB, without its final newline. */
static int read_stdin(char *buf, size_t cap) {
  size_t n = fread(buf, 1, cap - 1, stdin);
  buf[n] = '\0';
  while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) buf[--n] = '\0';
  return n ? 0 : cli_error(AG_ERR_INVALID, "say: the message on stdin is empty");
}

int cli_say(int argc, char **argv) {
  if (argc > 0 && cli_is_help(argv[0])) {
    fputs(say_usage, stdout);
    return 0;
  }
  cli_runner_opts args;
  const char *text;
  int status = parse_args(argc, argv, &args, &text);
  if (status) return status;
  static char in[65536];
  if (!strcmp(text, "-") && (status = read_stdin(in, sizeof in))) return status;
  if (!strcmp(text, "-")) text = in;
  if (!text[strspn(text, " \t\r\n")]) return cli_error(AG_ERR_INVALID, "say: the message is empty");
  cli_runner r;
  say_state st = {&r, 0, args.json};
  if (!(status = cli_runner_open(&r, &args, "say", say_on_bus, &st))) {
    world *w = rt_world(r.rt);
    const char *still = rt_clock_still(r.rt);
    if (still) fprintf(stderr, "agora: say: world %s: %s\n", world_id(w), still);
    run_screen_step(r.scr, 1, 1);
    int rc = world_publish(w, "human", text, NULL);
    if (!rc) rc = world_run_until_quiet(w);
    status = rc ? cli_error(rc, "say: %s", ag_strerror(rc)) : cli_runner_finish(&r);
  }
  cli_runner_close(&r);
  return status;
}
