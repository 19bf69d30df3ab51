/* The set-up `run` and `say` share (see runner.h). */
#include "cli/runner.h"

#include "cli/args.h"
#include "cli/cli.h"
#include "common/error.h"

#include <errno.h>
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

agora_options cli_runner_options(const cli_runner_opts *o, const char *program, int events, agora_event_fn fn,
                                 void *ctx) {
  unsigned flags = AGORA_NOTES | AGORA_OPTIONS_3 | AGORA_OPTIONS_4 | (o->no_save ? AGORA_NO_SAVE : 0) |
                   (o->yes ? AGORA_AUTO_APPROVE : 0) | (events ? AGORA_STREAM : 0);
  agora_options opts = {.flags = flags, .program = program, .on_event = fn, .on_event_ctx = ctx};
  cli_options_fill(&opts, &o->allow, &o->over, &o->nats);
  return opts;
}

int cli_runner_request(const agora_event *ev, char *const *answers, size_t n, size_t *next) {
  agora_world *w = agora_event_world(ev);
  const char *text;
  if (agora_event_type(ev) != AGORA_EVENT_REQUEST) return 0;
  if (strcmp(agora_event_kind(ev), "ask-human")) agora_answer(w, agora_event_request(ev), 0);
  else {
    int allow = cli_answers_next(answers, n, next, &text);
    agora_reply(w, agora_event_request(ev), allow, text);
  }
  return 1;
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

int cli_runner_status(const agora_world *w) {
  int64_t tokens = 0;
  double usd = 0;
  int spent = agora_budget_spent(w, &tokens, &usd);
  return cli_run_status(spent, tokens, usd, agora_failed_calls(w), agora_unsaved(w));
}
