/* The set-up `run` and `say` share (see runner.h). */
#include "cli/runner.h"

#include "chat/archive.h"
#include "chat/id_prefix.h"

#include "cli/cli.h"
#include "runtime/db.h"
#include "cli/args.h"
#include "world/world_budget.h"

#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_runner_arg(cli_runner_opts *o, const char *cmd, int argc, char **argv, int *i) {
  const char *s = argv[*i];
  int taken = cli_override_arg(&o->over, cmd, argc, argv, i);
  if (!taken && !strcmp(cmd, "run")) taken = cli_nats_arg(&o->nats, cmd, 0, argc, argv, i);
  if (taken) return taken;
  if (!strcmp(s, "--json")) o->json = 1;
  else if (!strcmp(s, "--stream")) o->stream = 1;
  else if (!strcmp(s, "--quiet") || !strcmp(s, "-q")) o->quiet = 1;
  else if (!strcmp(s, "--no-save")) o->no_save = 1;
  else if (!strcmp(s, "--yes")) o->yes = 1;
  else if (cli_is_allow_arg(s)) {
    int st = cli_allow_env_arg(&o->allow, cmd, argc, argv, i);
    return st ? st : 1;
  }
  else if (!strcmp(s, "--answers")) {
    if (*i + 1 >= argc) return cli_error(AG_ERR_INVALID, "%s: --answers needs a file", cmd);
    o->answers = argv[++*i];
  } else if (!strcmp(s, "--db")) {
    if (*i + 1 >= argc) return cli_error(AG_ERR_INVALID, "%s: --db needs a value", cmd);
    o->db = argv[++*i];
  } else {
    return 0;
  }
  return 1;
}

/* There is nobody to ask in a scripted run: --yes approves for the user (otherwise calls are denied)
 * and ask_human gets the next line of --answers (the world delivers the answer from the loop). */
static void runner_ask(void *ud, const world_approval *req) {
  cli_runner *r = ud;
  world *w = rt_world(r->rt);
  const char *text;
  if (!req->question) world_approval_answer(w, req->id, r->yes);
  else {
    int allow = cli_answers_next(r->answers, r->n_answers, &r->next_answer, &text);
    world_approval_reply(w, req->id, allow, text);
  }
}

int cli_answers_next(char *const *lines, size_t n, size_t *next, const char **text) {
  if (*next < n) {
    *text = lines[(*next)++];
    return 1;
  }
  *text = lines ? "no human to answer: the --answers file has no more lines" : "no human to answer: pass --answers FILE";
  return 0;
}

int cli_answers_read(const char *path, const char *cmd, char ***lines, size_t *n_lines) {
  FILE *f = fopen(path, "r");
  if (!f) return cli_error(AG_ERR_INVALID, "%s: --answers %s: %s", cmd, path, strerror(errno));
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  int rc = 0;
  *lines = calloc(1, sizeof **lines); /* not NULL even for an empty file */
  while (*lines && (n = getline(&line, &cap, f)) >= 0) {
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
    char **p = realloc(*lines, (*n_lines + 1) * sizeof *p);
    if (!p) break;
    *lines = p;
    if (!((*lines)[*n_lines] = strdup(line))) break;
    ++*n_lines;
  }
  if (!*lines || !feof(f)) rc = cli_error(AG_ERR_NOMEM, "%s: --answers %s: %s", cmd, path, ag_strerror(AG_ERR_NOMEM));
  free(line);
  fclose(f);
  return rc;
}

void cli_answers_free(char **lines, size_t n) {
  for (size_t i = 0; i < n; i++) free(lines[i]);
  free(lines);
}

/* The world is built: the transcript printer and the terminal display for it. */
static int runner_on_world(void *ud, runtime *rt, ag_errmsg *em) {
  cli_runner *r = ud;
  r->rt = rt; /* from here on: the approver may be asked before rt_open returns (MCP start, NATS join) */
  world *w = rt_world(rt);
  /* Refused before any chat is touched: a stored world has no script, and run would do nothing. */
  const world_spec *spec = rt_spec(rt);
  if (r->script && rt_source_of(rt) == RT_FROM_STORE && !spec->n_steps && !spec->n_sched)
    return ag_fail(em, AG_ERR_INVALID, "run: stored world '%s' has no script to run (the database keeps a world's "
                   "agents and settings, not its script): run its world file, talk to it with agora say %s TEXT "
                   "or agora console %s, or finish a stopped chat with --resume CHAT_ID", world_id(w),
                   world_id(w), world_id(w));
  int rc = output_new(stdout, world_id(w), &r->oo, &r->out);
  if (!rc) rc = run_screen_new(rt_base(rt), w, r->out, 1, r->live, &r->scr);
  return rc ? ag_fail(em, rc, "%s", ag_strerror(rc)) : AG_OK;
}

/* Messages and events at the output phase: the command's handler, else the screen. */
static void runner_on_bus(void *ud, bus_topic topic, void *payload) {
  cli_runner *r = ud;
  if (r->handler) r->handler(r->handler_ud, topic, payload);
  else run_screen_on_bus(r->scr, topic, payload);
}

static const world_approver runner_approver = {runner_ask, NULL};

/* The runtime's options for run and say. */
static rt_opts runner_rt_opts(cli_runner *r, const cli_runner_opts *o, const char *cmd, int live, int chunks) {
  rt_chat pick = o->no_save ? RT_CHAT_NONE
                 : (o->resume_chat || o->chat) && !o->nats.url ? RT_CHAT_ID
                 : o->resume && !o->new_chat ? RT_CHAT_CURRENT : RT_CHAT_NEW;
  return (rt_opts){.cmd = cmd, .world = o->world_path, .open_db = !o->no_save, .db = o->db, .no_save = o->no_save,
                   .over = o->over, .allow = &o->allow, .nats = &o->nats,
                   .nats_role = o->nats.url ? RT_NATS_PUBLISH : RT_NATS_OFF, .pick = pick,
                   .chat = o->resume_chat ? o->resume_chat : o->chat, .rerun_turns = 1, .mcp = 1,
                   .clock = !o->resume_chat, .emit_chunks = live || chunks,
                   .approver = &runner_approver, .approver_ud = r,
                   .on_world = runner_on_world, .on_bus = runner_on_bus, .on_bus_ud = r};
}

int cli_runner_open(cli_runner *r, const cli_runner_opts *o, const char *cmd, bus_handler handler, void *ud) {
  memset(r, 0, sizeof *r);
  ag_errmsg em = {""};
  int rc;
  if (o->no_save && (o->chat || o->resume_chat))
    return cli_error(AG_ERR_INVALID, "%s: --%s continues a saved chat and cannot go with --no-save", cmd,
                     o->chat ? "chat" : "resume");
  if (o->nats.url && o->resume_chat)
    return cli_error(AG_ERR_INVALID, "%s: --resume cannot go with --nats: the hosts finish the turns a chat had in "
                     "flight themselves", cmd);
  /* Streaming text: live lines on a terminal unless --quiet; --stream prints the chunks elsewhere. */
  int tty = isatty(STDOUT_FILENO), live = !o->json && !o->quiet && tty;
  int chunks = o->stream && (o->json || !tty);
  r->yes = o->yes;
  if (o->answers && (rc = cli_answers_read(o->answers, cmd, &r->answers, &r->n_answers))) return rc;
  r->oo = (output_opts){.json = o->json, .stream = chunks, .progress = 1};
  r->live = live;
  r->script = o->script;
  r->handler = handler, r->handler_ud = ud;
  rt_opts ro = runner_rt_opts(r, o, cmd, live, chunks);
  runtime *rt = NULL;
  rc = rt_open(&ro, &rt, &em);
  r->rt = rt; /* NULL when it failed: the runtime runner_on_world saw is gone then */
  if (rc) return cli_error(rc, "%s", em.text);
  chat_session *cs = rt_session(r->rt);
  if (cs) output_set_chat(r->out, chat_session_current(cs));
  return 0;
}

int cli_run_status(int budget_spent, int64_t tokens, double usd, size_t failed, size_t unsaved) {
  int status = 0;
  if (budget_spent) {
    /* Exit 3 (docs/cli.md): the run stopped at the budget the user set, which is neither success nor a
     * failure of the calls; the refused calls' llm-errors are part of it. */
    fprintf(stderr, "agora: the world's budget is spent (%lld tokens, $%.4f): no new LLM call was started "
            "(raise it with \"budget\" in the world file)\n", (long long)tokens, usd);
    status = 3;
  } else if (failed) {
    fprintf(stderr, "agora: %zu LLM call(s) failed (see the llm-error events)\n", failed);
    status = 1;
  }
  if (unsaved) {
    fprintf(stderr, "agora: %zu message(s) could not be saved (see the storage-error events)\n", unsaved);
    status = 1;
  }
  return status;
}

int cli_runner_finish(cli_runner *r) {
  output_done(r->out);
  world *w = rt_world(r->rt);
  chat_session *cs = rt_session(r->rt);
  world_budget_view b = world_budget(w);
  return cli_run_status(b.reached, b.tokens, b.usd, world_failed_calls(w), cs ? chat_session_failures(cs) : 0);
}

void cli_runner_close(cli_runner *r) {
  rt_close(r->rt);
  run_screen_free(r->scr); /* after the world: its last events still come through the screen */
  output_free(r->out);
  cli_answers_free(r->answers, r->n_answers);
  memset(r, 0, sizeof *r);
}
