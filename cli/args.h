/* The options several commands share: NATS (docs/distributed.md), --model/--provider/--base-url,
 * --allow-env. Each takes argv[*i] when it is its option. */
#ifndef AG_CLI_ARGS_H
#define AG_CLI_ARGS_H

/* The options are cli/'s own records, which every command turns into agora_options (cli_options_fill):
 * no cli/ header includes the core's (docs/library.md "The agora binary and the library"). */
#include "agora.h"

#include <stddef.h>

#define CLI_ALLOW_MAX 16 /* --allow-env (and --allow-key-to) given this many times at most */

/* NATS (docs/distributed.md); agents and lease_ms are host's alone. */
typedef struct cli_nats {
  const char *url, *creds, *ca_file; /* --nats (NULL: one process), --nats-creds, --nats-ca */
  const char *agents;                /* host --agents, or NULL: a fair share */
  int replicas;                      /* --nats-replicas */
  long lease_ms;                     /* host --lease-ms */
} cli_nats;

/* --model, --provider, --base-url, --llm-cache, --cache-db (NULL: as the world file says). */
typedef struct cli_overrides {
  const char *model, *provider, *base_url, *llm_cache, *cache_db;
} cli_overrides;

/* --allow-env NAME and --allow-key-to URL, in the order given. */
typedef struct cli_allow {
  const char *names[CLI_ALLOW_MAX];
  size_t n;
  const char *key_urls[CLI_ALLOW_MAX];
  size_t n_key_urls;
} cli_allow;

/* Defaults: one replica, leases of 3 s. */
void cli_nats_defaults(cli_nats *o);
/* When argv[*i] is --nats, --nats-creds, --nats-ca or --nats-replicas (and, for host, --agents and
 * --lease-ms), takes it with its value and returns 1; an exit status > 1 after printing why; 0 when it
 * is none of them. Strings are borrowed from argv. */
int cli_nats_arg(cli_nats *o, const char *cmd, int host, int argc, char **argv, int *i);
/* When argv[*i] is --model, --provider or --base-url, takes it and its value and returns 1 (or an exit
 * status > 1 after printing why, e.g. a missing value or an unknown provider); 0 when it is none of
 * them. cmd names the command in messages. */
int cli_override_arg(cli_overrides *o, const char *cmd, int argc, char **argv, int *i);

/* Whether s is --allow-env or --allow-key-to. */
int cli_is_allow_arg(const char *s);
/* Takes argv[*i] (--allow-env NAME or --allow-key-to URL) and its value; returns 0, or an exit status
 * after printing why. */
int cli_allow_env_arg(cli_allow *a, const char *cmd, int argc, char **argv, int *i);

/* The library's options for them into o (model, provider, base_url, allow_env, allow_key_to, llm_cache,
 * cache_db and the nats_ fields; the others are left as they are). Every pointer is borrowed from the
 * three records, which must outlive o's use; over and nats may be NULL (left out). */
void cli_options_fill(agora_options *o, const cli_allow *allow, const cli_overrides *over, const cli_nats *nats);

#endif
