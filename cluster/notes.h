/* What a person running a process of a world on NATS needs to hear about who answers
 * (docs/distributed.md "Who answers"): the agents a host holds, as its leases move, and the agents a
 * waiting publisher has no live host for. Pure over the world's agents: no I/O. */
#ifndef AG_CLUSTER_NOTES_H
#define AG_CLUSTER_NOTES_H

#include "world/world.h"

/* "holding alice, bob" or "holding no agent": the agents for which held(ctx, id) is 1, by name
 * (caller frees; NULL out of memory). Long lists end in "... (N in all)". */
char *notes_holding(const world *w, int (*held)(void *ctx, const char *id), void *ctx);
/* "waiting for a host for: moderator, pm": the agents whose turn waits for another process
 * (AGENT_ELSEWHERE) and whose id is not a line of holders ("id\n" each, borrowed); NULL when there is
 * none (or out of memory; caller frees). */
char *notes_hostless(const world *w, const char *holders);

#endif
