/* Terminal mode: libedit's callback interface on the loop's stdin event, with history and completion
 * of commands, agents and chats. Without libedit, stubs: the console is always piped. */
#include "console/console_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>

/* ---- terminal mode (libedit) ---- */

#ifdef AGORA_HAVE_LIBEDIT

static void tty_on_line(char *line);

/* Live lines, then a fresh prompt with an empty line. */
static void prompt_start(console *c) {
  con_screen_show(c);
  con_prompt_update(c);
  rl_callback_handler_install(c->prompt, tty_on_line);
  rl_point = rl_end = 0; /* the new line is empty; libedit says so only after the next key */
  c->rl_on = 1;
  c->input = INPUT_PROMPT;
  fflush(stdout);
}

void con_tty_clear_input(console *c) {
  con_screen_hide(c);
  rl_callback_handler_remove();
  c->rl_on = 0;
  prompt_start(c);
}

static void history_add(console *c, const char *line) {
  if (!line[strspn(line, " \t")]) return;
  add_history(line);
  write_history(c->history);
}

/* Libedit left raw mode to hand over the entered line; the next prompt goes up (raw again) before the
 * line is handled, so that keys typed meanwhile stay keys: a Ctrl-D typed to a cooked terminal would be
 * taken by it as end of file and lost. */
void con_tty_resume(console *c) {
  if (c->tty && !c->rl_on && !c->quit) prompt_start(c);
}

/* libedit's line handler: line is the entered text (ours to free), or NULL for Ctrl-D. The screen is
 * redrawn once at the end. */
static void tty_on_line(char *line) {
  console *c = the_console;
  c->rl_on = 0;
  c->input = INPUT_ENTERED;
  c->entered_rows = 0; /* Ctrl-D: libedit echoed ^D on the prompt's row */
  if (!line) {
    c->quit = 1;
    con_screen_hide(c);
    return;
  }
  c->entered_rows = (con_text_cols(c->prompt, strlen(c->prompt)) + con_text_cols(line, strlen(line))) / con_term_size(0) + 1;
  history_add(c, line);
  c->busy = 1;
  con_handle_line(c, line);
  free(line);
  c->busy = 0;
  con_screen_hide(c);
  con_screen_show(c);
}

static void tty_on_stdin(console *c) {
  c->ctrl_c = 0;
  if (con_input_feed(c, STDIN_FILENO)) c->quit = 1;
}

void con_cands_clear(console *c) {
  for (size_t i = 0; i < c->n_cands; i++) free(c->cands[i]);
  c->n_cands = 0;
}

void con_cands_add(console *c, const char *prefix, const char *word) {
  if (c->n_cands == COMPLETE_MAX) return;
  size_t n = strlen(prefix) + strlen(word) + 1;
  char *s = malloc(n);
  if (!s) return;
  snprintf(s, n, "%s%s", prefix, word);
  c->cands[c->n_cands++] = s;
}

static void cands_agents(console *c, const char *prefix) {
  ag_errmsg em = {""};
  cJSON *agents = con_agents(c, &em);
  const cJSON *a;
  cJSON_ArrayForEach(a, agents) con_cands_add(c, prefix, con_str(a, "id") ? con_str(a, "id") : "");
  cJSON_Delete(agents);
}

/* What the word at start of line may become: commands first on the line, chat ids after /load,
 * /delete and /export, agent ids after /remove and '@', providers after /add NAME. */
static void cands_collect(console *c, const char *line, size_t start, const char *text) {
  con_cands_clear(c);
  if (text[0] == '@') {
    cands_agents(c, "@");
    return;
  }
  size_t lead = strspn(line, " \t"), len = strlen(line);
  if (line[lead] != '/') return;
  if (start <= lead) {
    for (size_t i = 0; con_command_name(i); i++) con_cands_add(c, "", con_command_name(i));
    return;
  }
  char cmd[16];
  snprintf(cmd, sizeof cmd, "%.*s", (int)strcspn(line + lead, " \t"), line + lead);
  int word = 0; /* index of the word being completed */
  for (size_t i = lead; i < start && i < len; i++)
    if ((line[i] == ' ' || line[i] == '\t') && line[i + 1] != ' ' && line[i + 1] != '\t') word++;
  if (word == 1 && (!strcmp(cmd, "/load") || !strcmp(cmd, "/delete") || !strcmp(cmd, "/export"))) {
    con_chat_ids(c);
  } else if (word == 1 && !strcmp(cmd, "/remove")) {
    cands_agents(c, "");
  } else if (word == 2 && !strcmp(cmd, "/add")) {
    for (size_t k = 0; con_provider_name(k); k++) con_cands_add(c, "", con_provider_name(k));
  }
}

static char *complete_next(const char *text, int state) {
  static size_t i;
  console *c = the_console;
  size_t n = strlen(text);
  if (state == 0) i = 0;
  while (i < c->n_cands) {
    const char *s = c->cands[i++];
    if (strncmp(s, text, n) == 0) return strdup(s);
  }
  return NULL;
}

static char **tty_complete(const char *text, int start, int end) {
  (void)end;
  console *c = the_console;
  rl_attempted_completion_over = 1; /* never fall back to file names */
  cands_collect(c, rl_line_buffer ? rl_line_buffer : "", start > 0 ? (size_t)start : 0, text);
  return c->n_cands ? rl_completion_matches(text, complete_next) : NULL;
}

/* libedit draws wide characters (the prompt's '·', titles) only in a UTF-8 locale; terminals are. */
static void tty_locale(void) {
  setlocale(LC_CTYPE, "");
  if (strcmp(nl_langinfo(CODESET), "UTF-8") != 0) setlocale(LC_CTYPE, "C.UTF-8");
}

static void tty_setup(console *c) {
  tty_locale();
  rl_readline_name = "agora";
  rl_catch_signals = 0; /* SIGINT and friends are the console's (its signal pipe) */
  rl_catch_sigwinch = 0;
  rl_basic_word_break_characters = " \t\n"; /* '@' belongs to the word, so @al completes */
  rl_attempted_completion_function = tty_complete;
  con_input_install(); /* before rl_initialize, which takes the getc hook */
  rl_initialize();
  snprintf(c->history, sizeof c->history, "%s/console_history", agora_world_db(c->w));
  int fd = open(c->history, O_WRONLY | O_CREAT | O_APPEND, 0600); /* private, like the database */
  if (fd >= 0) close(fd);
  stifle_history(HISTORY_MAX);
  read_history(c->history);
}

int con_tty_run(console *c) {
  con_title_refresh(c);
  tty_setup(c);
  con_note(c, "agora console: type a message, /help for commands, Ctrl-D to quit");
  if (c->resumed) con_chat_announce(c, "chat-resumed", 1);
  prompt_start(c);
  while (!c->quit)
    if (con_wait(c, 1, -1) && !c->quit) tty_on_stdin(c);
  con_screen_hide(c);
  rl_callback_handler_remove(); /* leaves raw mode */
  con_input_end();
  c->rl_on = 0;
  c->n_live = 0; /* replies still streaming are cancelled on the way out: their lines must not come back */
  return 0;
}

#else

void con_tty_resume(console *c) { (void)c; }
void con_cands_add(console *c, const char *prefix, const char *word) {
  (void)c;
  (void)prefix;
  (void)word;
}
int con_tty_run(console *c) {
  (void)c;
  return 0;
}

#endif
