/* The interactive console (docs/cli.md "agora console"): `agora console [WORLD.json] [--db DIR]`. A person talks to a
 * stored world: plain lines are published as the human ("//text" sends "/text"), commands start with '/',
 * replies stream in while the person types, and everything is saved as in `agora run`. With WORLD.json the
 * world is loaded (or updated) and its current chat continues (a new chat when it has none); without it
 * the database must hold exactly one world (else exit 2).
 *
 * The console talks to the world through libagora alone (include/agora.h): it opens the world with
 * agora_world_open, prints what its subscriber is handed, answers AGORA_EVENT_REQUESTs with
 * agora_answer/agora_reply, and drives the world's loop from its own poll over stdin, a signal pipe and
 * agora_fd (agora_next_timeout, agora_step).
 *
 * Two modes, chosen at start:
 *   - terminal (stdin and stdout are terminals, libedit built in): libedit's readline-compatible callback
 *     interface reads keys when the poll finds fd 0 readable, so the world never waits for the terminal.
 *     Above the input line, one transient line per agent shows its reply as it streams
 *     ("alice: ...the end of the text so far"); the published message replaces it as a normal
 *     "sender: text" paragraph. Ctrl-C cancels the replies in flight; with none in flight it clears the
 *     typed line, and at an empty prompt twice in a row it quits (a Ctrl-C that cancelled something does
 *     not count). Ctrl-D or /quit quits. Tab completes commands, chat ids and @names. History lives in
 *     DIR/console_history (mode 0600). On resuming or loading a chat its last messages are shown.
 *   - lines (anything else, e.g. a pipe): each line is handled in turn and the console waits until the
 *     world is quiet before the next one; EOF, /quit or an idle Ctrl-C quits. Output is the plain
 *     transcript plus command output, so `printf '@alice hi\n/chats\n' | agora console w.json --db D`
 *     is a script.
 *
 * Besides the world's events the console prints events of its own, in the same "-- type: k=v" form:
 * chat-resumed and chat-loaded (id, title, messages) and approval (agent, tool, approved, ended). /add,
 * /remove and /turnlimit also update the world's stored settings, so opening it again without its file
 * keeps them. Command errors are one line on stderr ("error: /load: no chat 'x' in world 'w'") and the
 * console goes on. Exit status: 0, or 2 for bad usage or a bad world file, 1 when storage fails (also when
 * a message could not be saved). */
#ifndef AG_CONSOLE_H
#define AG_CONSOLE_H

#include "agora.h"

#include <cjson/cJSON.h>

/* How the console's output is printed: the transcript's form belongs to the command line (cli/), which
 * hands its printer down. ctx is borrowed for console_run. */
typedef struct console_printer {
  /* A message or event of the world, as `agora run` prints it (requests are not printed). */
  void (*event)(void *ctx, const agora_event *ev);
  /* A message or event object as `agora run --json` prints it (a stored message, or an event of the
   * console's own); seqs: a message starts with its number ("#3 "). j is borrowed. */
  void (*entry)(void *ctx, const cJSON *j, int seqs);
  void *ctx;
} console_printer;

/* What `agora console` was given (parsed by cli/; strings borrowed from argv). */
typedef struct console_opts {
  const char *world; /* a world file or a stored world's id or name; NULL: the database's only world */
  const char *db;    /* NULL: the default database */
  /* The library's options for the command line's flags (overrides, allow lists, the LLM cache, NATS with
   * its API-4 flag); the console adds its own flags (notes, streaming, the viewer, the subscriber). */
  agora_options open;
  console_printer print;
} console_opts;

/* Runs the console on the world o names; returns the process exit status. */
int console_run(const console_opts *o);

#endif
