/* The options several commands share: NATS (docs/distributed.md), --model/--provider/--base-url,
 * --allow-env. Each takes argv[*i] when it is its option. */
#ifndef AG_CLI_ARGS_H
#define AG_CLI_ARGS_H

/* The option types are still the core's (cluster_opts, rt_overrides, rt_allow_env): console_main.c and
 * serve_main.c fill the core's options from these parsers. They become agora_options' fields when those two
 * move to libagora (docs/library.md "The agora binary and the library"); until then this is the one cli/
 * header that includes the core's. */
#include "cluster/link.h"
#include "runtime/key_env.h"
#include "runtime/overrides.h"

/* Defaults: one replica, leases of 3 s. */
void cli_nats_defaults(cluster_opts *o);
/* When argv[*i] is --nats, --nats-creds, --nats-ca or --nats-replicas (and, for host, --agents and
 * --lease-ms), takes it with its value and returns 1; an exit status > 1 after printing why; 0 when it
 * is none of them. Strings are borrowed from argv. */
int cli_nats_arg(cluster_opts *o, const char *cmd, int host, int argc, char **argv, int *i);
/* When argv[*i] is --model, --provider or --base-url, takes it and its value and returns 1 (or an exit
 * status > 1 after printing why, e.g. a missing value or an unknown provider); 0 when it is none of
 * them. cmd names the command in messages. */
int cli_override_arg(rt_overrides *o, const char *cmd, int argc, char **argv, int *i);

/* Whether s is --allow-env or --allow-key-to. */
int cli_is_allow_arg(const char *s);
/* Takes argv[*i] (--allow-env NAME or --allow-key-to URL) and its value; returns 0, or an exit status
 * after printing why. */
int cli_allow_env_arg(rt_allow_env *a, const char *cmd, int argc, char **argv, int *i);

#endif
