/* The api_key_env policy of run and console (see key_env.h). */
#include "runtime/key_env.h"


#include <stdlib.h>
#include <string.h>

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n > k && !strcmp(s + n - k, suffix);
}

int rt_key_env_plain(const char *name) {
  static const char *const other[] = {"SECRET", "PASSWORD", "PASSWD", "PRIVATE"};
  if (!ends_with(name, "_API_KEY") && !ends_with(name, "_TOKEN") && !ends_with(name, "_KEY")) return 0;
  for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
    if (strstr(name, other[i])) return 0;
  return 1;
}

static int allowed(const rt_allow_env *allow, const char *name) {
  for (size_t i = 0; allow && i < allow->n; i++)
    if (!strcmp(allow->names[i], name)) return 1;
  return 0;
}

/* A variable the agent's provider would send and that is not set: found at load, before the chat and
 * the human's message are stored, rather than at the first call. A script agent sends nothing (also
 * when --provider script overrides the file); an agent naming no variable may need none (a local
 * server), which only the call can tell. */
static int key_env_unset(const agent_settings *st, const char *name) {
  if (st->llm.provider == LLM_SCRIPT) return 0;
  const char *value = getenv(name);
  return !value || !value[0];
}

int rt_key_env_check(const world *w, const char *label, const rt_allow_env *allow, ag_errmsg *em) {
  /* From the agents' settings, not world_settings_json: a million agents' JSON took seconds (issue 22). */
  int rc = AG_OK;
  for (size_t i = 0; !rc && i < world_agent_count(w); i++) {
    const agent_settings *st = agent_settings_of(world_agent_at(w, i));
    const char *name = st->llm.api_key_env;
    if (!name || !name[0]) continue;
    if (!rt_key_env_plain(name) && !allowed(allow, name))
      rc = ag_fail(em, AG_ERR_INVALID,
                   "%s: agents[%zu].api_key_env: '%s' is not an API key variable (names ending in _API_KEY, "
                   "_TOKEN or _KEY are); its value would be sent to the agent's server: pass --allow-env %s "
                   "if that is intended",
                   label, i, name, name);
    else if (key_env_unset(st, name))
      rc = ag_fail(em, AG_ERR_INVALID,
                   "%s: agents[%zu] (%s).api_key_env: environment variable %s is not set (export it, or drop "
                   "api_key_env to use the provider's default)",
                   label, i, st->name, name);
  }
  return rc;
}
