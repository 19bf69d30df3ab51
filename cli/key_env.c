/* The api_key_env policy of run and console (see key_env.h). */
#include "cli/key_env.h"

#include "cli/cli.h"

#include <string.h>

int cli_allow_env_arg(cli_allow_env *a, const char *cmd, int argc, char **argv, int *i) {
  if (*i + 1 >= argc) return cli_error(AG_ERR_INVALID, "%s: --allow-env needs a variable name", cmd);
  if (a->n >= CLI_ALLOW_ENV_MAX)
    return cli_error(AG_ERR_INVALID, "%s: --allow-env given more than %d times", cmd, CLI_ALLOW_ENV_MAX);
  a->names[a->n++] = argv[++*i];
  return 0;
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n > k && !strcmp(s + n - k, suffix);
}

int cli_key_env_plain(const char *name) {
  static const char *const other[] = {"SECRET", "PASSWORD", "PASSWD", "PRIVATE"};
  if (!ends_with(name, "_API_KEY") && !ends_with(name, "_TOKEN") && !ends_with(name, "_KEY")) return 0;
  for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
    if (strstr(name, other[i])) return 0;
  return 1;
}

static int allowed(const cli_allow_env *allow, const char *name) {
  for (size_t i = 0; allow && i < allow->n; i++)
    if (!strcmp(allow->names[i], name)) return 1;
  return 0;
}

int cli_key_env_check(const world *w, const char *label, const cli_allow_env *allow, ag_errmsg *em) {
  /* From the agents' settings, not world_settings_json: a million agents' JSON took seconds (issue 22). */
  int rc = AG_OK;
  for (size_t i = 0; !rc && i < world_agent_count(w); i++) {
    const char *name = agent_settings_of(world_agent_at(w, i))->llm.api_key_env;
    if (name && name[0] && !cli_key_env_plain(name) && !allowed(allow, name))
      rc = ag_fail(em, AG_ERR_INVALID,
                   "%s: agents[%zu].api_key_env: '%s' is not an API key variable (names ending in _API_KEY, "
                   "_TOKEN or _KEY are); its value would be sent to the agent's server: pass --allow-env %s "
                   "if that is intended",
                   label, i, name, name);
  }
  return rc;
}
