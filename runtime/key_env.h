/* Which environment variables a world file may name as `api_key_env`. A world file from someone else is
 * untrusted: a variable it names is sent, as a bearer token, to the base_url it chooses. */
#ifndef AG_RT_KEY_ENV_H
#define AG_RT_KEY_ENV_H

#include <stddef.h>

#include "common/error.h"
#include "world/world.h"

#define RT_ALLOW_ENV_MAX 16 /* --allow-env given this many times at most */

/* The names the person allowed with --allow-env (borrowed from argv). */
typedef struct rt_allow_env {
  const char *names[RT_ALLOW_ENV_MAX];
  size_t n;
} rt_allow_env;


/* Whether name may be used without asking: it ends in _API_KEY, _TOKEN or _KEY and does not say it is
 * some other kind of secret (SECRET, PASSWORD, PRIVATE: AWS_SECRET_ACCESS_KEY is not an LLM key). Pure. */
int rt_key_env_plain(const char *name);

/* Checks every agent of w: AG_ERR_INVALID with em = "LABEL: agents[N].api_key_env: ..." naming the
 * variable and the flag when an agent names a variable that is neither plain nor allowed, or with
 * "LABEL: agents[N] (NAME).api_key_env: environment variable V is not set ..." when an agent whose
 * provider sends a key (not script) names a variable that is unset or empty. */
int rt_key_env_check(const world *w, const char *label, const rt_allow_env *allow, ag_errmsg *em);

#endif
