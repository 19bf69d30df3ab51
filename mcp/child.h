/* MCP server processes: spawning one (its own process group, so the console's Ctrl-C does not reach
 * it), watching it from its owner's libevent loop (its pidfd, never a blocking wait, no SIGCHLD: any
 * number of loops may have children), and handing one its owner let go of to the process-wide reaper
 * (mcp/reaper.h), which stops it (SIGTERM after a grace period, SIGKILL after another) and reaps it on
 * a thread of its own, so that nothing of it stays on the owner's loop. */
#ifndef AG_MCP_CHILD_H
#define AG_MCP_CHILD_H

#include <stddef.h>
#include <sys/types.h>

#include "common/error.h"

struct event_base;

typedef struct mcp_child mcp_child;

/* The child exited (status as from waitpid); runs from the owner's loop, once, unless released before;
 * the record is freed by then. */
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
 * server to end): c is freed and nothing of it stays on the loop; the reaper sends SIGTERM after
 * grace_ms, SIGKILL grace_ms later, and reaps it. From the owner's loop's thread. */
void mcp_child_release(mcp_child *c, long grace_ms);
/* Children spawned and not reaped yet (held or released, on every loop). */
size_t mcp_child_count(void);
/* Of those, the ones released (their owner let go): what a stop waits for. */
size_t mcp_child_released_count(void);
/* Waits up to ms until every released child has ended by itself and is reaped; 1 when none is left.
 * Blocks the calling thread (not a loop: the reaper needs none). */
int mcp_child_wait_released(long ms);
/* SIGTERM now to each released child not signalled yet, SIGKILL to what is left of them after ms, and
 * waits until they are reaped (ms and a second at most). Children still held by their owner (another
 * world's servers) are left alone. Blocks the calling thread. */
void mcp_child_drain(long ms);

/* Resolves a command as execvp would (a name with no '/' is looked up in PATH): *out is new (caller
 * frees). AG_ERR_NOT_FOUND when there is no such executable. */
int mcp_child_which(const char *command, char **out);

#endif
