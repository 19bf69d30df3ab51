/* The process-wide reaper of MCP server processes their owner let go of: a thread of the library's own
 * (started when it has something to watch, gone when it has nothing), so that no loop of the program's
 * holds them. Any number of loops may have children, and a loop may be freed as soon as its worlds are
 * closed, their servers still ending. A child is watched by its pidfd (readable when it exits) rather
 * than by SIGCHLD, which libevent delivers to one loop of the process only and a program may use itself.
 * All of it is thread-safe. */
#ifndef AG_MCP_REAPER_H
#define AG_MCP_REAPER_H

#include <stddef.h>
#include <sys/types.h>

/* The group (pgid = pid) outlives a reaped leader at most this long after its SIGTERM: then SIGKILL. */
#define MCP_REAPER_GROUP_GRACE_MS 1000

/* What mcp_reaper_collect found. */
typedef enum mcp_reaper_look {
  MCP_REAPER_RUNNING, /* not exited (a spurious wake) */
  MCP_REAPER_REAPED,  /* reaped now: *status as from waitpid */
  MCP_REAPER_GONE,    /* reaped by someone else (its pid may name another process: never signalled) */
} mcp_reaper_look;

/* Reaps the leader pid if it has exited. What it started in its group gets SIGTERM first, while the
 * zombie still holds the pid (npx-style servers run the real server as a child that does not end with
 * its parent); *lingers is 1 when the group is still there afterwards (give it to mcp_reaper_take). */
mcp_reaper_look mcp_reaper_collect(pid_t pid, int *status, int *lingers);

/* Takes child pid over; pidfd (from pidfd_open, now the reaper's) is readable when it exits, or -1 when
 * the leader was reaped already and only its group lingers (watched until gone, SIGKILLed after
 * MCP_REAPER_GROUP_GRACE_MS). A leader gets SIGTERM (to its group) after grace_ms and SIGKILL grace_ms
 * later, and is reaped when it exits. When the thread cannot start, the group is SIGKILLed and the
 * leader reaped at once. */
void mcp_reaper_take(pid_t pid, int pidfd, long grace_ms);
/* Leaders taken over and not reaped yet. */
size_t mcp_reaper_count(void);
/* Hurries what the reaper holds: SIGTERM now to each leader not signalled yet, SIGKILL to what is left
 * (leaders and lingering groups) after ms; then waits until the reaper holds nothing, ms plus a grace
 * at most. */
void mcp_reaper_drain(long ms);
/* Waits up to ms until the reaper holds no leader (they end by themselves); 1 when none is left. */
int mcp_reaper_wait(long ms);

#endif
