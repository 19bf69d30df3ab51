/* Preparing a loaded world file for run, console and say: --model/--provider/--base-url overrides
 * applied to every agent, and the warning about agents that would only give the offline script's reply. */
#ifndef AG_CLI_PREPARE_H
#define AG_CLI_PREPARE_H

#include "world/world_file.h"

/* The overrides given on the command line (borrowed from argv; NULL: not given). */
typedef struct cli_overrides {
  const char *model, *provider, *base_url;
} cli_overrides;

/* When argv[*i] is --model, --provider or --base-url, takes it and its value and returns 1 (or an exit
 * status > 1 after printing why, e.g. a missing value or an unknown provider); 0 when it is none of
 * them. cmd names the command in messages. */
int cli_override_arg(cli_overrides *o, const char *cmd, int argc, char **argv, int *i);

/* Applies o to every agent of spec, then warns once on stderr when agents have neither a provider other
 * than script nor replies. Returns AG_OK or AG_ERR_NOMEM. */
int cli_spec_prepare(world_spec *spec, const cli_overrides *o);

#endif
