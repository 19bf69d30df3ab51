/* The options of a world spread over NATS, shared by `host` and `run --nats` (docs/distributed.md). */
#ifndef AG_CLI_NATS_ARGS_H
#define AG_CLI_NATS_ARGS_H

#include "cluster/cluster.h"

/* Defaults: one replica, leases of 3 s. */
void cli_nats_defaults(cluster_opts *o);
/* When argv[*i] is --nats, --nats-creds, --nats-ca or --nats-replicas (and, for host, --agents and
 * --lease-ms), takes it with its value and returns 1; an exit status > 1 after printing why; 0 when it
 * is none of them. Strings are borrowed from argv. */
int cli_nats_arg(cluster_opts *o, const char *cmd, int host, int argc, char **argv, int *i);
/* Leaves the NATS world: frees c (NULL: nothing), and says on stderr when libnats did not stop in time
 * (the core reports it, the command prints it; the exit status stays what the command decided). */
void cli_nats_leave(cluster *c);

#endif
