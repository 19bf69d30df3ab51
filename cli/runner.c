/* The set-up `run` and `say` share (see runner.h). */
#include "cli/runner.h"
#include "cli/mcp.h"

#include "chat/archive.h"
#include "chat/id_prefix.h"

#include "cli/cli.h"
#include "cli/db.h"
#include "cli/load.h"
#include "cli/nats_args.h"

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
  else if (!strcmp(s, "--allow-env")) {
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
  if (!req->question) world_approval_answer(r->w, req->id, r->yes);
  else if (r->next_answer < r->n_answers) world_approval_reply(r->w, req->id, 1, r->answers[r->next_answer++]);
  else
    world_approval_reply(r->w, req->id, 0,
                         r->answers ? "no human to answer: the --answers file has no more lines"
                                    : "no human to answer: pass --answers FILE");
}

/* --answers FILE: its lines, in order (without their line ends). */
static int read_answers(cli_runner *r, const char *path, const char *cmd) {
  FILE *f = fopen(path, "r");
  if (!f) return cli_error(AG_ERR_INVALID, "%s: --answers %s: %s", cmd, path, strerror(errno));
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  int rc = 0;
  r->answers = calloc(1, sizeof *r->answers); /* not NULL even for an empty file */
  while (r->answers && (n = getline(&line, &cap, f)) >= 0) {
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
    char **p = realloc(r->answers, (r->n_answers + 1) * sizeof *p);
    if (!p) break;
    r->answers = p;
    if (!(r->answers[r->n_answers] = strdup(line))) break;
    r->n_answers++;
  }
  if (!r->answers || !feof(f)) rc = cli_error(AG_ERR_NOMEM, "%s: --answers %s: %s", cmd, path, ag_strerror(AG_ERR_NOMEM));
  free(line);
  fclose(f);
  return rc;
}

/* Storage: the world is loaded (or updated) in the database, then the chat to use becomes current: the
 * one named, the world's current one (say), or a new one (reuse rules). */
static int open_chat(cli_runner *r, const cli_runner_opts *o, const char *cmd) {
  ag_errmsg em = {""};
  int rc = r->st ? AG_OK : cli_store_open(o->db, &r->st, &em);
  if (rc || (rc = chat_session_open(r->st, r->w, &r->cs, &em)))
    return cli_error(rc, "%s", em.text[0] ? em.text : ag_strerror(rc));
  chat_session_rerun_turns(r->cs, 1);
  if (o->nats.url) chat_session_fresh_only(r->cs, 1); /* the copy's seqs are the stream's */
  char id[CHAT_ID_MAX];
  const char *named = o->resume_chat ? o->resume_chat : o->chat; /* an id or a unique prefix */
  if (named) {
    rc = chat_id_resolve(r->st, named, id, &em);
    if (!rc) rc = chat_session_load(r->cs, id, &em);
  } else if (o->resume && !o->new_chat && chat_session_current(r->cs)) {
    rc = chat_session_resume(r->cs, &em);
  } else {
    rc = chat_session_new(r->cs, &em);
  }
  if (rc) return cli_error(rc, "%s: %s", cmd, em.text[0] ? em.text : ag_strerror(rc));
  output_set_chat(r->out, chat_session_current(r->cs));
  return 0;
}

/* The world: from WORLD.json, or (run --resume without one) the resumed chat's, from the database. */
static int load_spec(cli_runner *r, const cli_runner_opts *o, const char *cmd) {
  ag_errmsg em = {""};
  char world_id[CHAT_ID_MAX];
  int rc;
  if (o->world_path) rc = world_spec_load(o->world_path, &r->spec, &em);
  else if (!(rc = cli_store_open(o->db, &r->st, &em)) && !(rc = cli_chat_world(r->st, o->resume_chat, world_id, &em)))
    rc = chat_world_spec(r->st, world_id, &r->spec, &em);
  if (rc) return cli_error(rc, "%s%s", o->world_path ? "" : "run: ", em.text[0] ? em.text : ag_strerror(rc));
  if ((rc = cli_spec_prepare(&r->spec, &o->over))) return cli_error(rc, "%s", ag_strerror(rc));
  if (o->no_save && (o->chat || o->resume_chat))
    return cli_error(AG_ERR_INVALID, "%s: --%s continues a saved chat and cannot go with --no-save", cmd,
                     o->chat ? "chat" : "resume");
  return 0;
}

/* --nats: the world joins its stream and catches up before anything is shown or stored, so that only
 * this run's chat is. */
static int runner_join(cli_runner *r, const cli_runner_opts *o, const char *cmd) {
  cluster_opts n = o->nats;
  ag_errmsg em = {""};
  if (!n.replicas) n.replicas = 1;
  if (!n.lease_ms) n.lease_ms = 3000;
  if (o->chat) { /* --chat ID: the copy follows the stream, whose chat must be ID */
    int rc = cli_store_open(o->db, &r->st, &em);
    if (!rc && !(rc = chat_session_open(r->st, r->w, &r->cs, &em)))
      rc = cli_nats_join_open(r->w, r->st, r->cs, &n, NULL, NULL, &r->nj, &em);
    if (rc) return cli_error(rc, "%s: %s", cmd, em.text[0] ? em.text : ag_strerror(rc));
    const char *now = chat_session_current(r->cs);
    if (!now || strncmp(now, o->chat, strlen(o->chat))) /* the stream has one chat: a prefix names it */
      return cli_error(AG_ERR_INVALID, "%s: --chat %s: the world's stream on NATS is on chat %s; only that chat can be "
                       "continued with --nats", cmd, o->chat, cli_nats_join_fresh(r->nj) ? "(none yet)" : now);
    return 0;
  }
  int rc = cluster_open(r->w, &n, &r->cl, &em);
  if (!rc) rc = cluster_wait_ready(r->cl, 60000, &em);
  return rc ? cli_error(rc, "%s: %s", cmd, em.text[0] ? em.text : ag_strerror(rc)) : 0;
}

int cli_runner_open(cli_runner *r, const cli_runner_opts *o, const char *cmd, bus_handler handler, void *ud) {
  memset(r, 0, sizeof *r);
  ag_errmsg em = {""};
  int rc = load_spec(r, o, cmd);
  if (rc) return rc;
  if (o->nats.url && o->resume_chat)
    return cli_error(AG_ERR_INVALID, "%s: --resume cannot go with --nats: the hosts finish the turns a chat had in "
                     "flight themselves", cmd);
  if (o->nats.url && cluster_init()) return cli_error(AG_ERR_NOMEM, "%s: cannot start the NATS client", cmd);
  /* A stored world may come from an imported snapshot: as untrusted as a file. */
  const char *label = o->world_path ? o->world_path : "the stored world";
  if ((rc = cli_world_build(label, &r->spec, &r->base, &r->w, &em)) ||
      (rc = cli_key_env_check(r->w, label, &o->allow, &em)))
    return cli_error(rc, "%s", em.text);
  if (o->nats.url && (rc = runner_join(r, o, cmd))) return rc;
  /* Streaming text: live lines on a terminal unless --quiet; --stream prints the chunks elsewhere. */
  int tty = isatty(STDOUT_FILENO), live = !o->json && !o->quiet && tty;
  int chunks = o->stream && (o->json || !tty);
  world_set_emit_chunks(r->w, live || chunks);
  r->yes = o->yes;
  if (o->answers && (rc = read_answers(r, o->answers, cmd))) return rc;
  world_set_approver(r->w, &(world_approver){runner_ask, NULL}, r);
  output_opts oo = {.json = o->json, .stream = chunks, .progress = 1};
  if ((rc = output_new(stdout, world_id(r->w), &oo, &r->out)) ||
      (rc = run_screen_new(r->base, r->w, r->out, 1, live, &r->scr)) ||
      (rc = bus_subscribe(world_bus(r->w), BUS_MESSAGE | BUS_EVENT, BUS_PHASE_OUTPUT,
                          handler ? handler : run_screen_on_bus, handler ? ud : r->scr, NULL)))
    return cli_error(rc, "%s", ag_strerror(rc));
  /* MCP servers start with the world (a failed one is an mcp-error event, shown before exiting). */
  if ((rc = cli_mcp_start(r->w, o->db, o->no_save, &em))) {
    world_run_until_quiet(r->w);
    return cli_error(rc, "%s: %s", cmd, em.text);
  }
  if (!o->no_save && !r->nj && (rc = open_chat(r, o, cmd))) return rc;
  if (r->nj) output_set_chat(r->out, chat_session_current(r->cs));
  /* On NATS the chat stored here is the chat published to. */
  if (r->cl && (rc = cluster_use_chat(r->cl, r->cs ? chat_session_current(r->cs) : NULL)))
    return cli_error(rc, "%s: %s", cmd, ag_strerror(rc));
  return 0;
}

int cli_runner_finish(cli_runner *r) {
  int status = 0;
  output_done(r->out);
  if (world_failed_calls(r->w)) {
    fprintf(stderr, "agora: %zu LLM call(s) failed (see the llm-error events)\n", world_failed_calls(r->w));
    status = 1;
  }
  if (r->cs && chat_session_failures(r->cs)) {
    fprintf(stderr, "agora: %zu message(s) could not be saved (see the storage-error events)\n",
            chat_session_failures(r->cs));
    status = 1;
  }
  return status;
}

void cli_runner_close(cli_runner *r) {
  cli_mcp_stop(r->w);
  cli_nats_join_free(r->nj);
  cli_nats_leave(r->cl);
  chat_session_free(r->cs);
  chat_store_close(r->st);
  world_free(r->w);
  run_screen_free(r->scr); /* after the world: its last events still come through the screen */
  output_free(r->out);
  if (r->base) event_base_free(r->base);
  world_spec_free(&r->spec);
  for (size_t i = 0; i < r->n_answers; i++) free(r->answers[i]);
  free(r->answers);
  memset(r, 0, sizeof *r);
}
