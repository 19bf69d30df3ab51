/* The strict readers of world-file fields (world/world_file_get.h). */
#include "world/world_file_get.h"

#include "common/jsonnum.h"
#include "common/nearest.h"

#include <stdlib.h>
#include <string.h>

/* Fails with "<label>: <path>: <reason>". */
#define BAD(...) ag_fail(em, AG_ERR_INVALID, __VA_ARGS__)

int world_file_in_list(const char *name, const char *const *list) {
  for (size_t i = 0; list[i]; i++)
    if (strcmp(name, list[i]) == 0) return 1;
  return 0;
}

int world_file_check_keys(const cJSON *obj, const char *const *allowed, const char *extra, const char *label,
                          const char *path, ag_errmsg *em) {
  for (const cJSON *c = obj->child; c; c = c->next) {
    /* "_comment" is a note for people (JSON has no comments), allowed in every object and ignored. */
    if (allowed && !world_file_in_list(c->string, allowed) && !(extra && strcmp(c->string, extra) == 0) && strcmp(c->string, "_comment")) {
      const char *near = ag_nearest_name(c->string, allowed, extra);
      return BAD("%s: %s%s%s: unknown field%s%s%s", label, path, *path ? "." : "", c->string,
                 near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
    }
    for (const cJSON *d = obj->child; d != c; d = d->next)
      if (strcmp(d->string, c->string) == 0)
        return BAD("%s: %s%s%s: duplicate field", label, path, *path ? "." : "", c->string);
  }
  return AG_OK;
}

int world_file_get_string(const cJSON *obj, const char *key, int nullable, char **out, const char *label,
                      const char *path, ag_errmsg *em) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) return AG_OK;
  if (nullable && cJSON_IsNull(v)) {
    free(*out);
    *out = NULL;
    return AG_OK;
  }
  if (!cJSON_IsString(v))
    return BAD("%s: %s%s%s: must be a string%s", label, path, *path ? "." : "", key, nullable ? " or null" : "");
  char *s = strdup(v->valuestring);
  if (!s) return AG_ERR_NOMEM;
  free(*out);
  *out = s;
  return AG_OK;
}

int world_file_get_int(const cJSON *obj, const char *key, long min, long max, long *out, const char *label,
                   const char *path, ag_errmsg *em) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) return AG_OK;
  int64_t n = 0;
  int rc = ag_json_int(v, min, max, &n);
  if (rc == AG_ERR_TOO_BIG)
    return BAD("%s: %s%s%s: must be between %ld and %ld", label, path, *path ? "." : "", key, min, max);
  if (rc) return BAD("%s: %s%s%s: must be an integer", label, path, *path ? "." : "", key);
  *out = (long)n;
  return AG_OK;
}

int world_file_get_bool(const cJSON *obj, const char *key, int *out, const char *label, const char *path,
                    ag_errmsg *em) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) return AG_OK;
  if (!cJSON_IsBool(v)) return BAD("%s: %s%s%s: must be true or false", label, path, *path ? "." : "", key);
  *out = cJSON_IsTrue(v);
  return AG_OK;
}
