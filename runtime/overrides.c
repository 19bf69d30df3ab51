/* Command-line overrides and the script-provider warning (see prepare.h). */
#include "runtime/overrides.h"

#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_override_arg(cli_overrides *o, const char *cmd, int argc, char **argv, int *i) {
  const char *s = argv[*i];
  const char **slot = !strcmp(s, "--model") ? &o->model : !strcmp(s, "--provider") ? &o->provider
                    : !strcmp(s, "--base-url") ? &o->base_url : NULL;
  if (!slot) return 0;
  if (*i + 1 >= argc) return cli_error(AG_ERR_INVALID, "%s: %s needs a value", cmd, s);
  *slot = argv[++*i];
  llm_provider_kind k;
  if (slot == &o->provider && llm_provider_parse(*slot, &k))
    return cli_error(AG_ERR_INVALID, "%s: --provider: unknown provider '%s' (expected script, openai, anthropic, "
                     "gemini or ollama)", cmd, *slot);
  return 1;
}

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

int cli_spec_prepare(world_spec *spec, const cli_overrides *o) {
  for (size_t i = 0; o && i < spec->n_agents; i++) {
    llm_config *c = &spec->agents[i].llm;
    if (o->provider) llm_provider_parse(o->provider, &c->provider); /* checked by cli_override_arg */
    if (set_string(&c->model, o->model) || set_string(&c->base_url, o->base_url)) return AG_ERR_NOMEM;
  }
  warn_script_agents(spec);
  return AG_OK;
}
