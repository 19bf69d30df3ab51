/* MCP server processes: spawning one (its own process group, so the console's Ctrl-C does not reach
 * it), reaping every child from the libevent loop (SIGCHLD + waitpid WNOHANG, never a blocking wait),
 * and stopping one its owner let go of: SIGTERM after a grace period, SIGKILL after another. The table
 * of children is process-wide, as SIGCHLD is. */
#ifndef AG_MCP_CHILD_H
#define AG_MCP_CHILD_H

#include <stddef.h>
#include <sys/types.h>

#include "common/error.h"

struct event_base;

typedef struct mcp_child mcp_child;

/* The child exited (status as from waitpid); runs from the loop, once, unless released before. */
typedef void (*mcp_child_exit_fn)(void *ud, int status);

/* What to run. Everything borrowed for the call. fd_in/fd_out/fd_err become the child's 0/1/2. */
typedef struct mcp_spawn {
  const char *path;   /* the program (already resolved) */
  char *const *argv;  /* NULL-terminated */
  char *const *envp;  /* NULL-terminated */
  const char *cwd;    /* NULL: inherit */
  int fd_in, fd_out, fd_err;
} mcp_spawn;

int mcp_child_spawn(struct event_base *base, const mcp_spawn *sp, mcp_child_exit_fn fn, void *ud,
                    mcp_child **out, ag_errmsg *em);
pid_t mcp_child_pid(const mcp_child *c);
/* The owner lets go (no callback afterwards; its stdin should be closed already, which asks an MCP
 * server to end): SIGTERM after grace_ms, SIGKILL grace_ms later; the record frees itself when reaped. */
void mcp_child_release(mcp_child *c, long grace_ms);
/* Children spawned and not reaped yet. */
size_t mcp_child_count(void);
/* Of those, the ones released (their owner let go): what a stop waits for. */
size_t mcp_child_released_count(void);
/* Runs the loop until every released child is reaped; after ms, SIGKILLs what is left of them (and still
 * reaps it). Children still held by their owner (another world's servers on the loop) are left alone.
 * From a callback of the running loop (which cannot be run again) it only sends the SIGTERMs. */
void mcp_child_drain(struct event_base *base, long ms);

/* Resolves a command as execvp would (a name with no '/' is looked up in PATH): *out is new (caller
 * frees). AG_ERR_NOT_FOUND when there is no such executable. */
int mcp_child_which(const char *command, char **out);

#endif
