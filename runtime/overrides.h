/* Preparing a loaded world file for run, console and say: --model/--provider/--base-url overrides
 * applied to every agent, and the warning about agents that would only give the offline script's reply. */
#ifndef AG_RT_OVERRIDES_H
#define AG_RT_OVERRIDES_H

#include "world/world_file.h"

/* The overrides given on the command line (borrowed from argv; NULL: not given). */
typedef struct rt_overrides {
  const char *model, *provider, *base_url;
  const char *llm_cache, *cache_db; /* --llm-cache MODE, --cache-db DIR (runtime/llm_cache.h) */
} rt_overrides;

/* Applies o to every agent of spec, then (unless quiet) warns once on stderr when agents have neither a
 * provider other than script nor replies. Returns AG_OK or AG_ERR_NOMEM. */
int rt_spec_prepare(world_spec *spec, const rt_overrides *o, int quiet);

#endif
