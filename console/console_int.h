/* The console's insides, shared by its files: console.c (opening, signals, the loop), console_cmd.c (the
 * commands), console_agent.c (one agent's settings), console_clock.c, console_edit.c, console_world.c (the
 * world's JSON read back), console_screen.c (the terminal screen), console_tty.c (libedit), console_input.c,
 * console_lines.c (piped input) and console_ask.c (approvals). Not for use outside the console. Every call
 * into the world goes through include/agora.h. */
#ifndef AG_CONSOLE_INT_H
#define AG_CONSOLE_INT_H

#include "common/error.h"
#include "console/console.h"

#include <stdint.h>
#include <stdio.h>

#ifdef AGORA_HAVE_LIBEDIT
#include <editline/readline.h>
#endif

#define CON_TEXT_MAX (1024 * 1024)  /* the longest message text, in bytes (the library's cap) */
#define LINE_CAP (CON_TEXT_MAX + 1) /* bytes of one input line with its newline; longer lines are skipped */
#define LIVE_MAX 8                  /* agents streaming at once that get a live line */
#define LIVE_TAIL 512               /* bytes of a stream kept for its live line (only the end shows) */
#define TITLE_COLS 40               /* columns of the chat title in the prompt */
#define RECENT 10                   /* messages shown when a chat is resumed or loaded on a terminal */
#define HISTORY_MAX 1000            /* lines kept in console_history */
#define COMPLETE_MAX 256            /* completion candidates */
#define TICK_MS 50                  /* how often a blocking run looks at the signal pipe */

/* Where the input line is on the screen, so that it can be erased before printing above it. */
typedef enum input_state {
  INPUT_NONE,    /* not shown: the cursor is at the start of a clean row */
  INPUT_PROMPT,  /* the prompt and the line being typed; the cursor is in it */
  INPUT_ENTERED  /* a line just entered: the cursor is on the row below it */
} input_state;

/* One agent's reply while it streams: the end of its text, for the live line. */
typedef struct live_stream {
  char agent[AGORA_ID_MAX];
  char tail[LIVE_TAIL]; /* NUL-terminated; control characters made spaces */
  size_t len;
} live_stream;

/* A tool call waiting for the person's answer (an AGORA_EVENT_REQUEST). */
typedef struct console_ask {
  uint64_t id;
  char *agent, *tool, *args;
  char *question; /* ask_human's question (the line is its answer); NULL for an approval */
} console_ask;

typedef struct console {
  agora_world *w;
  console_printer pr;
  int sig[2]; /* the signal pipe: a handler writes the signal's number, the loop reads it */
  int tty;    /* a person at a terminal: libedit and live lines */
  int color;  /* dim the console's own notes */
  int quit;
  int view;              /* joined to a world on NATS (--nats) */
  int resumed;           /* the chat at start continues a saved one (else it is new) */
  unsigned long printed; /* lines of output so far (a command that printed ends with a blank line) */
  /* terminal mode */
  int rl_on; /* libedit's line handler is installed */
  int busy;  /* handling an entered line: the screen is redrawn once at its end */
  input_state input;
  int entered_rows;
  int live_shown; /* live rows on the screen above the input */
  int ctrl_c;     /* Ctrl-C presses in a row at an empty, idle prompt */
  live_stream live[LIVE_MAX];
  size_t n_live;
  char prompt[320];
  char title[1024]; /* the current chat's title for the prompt ("no chat"), read again when it may change */
  char history[4096];
  char *cands[COMPLETE_MAX];
  size_t n_cands;
  /* approvals waiting for the person, oldest first: the next input line answers the first */
  console_ask *asks;
  size_t n_asks, cap_asks;
  int ask_open; /* lines mode: the first question is printed and its answer not yet */
  /* lines mode */
  char *in;
  size_t in_len, in_cap;
  int in_eof, in_direct, in_skip;
  const char *file; /* the world file opened (borrowed from the options), NULL for a stored world */
  int file_noted;   /* the note that the file's settings win next time was given (console_cmd.c) */
} console;

/* libedit's callbacks carry no user pointer: the one console of the process (console.c). */
extern console *the_console;

/* console.c: the loop. Waits (poll) until stdin is readable (want_in), a signal came or the world has
 * work, up to max_ms (-1: no limit besides the world's timers); handles the signals, then steps the world.
 * Returns 1 when stdin is readable. */
int con_wait(console *c, int want_in, long max_ms);
/* Handles the signals the pipe holds (from con_wait, or a tick during a blocking run). */
void con_signals(console *c);
/* Runs the world until it is quiet (or a question waits, or Ctrl-C), looking at signals meanwhile. */
int con_run_quiet(console *c);

/* console_world.c: what the world hands back as JSON, read back, and the library's refusals. */
/* rc, and on failure em holds agora_errmsg without the library function's name ("agora_chat_load: "):
 * a refusal names the command the person typed, which the caller puts in front. */
int con_lib_fail(int rc, ag_errmsg *em);
/* The JSON a call handed back (text, which is freed), parsed; NULL on failure with em set (rc the call's). */
cJSON *con_json_take(int rc, char *text, ag_errmsg *em);
/* The agents as agora_agents lists them (the caller's to cJSON_Delete), NULL on failure. */
cJSON *con_agents(console *c, ag_errmsg *em);
/* The world's settings as agora_settings gives them (the caller's), NULL on failure. */
cJSON *con_settings(console *c, ag_errmsg *em);
/* The agent named (an id or a name, "@" allowed) in agents, or NULL with em saying so. */
const cJSON *con_agent_find(const cJSON *agents, const char *name, ag_errmsg *em);
/* The world's turn limit (its stored settings). */
int con_turn_limit(console *c);
/* A member's string, or NULL. */
const char *con_str(const cJSON *j, const char *name);
/* A member's number, or dflt. */
double con_num(const cJSON *j, const char *name, double dflt);
/* The current chat's row as agora_chats lists it (the caller's), or NULL when there is none. */
cJSON *con_current_chat(console *c);
/* Reads the current chat's title ("no chat" without one) into c->title, for the prompt: after a command,
 * and after an event that may change it (a title, another chat). */
void con_title_refresh(console *c);
/* An event line of the console's own ({"type":"event","event":kind,"world","chat"}), to which the caller
 * adds the event's fields; NULL when out of memory. */
cJSON *con_event_new(console *c, const char *kind);

/* console_screen.c: the terminal screen — live lines above the input line, and printing above both. */
int con_term_size(int want_rows);
int con_text_cols(const char *s, size_t n);
#ifdef AGORA_HAVE_LIBEDIT
void con_prompt_update(console *c);
#endif
void con_screen_hide(console *c);
void con_screen_show(console *c);
void con_print(console *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void con_eprint(console *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A command's error: one line on stderr. */
void con_error(console *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A note from the console itself, shaped like an event line ("-- text"). */
void con_note(console *c, const char *text);
/* An event of the console's own, printed like the world's (j borrowed; NULL is ignored). */
void con_event(console *c, const cJSON *j);
/* Stored messages (a JSON array, borrowed) printed as the transcript prints them; seqs: numbered. */
void con_entries(console *c, const cJSON *list, int seqs);
void con_live_prune(console *c);
/* The transcript: every message and event the world hands its subscriber (requests go to console_ask.c). */
void con_on_event(const agora_event *ev, void *ctx);

/* console_cmd.c: the commands, and lines typed or read. */
/* Says which chat is current now ("chat-resumed", "chat-loaded") and, on a terminal, shows its last
 * messages (show_recent only: the event itself was printed already). */
void con_chat_announce(console *c, const char *kind, int event);
/* A line typed or read: an approval's answer, a command, or a message from the human. */
void con_handle_line(console *c, char *line);
/* The i-th command's name ("/help", ...), NULL past the last: for completion. */
const char *con_command_name(size_t i);
/* Adds the world's chat ids as completion candidates. */
void con_chat_ids(console *c);
/* s without leading and trailing white space (in place). */
char *con_trim(char *s);
/* Splits the first word off *p (which moves past it); "" when none. */
char *con_next_word(char **p);

/* console_agent.c: one agent's settings (/agents, /agent, /add, /set, /clear, /remove). */
int con_cmd_agents(console *c, char *args, ag_errmsg *em);
int con_cmd_agent(console *c, char *args, ag_errmsg *em);
int con_cmd_add(console *c, char *args, ag_errmsg *em);
int con_cmd_set(console *c, char *args, ag_errmsg *em);
int con_cmd_clear(console *c, char *args, ag_errmsg *em);
int con_cmd_remove(console *c, char *args, ag_errmsg *em);
/* The providers an agent may name (NULL past the last), for /add and its completion. */
const char *con_provider_name(size_t i);

/* console_clock.c: the world's clock, /clock, /advance, /branch, /budget. */
/* " [2026-03-01 09:00]" on a virtual clock, else "" (for the prompt). */
void con_clock_label(console *c, char *out, size_t cap);
int con_cmd_clock(console *c, char *args, ag_errmsg *em);
int con_cmd_advance(console *c, char *args, ag_errmsg *em);
int con_cmd_branch(console *c, char *args, ag_errmsg *em);
int con_cmd_budget(console *c, char *args, ag_errmsg *em);

/* console_edit.c: /edit SEQ TEXT and /retry (cut the chat, send again). */
int con_cmd_edit(console *c, char *args, ag_errmsg *em);
int con_cmd_retry(console *c, char *args, ag_errmsg *em);

/* console_tty.c: terminal mode (libedit, history, completion). */
int con_tty_run(console *c);
/* console_input.c: the bounded reader between the terminal and libedit (libedit only). */
#define CON_LINE_MAX 1000 /* bytes in a line typed at a terminal (libedit breaks on a few KB) */
void con_input_install(void);
void con_input_end(void);
/* Reads what the terminal sent and hands it to libedit; -1 when the terminal hung up. */
int con_input_feed(console *c, int fd);
void con_tty_resume(console *c);
void con_cands_add(console *c, const char *prefix, const char *word);
#ifdef AGORA_HAVE_LIBEDIT
void con_cands_clear(console *c);
void con_tty_clear_input(console *c);
#endif

/* console_lines.c: piped input, one line at a time. */
int con_lines_run(console *c);

/* console_ask.c: requests waiting for the person's next line. */
void con_ask(console *c, const agora_event *ev);
void con_withdrawn(console *c, const agora_event *ev);
void con_ask_answer(console *c, const char *line);
void con_ask_show(console *c);
void con_ask_clear(console *c);

#endif
