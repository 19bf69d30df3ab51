/* `budget`, `pricing`, `llm_cache` and `rate_limits` of a world file (see llm_spec.h). Prices come only
 * from the user's file: a price compiled in would be wrong the day a provider changes it, and a budget in
 * dollars must not be kept with a wrong price, so a dollar budget with a model that has no price is refused. */
#include "world/llm_spec.h"

#include "common/jsonnum.h"
#include "world/world_time.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BAD(...) ag_fail(em, AG_ERR_INVALID, __VA_ARGS__)

static const char *const budget_fields[] = {"tokens", "usd", NULL};
static const char *const price_fields[] = {"input_per_mtok", "output_per_mtok", NULL};
static const char *const limit_fields[] = {"max_concurrency", "rpm", "tpm", NULL};

/* A number >= 0 (> 0 when positive), finite. */
static int get_amount(const cJSON *obj, const char *key, int positive, double *out, const char *label,
                      const char *path, ag_errmsg *em) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 || (positive && v->valuedouble <= 0))
    return BAD("%s: %s.%s: must be a number %s", label, path, key, positive ? "above 0" : "of 0 or more");
  *out = v->valuedouble;
  return AG_OK;
}

static int read_budget(const cJSON *v, llm_budget *b, const char *label, ag_errmsg *em) {
  if (!cJSON_IsObject(v)) return BAD("%s: budget: must be an object like {\"tokens\": 2000000, \"usd\": 5.0}", label);
  int rc = world_file_check_keys(v, budget_fields, NULL, label, "budget", em);
  if (rc) return rc;
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(v, "tokens");
  const cJSON *u = cJSON_GetObjectItemCaseSensitive(v, "usd");
  if (!t && !u) return BAD("%s: budget: give tokens, usd or both", label);
  if (t) {
    rc = ag_json_int(t, 1, AG_JSON_INT_MAX, &b->tokens);
    if (rc) return BAD("%s: budget.tokens: must be a whole number of tokens above 0", label);
  }
  if (u && (rc = get_amount(v, "usd", 1, &b->usd, label, "budget", em))) return rc;
  return AG_OK;
}

static int read_pricing(const cJSON *v, llm_budget *b, const char *label, ag_errmsg *em) {
  if (!cJSON_IsObject(v))
    return BAD("%s: pricing: must be an object of models, like {\"gpt-4o-mini\": {\"input_per_mtok\": 0.15, "
               "\"output_per_mtok\": 0.60}}", label);
  int rc = world_file_check_keys(v, NULL, NULL, label, "pricing", em);
  if (rc) return rc;
  size_t n = (size_t)cJSON_GetArraySize(v);
  if (n && !(b->prices = calloc(n, sizeof *b->prices))) return AG_ERR_NOMEM;
  for (const cJSON *m = v->child; m; m = m->next) {
    if (!strcmp(m->string, "_comment")) continue; /* a note, as in every object */
    char path[512];
    snprintf(path, sizeof path, "pricing.%s", m->string);
    if (!cJSON_IsObject(m)) return BAD("%s: %s: must be an object {\"input_per_mtok\": .., \"output_per_mtok\": ..}", label, path);
    if ((rc = world_file_check_keys(m, price_fields, NULL, label, path, em))) return rc;
    llm_price *p = &b->prices[b->n_prices];
    if ((rc = get_amount(m, "input_per_mtok", 0, &p->input_per_mtok, label, path, em)) ||
        (rc = get_amount(m, "output_per_mtok", 0, &p->output_per_mtok, label, path, em)))
      return rc;
    if (!(p->model = strdup(m->string))) return AG_ERR_NOMEM;
    b->n_prices++;
  }
  return AG_OK;
}

/* One `rate_limits` entry: {max_concurrency, rpm, tpm}, at least one, whole numbers above 0. */
static int read_limit(const cJSON *m, llm_rate_limit *l, const char *label, const char *path, ag_errmsg *em) {
  static const int64_t max[] = {1000000, 1000000000, INT64_C(1000000000000)};
  long *dst[] = {&l->max_concurrency, &l->rpm, &l->tpm};
  if (!cJSON_IsObject(m) || !m->child)
    return BAD("%s: %s: must be an object with max_concurrency, rpm or tpm", label, path);
  int rc = world_file_check_keys(m, limit_fields, NULL, label, path, em);
  for (int i = 0; !rc && i < 3; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, limit_fields[i]);
    int64_t n = 0;
    if (v && ag_json_int(v, 1, max[i], &n))
      return BAD("%s: %s.%s: must be a whole number from 1 to %lld", label, path, limit_fields[i], (long long)max[i]);
    *dst[i] = (long)n;
  }
  return rc;
}

static int read_rate_limits(const cJSON *v, llm_rate_limits *out, const char *label, ag_errmsg *em) {
  if (!cJSON_IsObject(v))
    return BAD("%s: rate_limits: must be an object of base URLs (or \"default\"), like {\"default\": {\"rpm\": 500}}",
               label);
  int rc = world_file_check_keys(v, NULL, NULL, label, "rate_limits", em);
  size_t n = (size_t)cJSON_GetArraySize(v);
  if (!rc && n && !(out->v = calloc(n, sizeof *out->v))) return AG_ERR_NOMEM;
  for (const cJSON *m = v->child; !rc && m; m = m->next) {
    if (!strcmp(m->string, "_comment")) continue;
    char path[512];
    snprintf(path, sizeof path, "rate_limits.%s", m->string);
    if (strcmp(m->string, "default") && strncmp(m->string, "http://", 7) && strncmp(m->string, "https://", 8))
      return BAD("%s: %s: a key is a base URL as agents use it (http:// or https://) or \"default\"", label, path);
    llm_rate_limit *l = &out->v[out->n];
    if ((rc = read_limit(m, l, label, path, em))) return rc;
    if (!(l->endpoint = strdup(m->string))) return AG_ERR_NOMEM;
    out->n++;
  }
  return rc;
}

/* A dollar budget counts every model's calls: each agent that calls a model needs its price. */
static int check_prices(const world_spec *spec, const char *label, ag_errmsg *em) {
  for (size_t i = 0; spec->budget.usd > 0 && i < spec->n_agents; i++) {
    const llm_config *c = &spec->agents[i].llm;
    if (c->provider == LLM_SCRIPT || llm_budget_price(&spec->budget, c->model)) continue;
    if (!c->model)
      return BAD("%s: budget.usd: agents[%zu] (%s) sets no model, so its calls have no price: set its model "
                 "and give that model a price in pricing", label, i, spec->agents[i].name);
    return BAD("%s: budget.usd: agents[%zu] (%s) calls model '%s', which has no price in pricing", label, i,
               spec->agents[i].name, c->model);
  }
  return AG_OK;
}

int world_llm_read(const cJSON *root, world_spec *spec, const char *label, ag_errmsg *em) {
  int rc = AG_OK;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "llm_cache");
  if (v && !cJSON_IsNull(v) && (!cJSON_IsString(v) || llm_cache_mode_parse(v->valuestring, &spec->llm_cache)))
    return BAD("%s: llm_cache: must be \"off\", \"use\" or \"replay\"", label);
  v = cJSON_GetObjectItemCaseSensitive(root, "budget");
  if (v && !cJSON_IsNull(v) && (rc = read_budget(v, &spec->budget, label, em))) return rc;
  v = cJSON_GetObjectItemCaseSensitive(root, "pricing");
  if (v && !cJSON_IsNull(v) && (rc = read_pricing(v, &spec->budget, label, em))) return rc;
  v = cJSON_GetObjectItemCaseSensitive(root, "rate_limits");
  if (v && !cJSON_IsNull(v) && (rc = read_rate_limits(v, &spec->rate_limits, label, em))) return rc;
  return check_prices(spec, label, em);
}

void world_llm_to_json(const world_spec *spec, const llm_budget *b, cJSON *w) {
  if (spec->llm_cache != LLM_CACHE_OFF) cJSON_AddStringToObject(w, "llm_cache", llm_cache_mode_name(spec->llm_cache));
  cJSON *r = spec->rate_limits.n ? cJSON_AddObjectToObject(w, "rate_limits") : NULL;
  for (size_t i = 0; r && i < spec->rate_limits.n; i++) {
    const llm_rate_limit *l = &spec->rate_limits.v[i];
    cJSON *o = cJSON_AddObjectToObject(r, l->endpoint);
    if (o && l->max_concurrency) ag_json_add_int(o, "max_concurrency", l->max_concurrency);
    if (o && l->rpm) ag_json_add_int(o, "rpm", l->rpm);
    if (o && l->tpm) ag_json_add_int(o, "tpm", l->tpm);
  }
  if (b->tokens > 0 || b->usd > 0) {
    cJSON *o = cJSON_AddObjectToObject(w, "budget");
    if (o && b->tokens > 0) ag_json_add_int(o, "tokens", b->tokens);
    if (o && b->usd > 0) cJSON_AddNumberToObject(o, "usd", b->usd);
  }
  if (!b->n_prices) return;
  cJSON *p = cJSON_AddObjectToObject(w, "pricing");
  for (size_t i = 0; p && i < b->n_prices; i++) {
    cJSON *m = cJSON_AddObjectToObject(p, b->prices[i].model);
    if (!m) continue;
    cJSON_AddNumberToObject(m, "input_per_mtok", b->prices[i].input_per_mtok);
    cJSON_AddNumberToObject(m, "output_per_mtok", b->prices[i].output_per_mtok);
  }
}

void world_llm_spec_free(world_spec *spec) {
  llm_budget_free(&spec->budget);
  llm_rate_limits_free(&spec->rate_limits);
}
