/* The api_key_env policy of run and console (see key_env.h). */
#include "runtime/key_env.h"


#include <stdio.h>
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
  if (st->llm.provider == LLM_SCRIPT || st->llm.key_withheld) return 0;
  const char *value = getenv(name);
  return !value || !value[0];
}

int rt_key_env_check_agent(const agent_settings *st, size_t i, const char *label, const rt_allow_env *allow,
                           ag_errmsg *em) {
  const char *name = st->llm.api_key_env;
  if (!name || !name[0]) return AG_OK;
  if (!rt_key_env_plain(name) && !allowed(allow, name))
    return ag_fail(em, AG_ERR_INVALID,
                   "%s: agents[%zu].api_key_env: '%s' is not an API key variable (names ending in _API_KEY, "
                   "_TOKEN or _KEY are); its value would be sent to the agent's server: pass --allow-env %s "
                   "if that is intended",
                   label, i, name, name);
  if (key_env_unset(st, name))
    return ag_fail(em, AG_ERR_INVALID,
                   "%s: agents[%zu] (%s).api_key_env: environment variable %s is not set (export it, or drop "
                   "api_key_env to use the provider's default)",
                   label, i, st->name, name);
  return AG_OK;
}

int rt_key_env_check(const world *w, const char *label, const rt_allow_env *allow, ag_errmsg *em) {
  /* From the agents' settings, not world_settings_json: a million agents' JSON took seconds (issue 22). */
  int rc = AG_OK;
  for (size_t i = 0; !rc && i < world_agent_count(w); i++)
    rc = rt_key_env_check_agent(agent_settings_of(world_agent_at(w, i)), i, label, allow, em);
  return rc;
}

/* The same URL, but for trailing slashes (".../v1/" is ".../v1"). */
static int same_url(const char *a, const char *b) {
  size_t na = strlen(a), nb = strlen(b);
  while (na && a[na - 1] == '/') na--;
  while (nb && b[nb - 1] == '/') nb--;
  return na == nb && !strncmp(a, b, na);
}

/* Whether cfg's key may go to its base_url. */
static int key_may_go(const llm_config *cfg, const char *url_override, const rt_allow_env *allow) {
  const char *url = cfg->base_url, *dflt = llm_default_base_url(cfg->provider);
  if (cfg->provider == LLM_SCRIPT || !url || !url[0] || url_override || (dflt && same_url(url, dflt))) return 1;
  for (size_t i = 0; allow && i < allow->n_key_urls; i++)
    if (same_url(allow->key_urls[i], url)) return 1;
  return 0;
}

/* The variable whose value cfg would send, when it is set: only then is a withheld key news. */
static int key_is_set(const llm_config *cfg) {
  const char *name = cfg->api_key_env ? cfg->api_key_env : llm_default_key_env(cfg->provider);
  const char *v = name && name[0] ? getenv(name) : NULL;
  return v && v[0];
}

/* A hosted embedder's key follows the chat calls' rule (docs/memory.md): withheld from a base_url other than
 * its provider's default unless --allow-key-to names it. */
static void embed_withhold(mem_config *m, const rt_allow_env *allow) {
  llm_config e = {.provider = (llm_provider_kind)mem_embedder_provider(m->embedder), .base_url = m->embed_base_url};
  if (m->embedder != MEM_EMBED_HASH && !key_may_go(&e, NULL, allow)) m->embed_key_withheld = 1;
}

void rt_key_keep(agent_settings *a, const agent_settings *old) {
  a->llm.key_withheld = old->llm.key_withheld;
  a->memory.embed_key_withheld = old->memory.embed_key_withheld;
}

/* Withholds the keys; the agents whose key variable is set are named in said (at most three), told counts
 * them. */
static size_t withhold(world_spec *spec, const char *url_override, const rt_allow_env *allow, char *said, size_t cap,
                       size_t *told) {
  size_t n = 0, len = 0;
  for (size_t i = 0; i < spec->n_agents; i++) {
    llm_config *cfg = &spec->agents[i].llm;
    embed_withhold(&spec->agents[i].memory, allow);
    if (key_may_go(cfg, url_override, allow)) continue;
    cfg->key_withheld = 1;
    n++;
    if (!key_is_set(cfg)) continue;
    if ((*told)++ < 3 && len < cap)
      len += (size_t)snprintf(said + len, cap - len, "%sagent '%s' (%s) at %s", *told > 1 ? ", " : "",
                              spec->agents[i].name, llm_provider_name(cfg->provider), cfg->base_url);
  }
  return n;
}

size_t rt_key_withhold(world_spec *spec, const char *cmd, const char *label, const char *url_override,
                       const rt_allow_env *allow) {
  char said[512] = "";
  size_t told = 0, n = withhold(spec, url_override, allow, said, sizeof said, &told);
  if (told)
    fprintf(stderr, "%s: %s: %s%s: no API key is sent to a base_url other than the provider's default, as the "
            "world comes from the database (an imported snapshot, the HTTP API or another process may have "
            "set it); its calls go without a key. Pass --allow-key-to URL to send it\n",
            cmd ? cmd : "agora", label, said, told > 3 ? ", ..." : "");
  return n;
}

size_t rt_key_withhold_quiet(world_spec *spec, const char *url_override, const rt_allow_env *allow) {
  char said[512] = "";
  size_t told = 0;
  return withhold(spec, url_override, allow, said, sizeof said, &told);
}
