/* What `run` and `say` share: their common options, the library's options made from them (both run
 * on libagora, include/agora.h), the answers of a scripted run, and the exit status at the end. */
#ifndef AG_CLI_RUNNER_H
#define AG_CLI_RUNNER_H

#include <stddef.h>
#include <stdint.h>

#include "agora.h"
#include "cli/args.h"

/* Options (strings borrowed from argv). */
typedef struct cli_runner_opts {
  const char *world_path, *db, *chat;
  const char *resume_chat; /* run --resume ID: that chat, its world from the database without WORLD.json */
  const char *answers; /* --answers FILE: ask_human's answers, one a line */
  int json, stream, no_save, yes, quiet;
  int new_chat; /* say: start a new chat; otherwise say continues the current one, run starts one */
  int resume;   /* say: continue the world's current chat (a new one when it has none) */
  int script;   /* run: the world's script is run, so a stored world (which keeps none) needs a schedule */
  cli_allow allow;
  cli_overrides over;
  cli_nats nats; /* run --nats URL: the world spread over NATS (url NULL: one process) */
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

/* The library's options for run's and say's arguments (every string borrowed from o; AGORA_NOTES and
 * the API-3 and API-4 fields set), program names the command: --yes is AGORA_AUTO_APPROVE, --nats and
 * its options go to the NATS fields; events reports streamed text (AGORA_STREAM: live lines or
 * --stream's lines); fn and ctx become on_event. The caller adds the command's own flags. */
agora_options cli_runner_options(const cli_runner_opts *o, const char *program, int events, agora_event_fn fn,
                                 void *ctx);
/* A request event answered as a scripted run answers it, there being nobody to ask: a tool call is
 * denied (--yes approved it already, AGORA_AUTO_APPROVE), ask_human gets the next line of --answers
 * (answers, n, *next as for cli_answers_next). 1 when ev was a request, else 0. */
int cli_runner_request(const agora_event *ev, char *const *answers, size_t n, size_t *next);
/* The exit status of run and say from what the run came to, saying on stderr what failed: 1 when a save
 * failed, else 3 when the world's budget was spent (tokens and usd spent), else 1 when an LLM call
 * failed, else 0. */
int cli_run_status(int budget_spent, int64_t tokens, double usd, size_t failed, size_t unsaved);
/* cli_run_status from w's counters (agora_budget_spent, agora_failed_calls, agora_unsaved). */
int cli_runner_status(const agora_world *w);

#endif
