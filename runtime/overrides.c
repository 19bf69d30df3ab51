/* Command-line overrides and the script-provider warning (see overrides.h). */
#include "runtime/overrides.h"


#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int set_string(char **dst, const char *value) {
  if (!value) return AG_OK;
  char *s = strdup(value);
  if (!s) return AG_ERR_NOMEM;
  free(*dst);
  *dst = s;
  return AG_OK;
}

/* One line for all of them, once: a new user's world without "provider" otherwise answers with a stock
 * sentence and looks broken. */
static void warn_script_agents(const world_spec *spec) {
  char names[256] = "";
  size_t len = 0, n = 0;
  for (size_t i = 0; i < spec->n_agents; i++) {
    const llm_config *c = &spec->agents[i].llm;
    if (c->provider != LLM_SCRIPT || c->script.n_replies) continue;
    if (len < sizeof names)
      len += (size_t)snprintf(names + len, sizeof names - len, "%s'%s'", n ? ", " : "", spec->agents[i].name);
    n++;
  }
  if (n)
    fprintf(stderr,
            "agora: warning: %s %s %s no provider and no replies: %s the offline 'script' provider's stock reply "
            "(set \"provider\" in the world file, or pass --provider)\n",
            n > 1 ? "agents" : "agent", names, n > 1 ? "have" : "has", n > 1 ? "they give" : "it gives");
}

int rt_spec_prepare(world_spec *spec, const rt_overrides *o, int quiet) {
  for (size_t i = 0; o && i < spec->n_agents; i++) {
    llm_config *c = &spec->agents[i].llm;
    if (o->provider) llm_provider_parse(o->provider, &c->provider); /* checked when the option was parsed */
    if (set_string(&c->model, o->model) || set_string(&c->base_url, o->base_url)) return AG_ERR_NOMEM;
  }
  if (!quiet) warn_script_agents(spec);
  return AG_OK;
}
