/* Agora's one error type: every fallible function returns an ag_err (0 = success) and, where a user
 * needs detail ("agents[1].provider: unknown provider 'nope'"), fills an ag_errmsg the caller owns. */
#ifndef AG_ERROR_H
#define AG_ERROR_H

#include <stdarg.h>
#include <stddef.h>

typedef enum ag_err {
  AG_OK = 0,
  AG_ERR_NOMEM = -1,     /* allocation failed */
  AG_ERR_INVALID = -2,   /* bad input: a world file, snapshot, argument (exit 2) */
  AG_ERR_IO = -3,        /* file or socket error */
  AG_ERR_STORAGE = -4,   /* LMDB failure */
  AG_ERR_LLM = -5,       /* the LLM call failed after retries */
  AG_ERR_NOT_FOUND = -6, /* no such chat, agent, world */
  AG_ERR_TOO_BIG = -7,   /* input past its size cap */
  AG_ERR_EXISTS = -8,    /* duplicate id */
  AG_ERR_VERSION = -9,   /* data from a newer Agora */
  AG_ERR_CANCELLED = -10,/* the operation was cancelled (Ctrl-C, agent removed) */
  AG_ERR_STATE = -11     /* not possible in the current state (e.g. loop stuck) */
} ag_err;

/* Static description of an error code; never NULL. */
const char *ag_strerror(int err);

/* Detail for a user, written by the function that failed. Callers own it (usually on the stack). */
typedef struct ag_errmsg {
  char text[512];
} ag_errmsg;

/* printf-style; em may be NULL (detail discarded). Returns err so callers can `return ag_fail(...)`. */
int ag_fail(ag_errmsg *em, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Exit status for an error per docs/cli.md: 0 ok, 2 bad usage or input, 1 anything else. */
int ag_exit_code(int err);

/* How a program tells the person it failed: "agora: <message>" on stderr; returns ag_exit_code(err). */
int ag_report(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int ag_vreport(int err, const char *fmt, va_list ap);

#endif
