/* Which environment variables a world file may name as `api_key_env`. A world file from someone else is
 * untrusted: a variable it names is sent, as a bearer token, to the base_url it chooses. */
#ifndef AG_RT_KEY_ENV_H
#define AG_RT_KEY_ENV_H

#include <stddef.h>

#include "common/error.h"
#include "world/world.h"
#include "world/world_file.h"

#define RT_ALLOW_ENV_MAX 16 /* --allow-env (and --allow-key-to) given this many times at most */

/* What the person allowed on the command line (borrowed from argv): variables with --allow-env, and
 * the base URLs a stored world's agents may send their API key to with --allow-key-to. */
typedef struct rt_allow_env {
  const char *names[RT_ALLOW_ENV_MAX];
  size_t n;
  const char *key_urls[RT_ALLOW_ENV_MAX];
  size_t n_key_urls;
} rt_allow_env;


/* Whether name may be used without asking: it ends in _API_KEY, _TOKEN or _KEY and does not say it is
 * some other kind of secret (SECRET, PASSWORD, PRIVATE: AWS_SECRET_ACCESS_KEY is not an LLM key). Pure. */
int rt_key_env_plain(const char *name);

/* Checks every agent of w: AG_ERR_INVALID with em = "LABEL: agents[N].api_key_env: ..." naming the
 * variable and the flag when an agent names a variable that is neither plain nor allowed, or with
 * "LABEL: agents[N] (NAME).api_key_env: environment variable V is not set ..." when an agent whose
 * provider sends a key (not script) names a variable that is unset or empty. */
int rt_key_env_check(const world *w, const char *label, const rt_allow_env *allow, ag_errmsg *em);
/* The same for one agent's settings, agents[i] in messages (an agent added or changed over HTTP). */
int rt_key_env_check_agent(const agent_settings *st, size_t i, const char *label, const rt_allow_env *allow,
                           ag_errmsg *em);

/* A world from the database may be someone else's (an imported snapshot, a world posted over HTTP): an
 * agent of it sends its API key only to its provider's default URL, to a base_url the person allowed
 * with --allow-key-to, or to the --base-url they gave (url_override, may be NULL). Every other agent
 * gets key_withheld (its calls go without a key). When a withheld agent's key variable is set, one
 * line on stderr, "CMD: LABEL: ...", names the agents, their URLs and the flag. Returns the number of
 * agents withheld. */
size_t rt_key_withhold(world_spec *spec, const char *cmd, const char *label, const char *url_override,
                       const rt_allow_env *allow);
/* The same without the line on stderr (the library, which prints nothing unless asked). */
size_t rt_key_withhold_quiet(world_spec *spec, const char *url_override, const rt_allow_env *allow);
/* An agent changed over HTTP (a PATCH: a, read back from the world's settings, which never hold whether a
 * key is withheld) keeps old's rule, for its chat calls and its memory's embedder: a PATCH names neither's
 * base_url nor key variable. */
void rt_key_keep(agent_settings *a, const agent_settings *old);

#endif
