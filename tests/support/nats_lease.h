/* What a test sees of the agents' leases of a world on NATS (docs/distributed.md, "Ownership"): who
 * holds each, read from the key-value bucket agora-<world>-agents. Tests wait on this instead of
 * guessing how long a host takes to start. */
#ifndef AG_TEST_NATS_LEASE_H
#define AG_TEST_NATS_LEASE_H

#include <stddef.h>

enum { NATS_LEASE_OWNER_MAX = 32 };

/* Reads once, through a connection of its own to url, the owner (host id) of each of the n agents in
 * world's bucket: "" for an agent nobody holds. Returns 0 when the bucket could be read (-1 otherwise,
 * e.g. no host made it yet). */
int nats_lease_owners(const char *url, const char *world, const char *const *agents, size_t n,
                      char (*owners)[NATS_LEASE_OWNER_MAX]);
/* Polls (wait_budget_ms(ms)) until agents PREFIX0..PREFIX(n-1) of world each have a lease, held by
 * hosts hosts in all: 1 then, 0 when the time ran out. */
int nats_lease_wait(const char *url, const char *world, const char *prefix, int n, int hosts, long ms);

#endif
