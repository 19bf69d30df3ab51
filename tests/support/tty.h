/* Driving `agora` on a pseudo-terminal, as a person at a terminal would: the binary runs on the slave
 * side (forkpty), the test types into the master and reads the screen with poll and a deadline; the
 * text has escape sequences, '\r' and bells stripped, so expectations are plain strings. */
#ifndef AG_TEST_TTY_H
#define AG_TEST_TTY_H

#include <stddef.h>
#include <sys/types.h>

#define WAIT_MS 8000 /* the most any expectation waits (a pass takes far less), times wait_budget_factor() */

typedef struct tty {
  pid_t pid;
  int fd;      /* the master side; -1 once the test closed it */
  char *raw;   /* everything the console wrote */
  size_t len, cap;
  char *text;  /* raw without escape sequences, '\r' and bells */
  size_t seen; /* expectations look after this offset in text */
  int closed;  /* the slave side is gone */
} tty;

long long tty_now_ms(void);
/* 1 when this machine has no pseudo-terminals (openpty fails), after printing the suite's "skipped" lines:
 * main then returns 0. */
int tty_skip_without_pty(void);
/* Starts $AGORA_BIN (else ./agora) with args (NULL-terminated, without argv[0]) on a 24x100 pty, with
 * TERM=xterm, HOME=home (no ~/.editrc of the user), no LANG, LC_*, NO_COLOR or AGORA_HOME, plus
 * extra_env ("NAME=value", NULL-terminated; may be NULL). 0 on success. */
int tty_start(tty *t, const char *home, const char *const *args, const char *const *extra_env);
/* Reads what the console wrote for up to ms; returns 0 once the pty closed (the child is gone). */
int tty_pump(tty *t, int ms);
/* Waits (up to WAIT_MS) until needle shows after what earlier expectations matched; 1 when it did, else
 * prints what came and returns 0. */
int tty_expect(tty *t, const char *needle);
/* The same until needle has shown n times after it, in any order with other text (the replies of agents
 * answering at once); what is looked at next starts after the n-th. */
int tty_expect_count(tty *t, const char *needle, size_t n);
/* Types s into the terminal. */
void tty_send(tty *t, const char *s);
/* Types s, then waits as tty_expect does until needle shows: one step of a conversation. 1 when it did. */
int tty_send_expect(tty *t, const char *s, const char *needle);
/* Reads for ms whatever comes (to see that something does not). */
void tty_idle(tty *t, int ms);
/* The child's exit status once it ends: its code, 128+signal, or -1 when it was killed after WAIT_MS. */
int tty_exit(tty *t);
/* The same within ms, without reading the terminal (whose master may be closed). */
int tty_exit_within(tty *t, int ms);
/* Closes the master side, as a terminal window closing does: the child's terminal hangs up. */
void tty_hang_up(tty *t);
void tty_close(tty *t);
/* The id after "<event>: id=" at or after the last expectation's match; 0 when found. */
int tty_event_id(tty *t, const char *event, char id[64]);

#endif
