/* The agents thinking, as a terminal display tracks them from their llm-start, llm-chunk and llm-error
 * events, and the live lines it draws at the bottom of stdout: one dim line per streaming reply, until
 * the whole message replaces it. Shared by run's screen (fed from the bus) and say's (fed from
 * libagora's events), so both show the same thing. */
#ifndef AG_CLI_LIVE_LINES_H
#define AG_CLI_LIVE_LINES_H

#include <stddef.h>

#define LIVE_AGENTS 64  /* agents tracked by name; more are counted */
#define LIVE_TAIL 512   /* bytes of a streaming reply kept for its live line */

typedef struct live_agent {
  char id[64];
  char tail[LIVE_TAIL]; /* the end of the reply so far, control characters made spaces */
  size_t len;
} live_agent;

typedef struct live_lines {
  live_agent agents[LIVE_AGENTS]; /* thinking, in the order they started */
  size_t n;
  size_t shown; /* live lines on the screen */
} live_lines;

/* Whether agent id is still thinking, asked of the world (ctx is the caller's). */
typedef int (*live_thinking_fn)(const void *ctx, const char *id);

/* id began an LLM call (llm-start): tracked, its text so far empty. */
void live_lines_start(live_lines *l, const char *id);
/* Streamed text of id's reply (llm-chunk); text is copied. */
void live_lines_chunk(live_lines *l, const char *id, const char *text);
/* id stopped thinking (llm-error, agent-removed). */
void live_lines_forget(live_lines *l, const char *id);
/* A whole message from sender replaces its live line. */
void live_lines_message(live_lines *l, const char *sender);
/* An agent can stop thinking without an event (a cancelled call): forgets those fn says are not. */
void live_lines_prune(live_lines *l, live_thinking_fn fn, const void *ctx);
/* The status line's names: "a, b, c +N" of the first few tracked, N from thinking (the world's count). */
void live_lines_who(const live_lines *l, size_t thinking, char *who, size_t cap);
/* Takes the live lines away (the cursor returns to where they started), and draws them again. */
void live_lines_hide(live_lines *l);
void live_lines_show(live_lines *l);

#endif
