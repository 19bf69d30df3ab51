/* What `run` and `say` share: their common options, and a world loaded from its file with its output,
 * terminal display and storage set up, ready to publish into; then the exit status at the end. */
#ifndef AG_CLI_RUNNER_H
#define AG_CLI_RUNNER_H

#include <stddef.h>
#include <stdint.h>

#include "cli/run_screen.h"
#include "runtime/output.h"
#include "runtime/runtime.h"

/* Options (strings borrowed from argv). */
typedef struct cli_runner_opts {
  const char *world_path, *db, *chat;
  const char *resume_chat; /* run --resume ID: that chat, its world from the database without WORLD.json */
  const char *answers; /* --answers FILE: ask_human's answers, one a line */
  int json, stream, no_save, yes, quiet;
  int new_chat; /* say: start a new chat; otherwise say continues the current one, run starts one */
  int resume;   /* say: continue the world's current chat (a new one when it has none) */
  int script;   /* run: the world's script is run, so a stored world (which keeps none) needs a schedule */
  rt_allow_env allow;
  rt_overrides over;
  cluster_opts nats; /* run --nats URL: the world spread over NATS (url NULL: one process) */
} cli_runner_opts;

/* When argv[*i] is one of the shared options (--db --json --stream --quiet/-q --no-save --yes
 * --answers --allow-env --model --provider --base-url; run: --nats and its options), takes it (and its value) and returns 1; an exit status
 * > 1 after printing why; 0 when it is none of them. */
int cli_runner_arg(cli_runner_opts *o, const char *cmd, int argc, char **argv, int *i);

/* --answers FILE: its lines, in order, without their line ends, into *lines (never NULL on success,
 * even for an empty file) and *n_lines (both zero on entry), the caller's to cli_answers_free. Returns 0,
 * or the exit status after printing why (cmd names the command). */
int cli_answers_read(const char *path, const char *cmd, char ***lines, size_t *n_lines);
void cli_answers_free(char **lines, size_t n);
/* ask_human's answer from --answers: 1 and the next line in *text (borrowed from lines), or 0 and why
 * nobody answers when the lines ran out or there were none (lines NULL: no --answers given). */
int cli_answers_next(char *const *lines, size_t n, size_t *next, const char **text);

typedef struct cli_runner {
  runtime *rt;      /* the world, its loop and its chat: rt_world(rt), rt_base(rt), rt_session(rt) */
  output *out;
  run_screen *scr;
  output_opts oo;           /* the printer's options, for when the world is built */
  int live;                 /* live lines on a terminal */
  int script;               /* cli_runner_opts.script */
  bus_handler handler;      /* the command's own output handler (say), else the screen's */
  void *handler_ud;
  int yes;                  /* --yes: approve every tool call */
  char **answers;           /* --answers' lines, owned; next: the one the next question gets */
  size_t n_answers, next_answer;
} cli_runner;

/* Opens o->world_path (a file or a stored world's id or name) through the runtime and sets the output
 * up (cmd names the command in messages). Returns 0 or the exit
 * status after printing why; either way release r with cli_runner_close. handler (may be NULL: the
 * screen's) receives the bus's messages and events at the output phase with ud. */
int cli_runner_open(cli_runner *r, const cli_runner_opts *o, const char *cmd, bus_handler handler, void *ud);
/* The exit status of run and say from what the run came to, saying on stderr what failed: 1 when a save
 * failed, else 3 when the world's budget was spent (tokens and usd spent), else 1 when an LLM call
 * failed, else 0. */
int cli_run_status(int budget_spent, int64_t tokens, double usd, size_t failed, size_t unsaved);
/* Ends the output and says what failed: returns 1 when a save failed, else 3 when the world's budget was
 * reached, else 1 when an LLM call failed, else 0. */
int cli_runner_finish(cli_runner *r);
void cli_runner_close(cli_runner *r);

#endif
