/* agora say: one human message into a world's current chat (or a new one), the replies printed until
 * the world is quiet, saved; the one-shot use of a world, like `llm "prompt"`. */
#include "agora.h"
#include "cli/cli.h"
#include "common/error.h"
#include "cli/event_screen.h"
#include "cli/runner.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/* say runs on libagora (include/agora.h), its first user among the commands that run agents: the
 * transcript is printed from the library's events, and there is nobody to ask, so --yes approves
 * (AGORA_AUTO_APPROVE, else a call is denied) and ask_human gets the next line of --answers. */
typedef struct say_state {
  event_screen *scr; /* the transcript, and on a terminal the status line and live lines */
  int echo_skipped; /* the person's own message is not printed back in plain output */
  char **answers;   /* --answers' lines, owned */
  size_t n_answers, next_answer;
} say_state;

static void say_on_event(const agora_event *ev, void *ctx) {
  say_state *s = ctx;
  if (cli_runner_request(ev, s->answers, s->n_answers, &s->next_answer)) return;
  if (agora_event_type(ev) == AGORA_EVENT_MESSAGE && !s->scr->print.json && !s->echo_skipped &&
      !strcmp(agora_event_sender(ev), "human")) {
    s->echo_skipped = 1;
    return;
  }
  event_screen_on_event(s->scr, ev);
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

/* The library's options for say's arguments (every string borrowed from a); st->scr is made. Streamed
 * text comes as events for the live lines, or for --stream's lines on a pipe or with --json. */
static agora_options say_options(const cli_runner_opts *a, say_state *st) {
  int stream = a->stream && (a->json || !isatty(STDOUT_FILENO));
  st->scr = event_screen_new(a->json, stream, a->quiet);
  agora_options o = cli_runner_options(a, "say", stream || (st->scr && st->scr->live), say_on_event, st);
  o.flags |= a->new_chat ? AGORA_NEW_CHAT : 0;
  return o;
}

/* Until the world is quiet; with a status line, a tenth of a second at a time so that it shows the
 * clock and the agents that stopped thinking, as run's 10 Hz timer does. */
static int say_run(agora_world *w, event_screen *scr) {
  if (!event_screen_ticks(scr)) return agora_run_until_quiet(w);
  int rc;
  event_screen_tick(scr, w);
  while (!(rc = agora_run_for(w, 100)) && !agora_is_quiet(w)) event_screen_tick(scr, w);
  return rc;
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
  say_state st = {.echo_skipped = 0};
  agora_world *w = NULL;
  if (args.answers && (status = cli_answers_read(args.answers, "say", &st.answers, &st.n_answers))) goto done;
  agora_options o = say_options(&args, &st);
  if (!st.scr) {
    status = cli_error(AG_ERR_NOMEM, "say: %s", agora_strerror(AG_ERR_NOMEM));
    goto done;
  }
  int rc = agora_world_open(args.world_path, args.db, &o, &w);
  if (rc) {
    status = cli_error(rc, "%s", agora_errmsg());
    goto done;
  }
  const char *still = agora_clock_note(w);
  if (still) event_screen_hide(st.scr);
  if (still) fprintf(stderr, "agora: say: world %s: %s\n", agora_world_id(w), still);
  rc = agora_publish(w, "human", text);
  if (!rc) rc = say_run(w, st.scr);
  event_screen_done(st.scr); /* the status line goes before the exit status's sentences */
  status = rc ? cli_error(rc, "say: %s", agora_strerror(rc)) : cli_runner_status(w);
done:
  agora_world_close(w);
  event_screen_free(st.scr);
  cli_answers_free(st.answers, st.n_answers);
  return status;
}
