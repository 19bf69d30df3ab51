/* The provider-independent half of the LLM layer: settings, clients, endpoints, and the life of a
 * call (start, chunks, one completion or a cancel). */
#include "llm/provider.h"
#include "llm/wire.h"

#include "common/defer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const provider_names[] = {"script", "openai", "anthropic", "gemini", "ollama"};

int llm_provider_parse(const char *name, llm_provider_kind *out) {
  for (size_t i = 0; i < sizeof provider_names / sizeof *provider_names; i++) {
    if (strcmp(name, provider_names[i]) == 0) {
      *out = (llm_provider_kind)i;
      return AG_OK;
    }
  }
  return AG_ERR_INVALID;
}

const char *llm_provider_name(llm_provider_kind kind) {
  if ((size_t)kind < sizeof provider_names / sizeof *provider_names) return provider_names[kind];
  return "unknown";
}

const char *llm_default_key_env(llm_provider_kind kind) {
  switch (kind) {
  case LLM_OPENAI: return "OPENAI_API_KEY";
  case LLM_ANTHROPIC: return "ANTHROPIC_API_KEY";
  case LLM_GEMINI: return "GEMINI_API_KEY";
  default: return NULL;
  }
}

const char *llm_default_base_url(llm_provider_kind kind) {
  const llm_wire *w = llm_wire_for(kind);
  return w ? w->default_base_url : NULL;
}

void llm_config_init(llm_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->provider = LLM_SCRIPT;
  cfg->temperature = 0.7;
  cfg->stream = 1;
  cfg->timeout_ms = 120000;
  cfg->max_retries = 3;
}

static int dup_opt(char **dst, const char *src) {
  *dst = NULL;
  if (!src) return AG_OK;
  *dst = strdup(src);
  return *dst ? AG_OK : AG_ERR_NOMEM;
}

int llm_config_copy(llm_config *dst, const llm_config *src) {
  int rc = AG_OK;
  *dst = *src;
  dst->model = dst->base_url = dst->api_key_env = NULL;
  dst->script = (llm_script_options){0};
  dst->ca_file = dst->proxy = NULL;
  if ((rc = dup_opt(&dst->model, src->model)) || (rc = dup_opt(&dst->base_url, src->base_url)) ||
      (rc = dup_opt(&dst->api_key_env, src->api_key_env)) || (rc = llm_script_options_copy(&dst->script, &src->script)))
    goto fail;
  if ((rc = dup_opt(&dst->ca_file, src->ca_file)) || (rc = dup_opt(&dst->proxy, src->proxy))) goto fail;
  return AG_OK;
fail:
  llm_config_free(dst);
  return rc;
}

void llm_config_free(llm_config *cfg) {
  free(cfg->model);
  free(cfg->base_url);
  free(cfg->api_key_env);
  free(cfg->ca_file);
  free(cfg->proxy);
  cfg->ca_file = cfg->proxy = NULL;
  llm_script_options_free(&cfg->script);
  cfg->model = cfg->base_url = cfg->api_key_env = NULL;
}

net_opts llm_config_net(const llm_config *cfg) {
  return (net_opts){.ca_file = cfg->ca_file, .proxy = cfg->proxy, .insecure = cfg->insecure};
}

static void (*warning_sink)(const char *message);

void llm_set_warning_sink(void (*fn)(const char *message)) { warning_sink = fn; }

/* What llm_endpoint_new checks for an HTTP provider: the CA bundle from the environment must load
 * (ca_file is checked by the world-file loader, with its JSON path); insecure: true warns once. */
static int endpoint_net_check(const llm_config *cfg, ag_errmsg *em) {
  static int warned;
  net_opts o = llm_config_net(cfg);
  int rc = net_opts_check(&o, em);
  if (!rc && cfg->insecure && !warned) {
    warned = 1;
    char msg[256];
    snprintf(msg, sizeof msg, "insecure: true (%s): TLS certificates and host names are NOT verified "
             "(for local testing only)", cfg->base_url ? cfg->base_url : "the provider's default URL");
    if (warning_sink) warning_sink(msg);
  }
  return rc;
}

const llm_provider_ops *llm_provider_ops_for(llm_provider_kind kind) {
  if (kind == LLM_SCRIPT) return &llm_script_ops;
  return llm_http_ops_for(kind);
}

int llm_client_new(struct event_base *base, llm_client **out) {
  llm_client *c = calloc(1, sizeof *c);
  if (!c) return AG_ERR_NOMEM;
  c->base = base;
  int rc = ag_defer_new(base, &c->defer);
  if (!rc && (rc = net_client_new(base, &c->net))) ag_defer_free(c->defer);
  if (rc) {
    free(c);
    return rc;
  }
  *out = c;
  return AG_OK;
}

static void call_unlink(llm_call *call) {
  llm_client *c = call->client;
  if (!call->linked) return;
  if (call->prev) call->prev->next = call->next;
  else c->calls = call->next;
  if (call->next) call->next->prev = call->prev;
  call->prev = call->next = NULL;
  call->linked = 0;
  c->active--;
}

static void call_release(llm_call *call) {
  if (call->impl && call->ops->cancel) call->ops->cancel(call);
  for (size_t i = 0; i < call->n_tool_calls; i++) {
    free(call->tool_calls[i].id);
    free(call->tool_calls[i].name);
    free(call->tool_calls[i].args_json);
    free(call->tool_calls[i].signature);
  }
  free(call->tool_calls);
  call_unlink(call);
  free(call);
}

void llm_client_free(llm_client *c) {
  if (!c) return;
  while (c->calls) call_release(c->calls);
  net_client_free(c->net);
  ag_defer_free(c->defer);
  llm_client_budget_free(c);
  llm_client_cache_free(c);
  llm_limiter_free(c); /* after the calls: each gave its slot back */
  free(c);
}

size_t llm_client_active(const llm_client *c) { return c->active; }

net_client *llm_client_net(llm_client *c) { return c->net; }

int llm_endpoint_new(llm_client *c, const llm_config *cfg, llm_endpoint **out, ag_errmsg *em) {
  if (!llm_provider_ops_for(cfg->provider))
    return ag_fail(em, AG_ERR_INVALID, "provider '%s' is not available in this build",
                   llm_provider_name(cfg->provider));
  int rc = cfg->provider == LLM_SCRIPT ? AG_OK : endpoint_net_check(cfg, em);
  if (rc) return rc;
  llm_endpoint *e = calloc(1, sizeof *e);
  if (!e) return AG_ERR_NOMEM;
  e->client = c;
  rc = llm_config_copy(&e->cfg, cfg);
  if (rc) {
    free(e);
    return rc;
  }
  *out = e;
  return AG_OK;
}

void llm_endpoint_free(llm_endpoint *e) {
  if (!e) return;
  llm_call *call = e->client->calls;
  while (call) {
    llm_call *next = call->next;
    if (call->ep == e) call_release(call);
    call = next;
  }
  llm_config_free(&e->cfg);
  free(e);
}

const llm_config *llm_endpoint_config(const llm_endpoint *e) { return &e->cfg; }

size_t llm_endpoint_reply_counter(const llm_endpoint *e) { return e->script_next; }

void llm_endpoint_set_reply_counter(llm_endpoint *e, size_t n) { e->script_next = n; }

int llm_call_start(llm_endpoint *e, const llm_request *req, const llm_callbacks *cb, void *ud,
                   llm_call **out) {
  const llm_provider_ops *ops = llm_provider_ops_for(e->cfg.provider);
  if (!ops) return AG_ERR_INVALID;
  llm_call *call = calloc(1, sizeof *call);
  if (!call) return AG_ERR_NOMEM;
  call->ep = e;
  call->client = e->client;
  /* A reply from the cache costs nothing, so it is given even past the budget; a call to a model is not. */
  const llm_provider_ops *gated = llm_cache_gate(call, req, ops);
  call->ops = gated == ops ? llm_budget_gate(e->client, e->cfg.provider, ops) : gated;
  call->linked = 1;
  call->cb = *cb;
  call->ud = ud;
  llm_client *c = e->client;
  call->next = c->calls;
  if (c->calls) c->calls->prev = call;
  c->calls = call;
  c->active++;
  int rc = call->ops->start(call, req);
  if (rc) {
    call_release(call);
    return rc;
  }
  if (out) *out = call;
  return AG_OK;
}

void llm_call_cancel(llm_call *call) {
  if (call) call_release(call);
}

llm_usage llm_call_usage(const llm_call *call) { return call->usage; }

void llm_call_chunk(llm_call *call, const char *text, size_t len) {
  if (call->cb.on_chunk && len) call->cb.on_chunk(call->ud, text, len);
}

void llm_call_finish(llm_call *call, int err, const char *text, const llm_error_info *info) {
  /* Unlinked before on_done: the agent may free its endpoint (or the world its client's calls) from
   * inside on_done, and text may live in call->impl, so the call itself is released only after. */
  if (err == AG_OK) {
    llm_cache_store(call, text);
    llm_budget_account(call);
  }
  call_unlink(call);
  call->ep = NULL;
  if (call->cb.on_done) call->cb.on_done(call->ud, err, text ? text : "", info);
  call_release(call);
}

const llm_tool_call *llm_call_tool_calls(const llm_call *call, size_t *n) {
  *n = call->n_tool_calls;
  return call->tool_calls;
}

int llm_call_add_tool_call(llm_call *call, const char *id, const char *name, const char *args_json,
                           const char *signature) {
  llm_tool_call *p = realloc(call->tool_calls, (call->n_tool_calls + 1) * sizeof *p);
  if (!p) return AG_ERR_NOMEM;
  call->tool_calls = p;
  char gen[32];
  if (!id || !id[0]) {
    snprintf(gen, sizeof gen, "call_%zu", call->n_tool_calls + 1);
    id = gen;
  }
  llm_tool_call *tc = &p[call->n_tool_calls];
  tc->id = strdup(id);
  tc->name = strdup(name ? name : "");
  tc->args_json = strdup(args_json && args_json[0] ? args_json : "{}");
  tc->signature = signature ? strdup(signature) : NULL;
  if (!tc->id || !tc->name || !tc->args_json || (signature && !tc->signature)) {
    free(tc->id);
    free(tc->name);
    free(tc->args_json);
    free(tc->signature);
    return AG_ERR_NOMEM;
  }
  call->n_tool_calls++;
  return AG_OK;
}
