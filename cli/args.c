/* The options several commands share (see args.h). */
#include "cli/args.h"

#include "agora.h"
#include "cli/cli.h"
#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_nats_defaults(cli_nats *o) {
  memset(o, 0, sizeof *o);
  o->replicas = 1;
  o->lease_ms = 3000;
}

static int number(const char *cmd, const char *opt, const char *s, long lo, long hi, long *out) {
  char *end = NULL;
  long v = strtol(s, &end, 10);
  if (!s[0] || *end || v < lo || v > hi)
    return cli_error(AG_ERR_INVALID, "%s: %s must be a whole number from %ld to %ld, not '%s'", cmd, opt, lo, hi, s);
  *out = v;
  return 0;
}

int cli_nats_arg(cli_nats *o, const char *cmd, int host, int argc, char **argv, int *i) {
  const char *s = argv[*i];
  int known = !strcmp(s, "--nats") || !strcmp(s, "--nats-creds") || !strcmp(s, "--nats-ca") ||
              !strcmp(s, "--nats-replicas") || (host && (!strcmp(s, "--agents") || !strcmp(s, "--lease-ms")));
  if (!known) return 0;
  if (*i + 1 >= argc) return cli_error(AG_ERR_INVALID, "%s: %s needs a value", cmd, s);
  const char *v = argv[++*i];
  long n = 0;
  int st = 0;
  if (!strcmp(s, "--nats")) o->url = v;
  else if (!strcmp(s, "--nats-creds")) o->creds = v;
  else if (!strcmp(s, "--nats-ca")) o->ca_file = v;
  else if (!strcmp(s, "--agents")) o->agents = v;
  else if (!strcmp(s, "--nats-replicas") && !(st = number(cmd, s, v, 1, 5, &n))) o->replicas = (int)n;
  else if (!strcmp(s, "--lease-ms") && !(st = number(cmd, s, v, 300, 600000, &n))) o->lease_ms = n;
  return st ? st : 1;
}

int cli_override_arg(cli_overrides *o, const char *cmd, int argc, char **argv, int *i) {
  const char *s = argv[*i];
  const char **slot = !strcmp(s, "--model") ? &o->model : !strcmp(s, "--provider") ? &o->provider
                    : !strcmp(s, "--base-url") ? &o->base_url : !strcmp(s, "--llm-cache") ? &o->llm_cache
                    : !strcmp(s, "--cache-db") ? &o->cache_db : NULL;
  if (!slot) return 0;
  if (*i + 1 >= argc) return cli_error(AG_ERR_INVALID, "%s: %s needs a value", cmd, s);
  *slot = argv[++*i];
  /* the library's lists, so that a bad value is refused before anything opens */
  const char *field = slot == &o->llm_cache ? "llm_cache" : slot == &o->provider ? "provider" : NULL;
  if (field && agora_option_check(field, *slot)) return cli_error(AG_ERR_INVALID, "%s: %s: %s", cmd, s, agora_errmsg());
  return 1;
}

int cli_is_allow_arg(const char *s) { return !strcmp(s, "--allow-env") || !strcmp(s, "--allow-key-to"); }

int cli_allow_env_arg(cli_allow *a, const char *cmd, int argc, char **argv, int *i) {
  const char *opt = argv[*i];
  int url = !strcmp(opt, "--allow-key-to");
  size_t *n = url ? &a->n_key_urls : &a->n;
  if (*i + 1 >= argc) return cli_error(AG_ERR_INVALID, "%s: %s needs %s", cmd, opt, url ? "a URL" : "a variable name");
  if (*n >= CLI_ALLOW_MAX)
    return cli_error(AG_ERR_INVALID, "%s: %s given more than %d times", cmd, opt, CLI_ALLOW_MAX);
  const char *v = argv[++*i];
  if (url && strncmp(v, "http://", 7) && strncmp(v, "https://", 8))
    return cli_error(AG_ERR_INVALID, "%s: --allow-key-to '%s': expected an http:// or https:// URL (an agent's "
                     "base_url)", cmd, v);
  (url ? a->key_urls : a->names)[(*n)++] = v;
  return 0;
}

void cli_options_fill(agora_options *o, const cli_allow *allow, const cli_overrides *over, const cli_nats *nats) {
  o->allow_env = allow->names, o->n_allow_env = allow->n;
  o->allow_key_to = allow->key_urls, o->n_allow_key_to = allow->n_key_urls;
  if (over) {
    o->model = over->model, o->provider = over->provider, o->base_url = over->base_url;
    o->llm_cache = over->llm_cache, o->cache_db = over->cache_db;
  }
  if (nats) {
    o->nats_url = nats->url, o->nats_creds = nats->creds, o->nats_ca = nats->ca_file;
    o->nats_replicas = nats->replicas, o->nats_agents = nats->agents, o->nats_lease_ms = nats->lease_ms;
  }
}
