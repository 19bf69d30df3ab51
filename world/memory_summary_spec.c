/* An agent's `memory` object, summary mode's part (see memory_summary_spec.h). */
#include "world/memory_summary_spec.h"

#include "world/world_file_get.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const memory_fields[] = {"mode", "summary_tokens", "summary_model", NULL};

int world_memory_summary_read(const cJSON *obj, agent_settings *s, const char *label, const char *path,
                              ag_errmsg *em) {
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "memory");
  if (!m) return AG_OK;
  char at[64];
  snprintf(at, sizeof at, "%s%smemory", path, *path ? "." : "");
  if (!cJSON_IsObject(m)) return ag_fail(em, AG_ERR_INVALID, "%s: %s: must be an object", label, at);
  int rc = world_file_check_keys(m, memory_fields, NULL, label, at, em);
  char *mode = NULL;
  if (!rc) rc = world_file_get_string(m, "mode", 0, &mode, label, at, em);
  if (!rc && mode) {
    if (!strcmp(mode, "window")) s->memory_mode = AGENT_MEMORY_WINDOW;
    else if (!strcmp(mode, "summary")) s->memory_mode = AGENT_MEMORY_SUMMARY;
    else rc = ag_fail(em, AG_ERR_INVALID, "%s: %s.mode: unknown mode '%s' (expected window or summary)", label, at, mode);
  }
  free(mode);
  long n = s->summary_tokens;
  if (!rc) rc = world_file_get_int(m, "summary_tokens", 16, 200000, &n, label, at, em);
  if (!rc) s->summary_tokens = (int)n;
  if (!rc) rc = world_file_get_string(m, "summary_model", 1, &s->summary_model, label, at, em);
  return rc;
}

void world_memory_summary_to_json(const agent_settings *s, cJSON *a) {
  if (s->memory_mode == AGENT_MEMORY_WINDOW && s->summary_tokens == AGENT_SUMMARY_TOKENS && !s->summary_model) return;
  cJSON *m = cJSON_AddObjectToObject(a, "memory");
  if (!m) return;
  cJSON_AddStringToObject(m, "mode", s->memory_mode == AGENT_MEMORY_SUMMARY ? "summary" : "window");
  cJSON_AddNumberToObject(m, "summary_tokens", s->summary_tokens);
  if (s->summary_model) cJSON_AddStringToObject(m, "summary_model", s->summary_model);
}
