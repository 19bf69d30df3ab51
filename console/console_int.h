/* The console's insides, shared by its files: console.c (opening, signals, the run), console_cmd.c (the
 * commands), console_screen.c (the terminal screen), console_tty.c (libedit), console_lines.c (piped
 * input) and console_ask.c (approvals). Not for use outside the console. */
#ifndef AG_CONSOLE_INT_H
#define AG_CONSOLE_INT_H

#include "chat/session.h"
#include "runtime/db.h"
#include "runtime/nats_join.h"
#include "runtime/output.h"
#include "runtime/report.h"
#include "runtime/runtime.h"
#include "world/clock.h"

#include <event2/event.h>
#include <stdint.h>
#include <stdio.h>

#ifdef AGORA_HAVE_LIBEDIT
#include <editline/readline.h>
#endif

#define LINE_CAP (CHAT_TEXT_LEN + 1) /* bytes of one input line with its newline; longer lines are skipped */
#define LIVE_MAX 8                    /* agents streaming at once that get a live line */
#define LIVE_TAIL 512                 /* bytes of a stream kept for its live line (only the end shows) */
#define TITLE_COLS 40                 /* columns of the chat title in the prompt */
#define RECENT 10                     /* messages shown when a chat is resumed or loaded on a terminal */
#define HISTORY_MAX 1000              /* lines kept in console_history */
#define COMPLETE_MAX 256              /* completion candidates */
#define FINISH_MS 500                 /* the longest the console waits for cancelled replies on the way out */


/* Where the input line is on the screen, so that it can be erased before printing above it. */
typedef enum input_state {
  INPUT_NONE,    /* not shown: the cursor is at the start of a clean row */
  INPUT_PROMPT,  /* the prompt and the line being typed; the cursor is in it */
  INPUT_ENTERED  /* a line just entered: the cursor is on the row below it */
} input_state;

/* One agent's reply while it streams: the end of its text, for the live line. */
typedef struct live_stream {
  char agent[CHAT_ID_MAX];
  char tail[LIVE_TAIL]; /* NUL-terminated; control characters made spaces */
  size_t len;
} live_stream;

/* A tool call waiting for the person's answer. */
typedef struct console_ask {
  uint64_t id;
  char *agent, *tool, *args;
  char *question; /* ask_human's question (the line is its answer); NULL for an approval */
} console_ask;

typedef struct console {
  store *st;
  runtime *rt;
  struct {
    struct event_base *base;
    world *w;
    chat_session *cs;
  } cw; /* borrowed from rt */
  output *out;
  struct event *ev_in;
  struct event *ev_sig[5];
  int tty;   /* a person at a terminal: libedit and live lines */
  int color; /* dim the console's own notes */
  int quit;
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
  world_clock *clock; /* the world's schedule and clock (borrowed from rt) */
  rt_nats_join *nats; /* --nats: joined to the world on NATS (else NULL; borrowed from rt) */
  char deleted[CHAT_ID_MAX]; /* the chat /delete deleted (its id, though a prefix was typed) */
  const char *file; /* the world file opened (borrowed from the options), NULL for a stored world */
  int file_noted;   /* the note that the file's settings win next time was given (console_cmd.c) */
} console;

/* libedit's callbacks carry no user pointer: the one console of the process (console.c). */
extern console *the_console;

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
/* An event of the console's own (not on the bus), printed like the bus events. e is borrowed. */
void con_event(console *c, const world_event *e);
void con_live_prune(console *c);
/* The transcript: every bus message and event at the output phase (a bus handler; ud is the console). */
void con_on_bus(void *ud, bus_topic topic, void *payload);

/* console_cmd.c: the commands, and lines typed or read. */
void con_chat_announce(console *c, ev_kind kind);
/* --nats: the stream moved to chat (already current in the session); ud is the console. */
void con_stream_chat(void *ud, const char *chat);
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

/* console_agent.c: one agent's settings (/agent, /set, /clear, /add --like); changes are stored with
 * the world (chat_session_save_world). */
int con_cmd_agent(console *c, char *args, ag_errmsg *em);
int con_cmd_set(console *c, char *args, ag_errmsg *em);
int con_cmd_clear(console *c, char *args, ag_errmsg *em);
/* Adds agent name with other's settings (prompt, provider, model, ...), never its replies. */
int con_add_like(console *c, const char *name, const char *other, ag_errmsg *em);

/* console_clock.c: the world's clock, /clock, /advance, /branch. */
/* " [2026-03-01 09:00]" on a virtual clock, else "" (for the prompt). */
void con_clock_label(console *c, char *out, size_t cap);
int con_cmd_clock(console *c, char *args, ag_errmsg *em);
int con_cmd_advance(console *c, char *args, ag_errmsg *em);
int con_cmd_branch(console *c, char *args, ag_errmsg *em);

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

/* console_ask.c: approvals waiting for the person's next line (a world_approver). */
void con_ask(void *ud, const world_approval *req);
void con_withdrawn(void *ud, uint64_t id, int timed_out);
void con_ask_answer(console *c, const char *line);
void con_ask_show(console *c);
void con_ask_clear(console *c);

#endif
