/* `memory` of a world file (see memory_spec.h). Every field is optional; an agent's object is applied
 * over the defaults' one field at a time, so `defaults` can set the embedder and one agent its mode. */
#include "world/memory_spec.h"

#include "world/world_file_get.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BAD(...) ag_fail(em, AG_ERR_INVALID, __VA_ARGS__)

static const char *const memory_fields[] = {"mode", "retrieve", "reflect_at", "importance", "embedder", "weights",
                                            "retrieve_tokens", "summary_tokens", "summary_model", NULL};
static const char *const embedder_fields[] = {"provider", "model", "base_url", "api_key_env", NULL};
static const char *const weight_fields[] = {"recency", "importance", "relevance", NULL};
static const char *const modes[] = {"window", "summary", "stream", NULL};
static const char *const embedders[] = {"hash", "openai", "ollama", "gemini", NULL};

/* The index of v's string in list, or -1 with em set. */
static int get_choice(const cJSON *obj, const char *key, const char *const *list, const char *label, const char *path,
                      ag_errmsg *em) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  for (int i = 0; cJSON_IsString(v) && list[i]; i++)
    if (!strcmp(v->valuestring, list[i])) return i;
  char all[128] = "";
  for (int i = 0; list[i]; i++)
    snprintf(all + strlen(all), sizeof all - strlen(all), "%s'%s'", i ? ", " : "", list[i]);
  BAD("%s: %s.%s: must be one of %s", label, path, key, all);
  return -1;
}

/* A finite number in [min, max]. */
static int get_number(const cJSON *obj, const char *key, double min, double max, double *out, const char *label,
                      const char *path, ag_errmsg *em) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) return AG_OK;
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < min || v->valuedouble > max)
    return BAD("%s: %s.%s: must be a number from %g to %g", label, path, key, min, max);
  *out = v->valuedouble;
  return AG_OK;
}

/* `importance`: "fixed" (the constant 3), "llm" (a rating call), or a number from 1 to 10 (fixed at it). */
static int read_importance(const cJSON *m, mem_config *c, const char *label, const char *path, ag_errmsg *em) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "importance");
  if (!v) return AG_OK;
  if (cJSON_IsNumber(v)) {
    c->importance = MEM_IMPORTANCE_FIXED;
    return get_number(m, "importance", 1, 10, &c->fixed_importance, label, path, em);
  }
  static const char *const kinds[] = {"fixed", "llm", NULL};
  int k = get_choice(m, "importance", kinds, label, path, em);
  if (k < 0) return BAD("%s: %s.importance: must be \"fixed\", \"llm\" or a number from 1 to 10", label, path);
  c->importance = k == 1 ? MEM_IMPORTANCE_LLM : MEM_IMPORTANCE_FIXED;
  c->fixed_importance = 3; /* "llm": until a memory is rated, and when its rating fails */
  return AG_OK;
}

/* The object m.key into *v (NULL when absent: nothing to read), its path into sub (600 bytes), its keys
 * checked against fields; example shows the shape in the error. */
static int sub_object(const cJSON *m, const char *key, const char *const *fields, const char *example, const cJSON **v,
                      char *sub, const char *label, const char *path, ag_errmsg *em) {
  *v = cJSON_GetObjectItemCaseSensitive(m, key);
  if (!*v) return AG_OK;
  snprintf(sub, 600, "%s.%s", path, key);
  if (!cJSON_IsObject(*v)) return BAD("%s: %s: must be an object like %s", label, sub, example);
  return world_file_check_keys(*v, fields, NULL, label, sub, em);
}

static int read_embedder(const cJSON *m, mem_config *c, const char *label, const char *path, ag_errmsg *em) {
  const cJSON *v;
  char sub[600];
  int rc = sub_object(m, "embedder", embedder_fields, "{\"provider\": \"hash\"}", &v, sub, label, path, em);
  if (rc || !v) return rc;
  if (!cJSON_GetObjectItemCaseSensitive(v, "provider")) return BAD("%s: %s.provider: missing", label, sub);
  int p = get_choice(v, "provider", embedders, label, sub, em);
  if (p < 0) return AG_ERR_INVALID;
  c->embedder = (mem_embedder)p;
  if ((rc = world_file_get_string(v, "model", 1, &c->embed_model, label, sub, em)) ||
      (rc = world_file_get_string(v, "base_url", 1, &c->embed_base_url, label, sub, em)) ||
      (rc = world_file_get_string(v, "api_key_env", 1, &c->embed_api_key_env, label, sub, em)))
    return rc;
  return AG_OK;
}

static int read_weights(const cJSON *m, mem_config *c, const char *label, const char *path, ag_errmsg *em) {
  const cJSON *v;
  char sub[600];
  int rc = sub_object(m, "weights", weight_fields, "{\"recency\": 1, \"importance\": 1, \"relevance\": 1}", &v, sub,
                      label, path, em);
  if (rc || !v) return rc;
  rc = get_number(v, "recency", 0, 100, &c->w_recency, label, sub, em);
  if (!rc) rc = get_number(v, "importance", 0, 100, &c->w_importance, label, sub, em);
  if (!rc) rc = get_number(v, "relevance", 0, 100, &c->w_relevance, label, sub, em);
  return rc;
}

/* An int field in [min, max] into *dst. */
static int get_int(const cJSON *m, const char *key, long min, long max, int *dst, const char *label, const char *path,
                   ag_errmsg *em) {
  long n = *dst;
  int rc = world_file_get_int(m, key, min, max, &n, label, path, em);
  if (!rc) *dst = (int)n;
  return rc;
}

int world_memory_read(const cJSON *obj, mem_config *c, const char *label, const char *path, ag_errmsg *em) {
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "memory");
  if (!m) return AG_OK;
  char sub[512];
  snprintf(sub, sizeof sub, "%s%smemory", path, *path ? "." : "");
  if (!cJSON_IsObject(m)) return BAD("%s: %s: must be an object like {\"mode\": \"stream\"}", label, sub);
  int rc = world_file_check_keys(m, memory_fields, NULL, label, sub, em);
  if (rc) return rc;
  if (cJSON_GetObjectItemCaseSensitive(m, "mode")) {
    int mode = get_choice(m, "mode", modes, label, sub, em);
    if (mode < 0) return AG_ERR_INVALID;
    c->mode = (mem_mode)mode;
  }
  if ((rc = get_int(m, "retrieve", 0, 1000, &c->retrieve, label, sub, em)) ||
      (rc = get_number(m, "reflect_at", 0, 1e9, &c->reflect_at, label, sub, em)) ||
      (rc = read_importance(m, c, label, sub, em)) || (rc = read_embedder(m, c, label, sub, em)) ||
      (rc = read_weights(m, c, label, sub, em)) ||
      (rc = get_int(m, "retrieve_tokens", 1, 10000000, &c->retrieve_tokens, label, sub, em)) ||
      /* summary_tokens up to 200000: a summary is one thread step, under the step's 1 MiB cap. */
      (rc = get_int(m, "summary_tokens", 16, 200000, &c->summary_tokens, label, sub, em)) ||
      (rc = world_file_get_string(m, "summary_model", 1, &c->summary_model, label, sub, em)))
    return rc;
  return AG_OK;
}

void world_memory_to_json(const mem_config *c, cJSON *a) {
  mem_config def;
  mem_config_init(&def);
  if (c->mode == def.mode && c->retrieve == def.retrieve && c->reflect_at == def.reflect_at &&
      c->importance == def.importance && c->fixed_importance == def.fixed_importance && c->w_recency == def.w_recency &&
      c->w_importance == def.w_importance && c->w_relevance == def.w_relevance &&
      c->retrieve_tokens == def.retrieve_tokens && c->summary_tokens == def.summary_tokens && !c->summary_model &&
      c->embedder == def.embedder && !c->embed_model && !c->embed_base_url && !c->embed_api_key_env)
    return;
  cJSON *m = cJSON_AddObjectToObject(a, "memory");
  if (!m) return;
  cJSON_AddStringToObject(m, "mode", mem_mode_name(c->mode));
  cJSON_AddNumberToObject(m, "retrieve", c->retrieve);
  cJSON_AddNumberToObject(m, "reflect_at", c->reflect_at);
  if (c->importance == MEM_IMPORTANCE_LLM) cJSON_AddStringToObject(m, "importance", "llm");
  else cJSON_AddNumberToObject(m, "importance", c->fixed_importance);
  cJSON *e = cJSON_AddObjectToObject(m, "embedder");
  if (e) {
    cJSON_AddStringToObject(e, "provider", mem_embedder_name(c->embedder));
    if (c->embed_model) cJSON_AddStringToObject(e, "model", c->embed_model);
    if (c->embed_base_url) cJSON_AddStringToObject(e, "base_url", c->embed_base_url);
    /* The variable's name only, as for chat calls: a key is never stored. */
    if (c->embed_api_key_env) cJSON_AddStringToObject(e, "api_key_env", c->embed_api_key_env);
  }
  cJSON *w = cJSON_AddObjectToObject(m, "weights");
  if (w) {
    cJSON_AddNumberToObject(w, "recency", c->w_recency);
    cJSON_AddNumberToObject(w, "importance", c->w_importance);
    cJSON_AddNumberToObject(w, "relevance", c->w_relevance);
  }
  cJSON_AddNumberToObject(m, "retrieve_tokens", c->retrieve_tokens);
  cJSON_AddNumberToObject(m, "summary_tokens", c->summary_tokens);
  if (c->summary_model) cJSON_AddStringToObject(m, "summary_model", c->summary_model);
}
