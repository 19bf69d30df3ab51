/* agora run: load a world file, publish its script step by step, waiting after each until the world
 * is quiet, and print the transcript. */
#include "cli/cli.h"
#include "cli/db.h"
#include "cli/key_env.h"
#include "cli/load.h"
#include "cli/output.h"
#include "world/clock.h"
#include "world/world.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char run_usage[] =
  "usage: agora run WORLD.json [--db DIR] [--json] [--stream] [--no-save] [--chat ID] [--yes]\n"
  "                [--allow-env NAME]\n"
  "\n"
  "Loads the world from WORLD.json, starts a new chat (an empty 'New Chat' is reused) or continues\n"
  "--chat ID, publishes the file's script steps in order, waiting after each step until no agent is\n"
  "thinking and no message is queued, and prints the transcript.\n"
  "\n"
  "  --json      one JSON object per line (messages and events)\n"
  "  --stream    with --json, also print llm-chunk events as replies stream in\n"
  "  --no-save   keep everything in memory; nothing is written\n"
  "  --db DIR    the database directory (default: $AGORA_HOME, $XDG_DATA_HOME/agora,\n"
  "              ~/.local/share/agora)\n"
  "  --chat ID   continue a saved chat instead of starting a new one\n"
  "  --yes       approve every tool call that needs approval (otherwise they are denied)\n"
  "  --allow-env NAME  let api_key_env name NAME although it does not end in _API_KEY, _TOKEN or _KEY\n"
  "\n"
  "Exit status: 0 success, 1 if an agent's LLM call failed or storage failed, 2 bad usage or input.\n";

typedef struct run_args {
  const char *world_path;
  const char *db;
  const char *chat;
  int json, stream, no_save, yes;
  cli_allow_env allow;
} run_args;

static int parse_args(int argc, char **argv, run_args *a) {
  memset(a, 0, sizeof *a);
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    if (!strcmp(s, "--json")) a->json = 1;
    else if (!strcmp(s, "--stream")) a->stream = 1;
    else if (!strcmp(s, "--no-save")) a->no_save = 1;
    else if (!strcmp(s, "--yes")) a->yes = 1;
    else if (!strcmp(s, "--allow-env")) {
      int st = cli_allow_env_arg(&a->allow, "run", argc, argv, &i);
      if (st) return st;
    } else if (!strcmp(s, "--db") || !strcmp(s, "--chat")) {
      if (i + 1 >= argc) return cli_error(AG_ERR_INVALID, "run: %s needs a value", s);
      if (!strcmp(s, "--db")) a->db = argv[++i];
      else a->chat = argv[++i];
    } else if (s[0] == '-' && s[1]) {
      return cli_error(AG_ERR_INVALID, "run: unknown option '%s' (see agora run --help)", s);
    } else if (!a->world_path) {
      a->world_path = s;
    } else {
      return cli_error(AG_ERR_INVALID, "run: unexpected argument '%s'", s);
    }
  }
  if (!a->world_path) return cli_error(AG_ERR_INVALID, "run: missing WORLD.json (see agora run --help)");
  return 0;
}

/* --yes: there is nobody to ask in a scripted run, so the flag answers for the user (the world
 * delivers the answer from the loop). */
static void approve_all(void *ud, const world_approval *req) { world_approval_answer(ud, req->id, 1); }

/* The script's steps, each run until the world is quiet. Returns an exit status (0: all ran). */
static int run_steps(const world_spec *spec, world *w, chat_session *cs, output *out) {
  ag_errmsg em = {""};
  world_clock *clk = NULL;
  int rc = world_clock_new(w, &clk, &em), ended = 0;
  if (rc) return cli_error(rc, "%s", em.text);
  for (size_t i = 0; i < spec->n_steps && !ended; i++) {
    const world_step *step = &spec->steps[i];
    output_progress(out, i + 1, spec->n_steps, world_thinking(w), NULL);
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
      world_clock_free(clk);
      return cli_error(rc, "script[%zu]: %s", i, em.text[0] ? em.text : ag_strerror(rc));
    }
  }
  if (!ended && (rc = world_clock_finish(clk))) rc = cli_error(rc, "clock: %s", ag_strerror(rc));
  world_clock_free(clk);
  return rc;
}

int cli_run(int argc, char **argv) {
  if (argc > 0 && cli_is_help(argv[0])) {
    fputs(run_usage, stdout);
    return 0;
  }
  run_args args;
  int status = parse_args(argc, argv, &args);
  if (status) return status;

  ag_errmsg em = {""};
  world_spec spec;
  int rc = world_spec_load(args.world_path, &spec, &em);
  if (rc) return cli_error(rc, "%s", em.text);

  struct event_base *base = NULL;
  world *w = NULL;
  output *out = NULL;
  store *st = NULL;
  chat_session *cs = NULL;
  status = 0;
  if (args.no_save && args.chat) {
    status = cli_error(AG_ERR_INVALID, "run: --chat continues a saved chat and cannot go with --no-save");
    goto done;
  }
  if ((rc = cli_world_build(args.world_path, &spec, &base, &w, &em))) {
    status = cli_error(rc, "%s", em.text);
    goto done;
  }
  if ((rc = cli_key_env_check(w, args.world_path, &args.allow, &em))) {
    status = cli_error(rc, "%s", em.text);
    goto done;
  }
  world_set_emit_chunks(w, args.json && args.stream);
  if (args.yes) world_set_approver(w, &(world_approver){approve_all, NULL}, w);
  output_opts oo = {args.json, args.stream, 1, 0};
  if ((rc = output_new(stdout, world_id(w), &oo, &out))) {
    status = cli_error(rc, "%s", ag_strerror(rc));
    goto done;
  }
  if ((rc = bus_subscribe(world_bus(w), BUS_MESSAGE | BUS_EVENT, BUS_PHASE_OUTPUT, output_on_bus, out, NULL))) {
    status = cli_error(rc, "%s", ag_strerror(rc));
    goto done;
  }
  if (!args.no_save) {
    /* Storage: the world is loaded (or updated) in the database, then a new chat (reuse rules) or the
     * chat to continue becomes current. */
    if ((rc = cli_store_open(args.db, &st, &em)) || (rc = chat_session_open(st, w, &cs, &em))) {
      status = cli_error(rc, "%s", em.text[0] ? em.text : ag_strerror(rc));
      goto done;
    }
    rc = args.chat ? chat_session_load(cs, args.chat, &em) : chat_session_new(cs, &em);
    if (rc) {
      status = cli_error(rc, "run: %s", em.text[0] ? em.text : ag_strerror(rc));
      goto done;
    }
    output_set_chat(out, chat_session_current(cs));
  }
  if ((status = run_steps(&spec, w, cs, out))) goto done;
  output_done(out);
  if (world_failed_calls(w)) {
    fprintf(stderr, "agora: %zu LLM call(s) failed (see the llm-error events)\n", world_failed_calls(w));
    status = 1;
  }
  if (cs && chat_session_failures(cs)) {
    fprintf(stderr, "agora: %zu message(s) could not be saved (see the storage-error events)\n",
            chat_session_failures(cs));
    status = 1;
  }
done:
  chat_session_free(cs);
  store_close(st);
  world_free(w);
  output_free(out);
  if (base) event_base_free(base);
  world_spec_free(&spec);
  return status;
}
