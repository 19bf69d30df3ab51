/* Loading `variables`, `clock`, `schedule` and `wait` steps of a world file, and checking every
 * `{{name}}` at load so a typo fails now, not at 09:00 on day three (docs/time.md). */
#include "world/world_time.h"

#include "common/buf.h"
#include "common/clock.h"
#include "world/duration.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BAD(...) ag_fail(em, AG_ERR_INVALID, __VA_ARGS__)

static const char *const clock_fields[] = {"mode", "start", "until", NULL};
static const char *const sched_fields[] = {"cron", "every", "at", "from", "text", "when_busy", NULL};

/* An instant field of obj (path.key) into *ms; *has set when present. */
static int read_instant(const cJSON *obj, const char *key, int64_t *ms, int *has, const char *label,
                        const char *path, ag_errmsg *em) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v || cJSON_IsNull(v)) return AG_OK;
  if (!cJSON_IsString(v) || ag_time_parse_rfc3339(v->valuestring, ms))
    return BAD("%s: %s.%s: must be an RFC 3339 instant like \"2026-03-01T08:00:00Z\"", label, path, key);
  *has = 1;
  return AG_OK;
}

static int read_variables(const cJSON *root, world_spec *spec, const char *label, ag_errmsg *em) {
  const cJSON *vars = cJSON_GetObjectItemCaseSensitive(root, "variables");
  if (!vars || cJSON_IsNull(vars)) return AG_OK;
  if (!cJSON_IsObject(vars)) return BAD("%s: variables: must be an object of strings", label);
  size_t n = (size_t)cJSON_GetArraySize(vars);
  spec->var_names = calloc(n ? n : 1, sizeof *spec->var_names);
  spec->var_values = calloc(n ? n : 1, sizeof *spec->var_values);
  if (!spec->var_names || !spec->var_values) return AG_ERR_NOMEM;
  int rc = world_file_check_keys(vars, NULL, NULL, label, "variables", em);
  if (rc) return rc;
  for (const cJSON *v = vars->child; v; v = v->next) {
    if (!template_name_valid(v->string))
      return BAD("%s: variables.%s: invalid name: a letter or '_' then letters, digits, '_'", label, v->string);
    if (!cJSON_IsString(v)) return BAD("%s: variables.%s: must be a string", label, v->string);
    size_t i = spec->n_vars++;
    if (!(spec->var_names[i] = strdup(v->string)) || !(spec->var_values[i] = strdup(v->valuestring)))
      return AG_ERR_NOMEM;
  }
  return AG_OK;
}

static int read_clock(const cJSON *root, world_spec *spec, const char *label, ag_errmsg *em) {
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "clock");
  if (!c || cJSON_IsNull(c)) return AG_OK;
  if (!cJSON_IsObject(c)) return BAD("%s: clock: must be an object", label);
  int rc = world_file_check_keys(c, clock_fields, NULL, label, "clock", em);
  if (rc) return rc;
  const cJSON *mode = cJSON_GetObjectItemCaseSensitive(c, "mode");
  if (mode) {
    if (!cJSON_IsString(mode) || (strcmp(mode->valuestring, "real") && strcmp(mode->valuestring, "virtual")))
      return BAD("%s: clock.mode: must be \"real\" or \"virtual\"", label);
    spec->clock.is_virtual = strcmp(mode->valuestring, "virtual") == 0;
  }
  world_clock_spec *k = &spec->clock;
  if ((rc = read_instant(c, "start", &k->start_ms, &k->has_start, label, "clock", em)) ||
      (rc = read_instant(c, "until", &k->until_ms, &k->has_until, label, "clock", em)))
    return rc;
  if (k->has_start && !k->is_virtual)
    return BAD("%s: clock.start: only a virtual clock has a start (a real clock reads the wall time)", label);
  if (k->has_start && k->has_until && k->until_ms <= k->start_ms)
    return BAD("%s: clock.until: must be after clock.start", label);
  return AG_OK;
}

/* The one of cron/every/at an item has, parsed. */
static int read_when(const cJSON *it, world_sched_item *s, const char *label, const char *path, ag_errmsg *em) {
  static const char *const keys[] = {"cron", "every", "at"};
  const cJSON *v = NULL;
  int found = 0;
  for (int k = 0; k < 3; k++) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(it, keys[k]);
    if (!x) continue;
    if (found++) return BAD("%s: %s: give exactly one of cron, every, at", label, path);
    v = x;
    s->kind = (world_sched_kind)k;
  }
  if (!v) return BAD("%s: %s: missing when (one of cron, every, at)", label, path);
  if (!cJSON_IsString(v)) return BAD("%s: %s.%s: must be a string", label, path, v->string);
  ag_errmsg why = {""};
  int rc = AG_OK;
  if (s->kind == WORLD_SCHED_CRON) rc = cron_parse(v->valuestring, &s->cron, &why);
  else if (s->kind == WORLD_SCHED_EVERY) rc = duration_parse(v->valuestring, &s->ms, &why);
  else if (ag_time_parse_rfc3339(v->valuestring, &s->ms))
    rc = ag_fail(&why, AG_ERR_INVALID, "'%s' is not an RFC 3339 instant like \"2026-03-03T12:00:00Z\"",
                 v->valuestring);
  if (rc) return BAD("%s: %s.%s: %s", label, path, v->string, why.text);
  return (s->spec = strdup(v->valuestring)) ? AG_OK : AG_ERR_NOMEM;
}

static int read_item(const cJSON *it, world_spec *spec, world_sched_item *s, const char *label, const char *path,
                     ag_errmsg *em) {
  if (!cJSON_IsObject(it)) return BAD("%s: %s: must be an object", label, path);
  int rc = world_file_check_keys(it, sched_fields, NULL, label, path, em);
  if (rc || (rc = read_when(it, s, label, path, em))) return rc;
  if (s->kind == WORLD_SCHED_AT && spec->clock.is_virtual && spec->clock.has_start && s->ms < spec->clock.start_ms)
    return BAD("%s: %s.at: before clock.start (it would never fire)", label, path);
  const cJSON *from = cJSON_GetObjectItemCaseSensitive(it, "from");
  const cJSON *text = cJSON_GetObjectItemCaseSensitive(it, "text");
  const cJSON *busy = cJSON_GetObjectItemCaseSensitive(it, "when_busy");
  if (!from) return BAD("%s: %s.from: missing (who says it: human, world, system or an agent)", label, path);
  if (!cJSON_IsString(from) || !from->valuestring[0]) return BAD("%s: %s.from: must be a non-empty string", label, path);
  if (!text) return BAD("%s: %s.text: missing", label, path);
  if (!cJSON_IsString(text)) return BAD("%s: %s.text: must be a string", label, path);
  if (busy && (!cJSON_IsString(busy) || (strcmp(busy->valuestring, "queue") && strcmp(busy->valuestring, "skip"))))
    return BAD("%s: %s.when_busy: must be \"queue\" or \"skip\"", label, path);
  s->skip_when_busy = busy && strcmp(busy->valuestring, "skip") == 0;
  if (!(s->from = strdup(from->valuestring)) || !(s->text = strdup(text->valuestring))) return AG_ERR_NOMEM;
  return AG_OK;
}

int world_time_read(const cJSON *root, world_spec *spec, const char *label, ag_errmsg *em) {
  int rc = read_variables(root, spec, label, em);
  if (rc || (rc = read_clock(root, spec, label, em))) return rc;
  const cJSON *sched = cJSON_GetObjectItemCaseSensitive(root, "schedule");
  if (!sched || cJSON_IsNull(sched)) return AG_OK;
  if (!cJSON_IsArray(sched)) return BAD("%s: schedule: must be an array", label);
  size_t n = (size_t)cJSON_GetArraySize(sched);
  if (!(spec->sched = calloc(n ? n : 1, sizeof *spec->sched))) return AG_ERR_NOMEM;
  for (const cJSON *it = sched->child; it; it = it->next) {
    char path[32];
    snprintf(path, sizeof path, "schedule[%zu]", spec->n_sched);
    if ((rc = read_item(it, spec, &spec->sched[spec->n_sched++], label, path, em))) return rc;
  }
  return AG_OK;
}

int world_time_read_wait(const cJSON *st, world_step *step, const char *label, const char *path, ag_errmsg *em) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(st, "wait");
  if (st->child->next) return BAD("%s: %s: a wait step takes no other field", label, path);
  if (!cJSON_IsString(v)) return BAD("%s: %s.wait: must be a duration like \"2h\"", label, path);
  ag_errmsg why = {""};
  if (duration_parse(v->valuestring, &step->wait_ms, &why)) return BAD("%s: %s.wait: %s", label, path, why.text);
  return AG_OK;
}

/* "Ann, Ben": the agents' names (caller frees). */
static char *agent_names(const world_spec *spec) {
  ag_buf b;
  ag_buf_init(&b, 1u << 20);
  for (size_t i = 0; i < spec->n_agents; i++)
    if ((i && ag_buf_appends(&b, ", ")) || ag_buf_appends(&b, spec->agents[i].name)) break;
  return ag_buf_take(&b);
}

int world_time_vars(const world_spec *spec, const char *agents, const char *agent_name, template_vars **out) {
  template_vars *v = NULL;
  char *own = agents ? NULL : agent_names(spec), limit[24];
  int rc = template_vars_new(&v);
  for (size_t i = 0; !rc && i < spec->n_vars; i++) rc = template_vars_set(v, spec->var_names[i], spec->var_values[i]);
  snprintf(limit, sizeof limit, "%d", spec->turn_limit);
  if (!rc) rc = template_vars_set_builtin(v, "world", spec->name);
  if (!rc) rc = template_vars_set_builtin(v, "agents", agents ? agents : own ? own : "");
  if (!rc) rc = template_vars_set_builtin(v, "turn_limit", limit);
  if (!rc && agent_name) rc = template_vars_set_builtin(v, "agent", agent_name);
  static const char *const later[] = {"date", "time", "weekday"};
  for (int i = 0; !rc && i < 3; i++) rc = template_vars_set_builtin(v, later[i], NULL);
  free(own);
  if (rc) template_vars_free(v);
  else *out = v;
  return rc;
}

/* One text against v; the error names path. */
static int check_text(const char *text, const template_vars *v, const char *label, const char *path, ag_errmsg *em) {
  ag_errmsg why = {""};
  if (!text || !template_check(text, v, &why)) return AG_OK;
  return BAD("%s: %s: %s", label, path, why.text);
}

int world_time_check(const world_spec *spec, const char *label, ag_errmsg *em) {
  template_vars *v = NULL;
  char path[64];
  int rc = world_time_vars(spec, NULL, NULL, &v);
  for (size_t i = 0; !rc && i < spec->n_sched; i++) {
    snprintf(path, sizeof path, "schedule[%zu].text", i);
    rc = check_text(spec->sched[i].text, v, label, path, em);
  }
  for (size_t i = 0; !rc && i < spec->n_steps; i++) {
    snprintf(path, sizeof path, "script[%zu].text", i);
    rc = check_text(spec->steps[i].text, v, label, path, em);
  }
  if (!rc) rc = template_vars_set_builtin(v, "agent", "");
  for (size_t i = 0; !rc && i < spec->n_agents; i++) {
    snprintf(path, sizeof path, "agents[%zu].system_prompt", i);
    rc = check_text(spec->agents[i].system_prompt, v, label, path, em);
  }
  template_vars_free(v);
  return rc;
}

void world_time_to_json(const world_spec *spec, cJSON *w) {
  if (spec->n_vars) {
    cJSON *vars = cJSON_AddObjectToObject(w, "variables");
    for (size_t i = 0; vars && i < spec->n_vars; i++) cJSON_AddStringToObject(vars, spec->var_names[i], spec->var_values[i]);
  }
  const world_clock_spec *k = &spec->clock;
  if (k->is_virtual || k->has_until) {
    cJSON *c = cJSON_AddObjectToObject(w, "clock");
    char t[AG_TIME_LEN];
    if (c) cJSON_AddStringToObject(c, "mode", k->is_virtual ? "virtual" : "real");
    if (c && k->has_start) ag_time_format(k->start_ms, t, sizeof t), cJSON_AddStringToObject(c, "start", t);
    if (c && k->has_until) ag_time_format(k->until_ms, t, sizeof t), cJSON_AddStringToObject(c, "until", t);
  }
  if (!spec->n_sched) return;
  static const char *const keys[] = {"cron", "every", "at"};
  cJSON *a = cJSON_AddArrayToObject(w, "schedule");
  for (size_t i = 0; a && i < spec->n_sched; i++) {
    const world_sched_item *s = &spec->sched[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, keys[s->kind], s->spec);
    cJSON_AddStringToObject(o, "from", s->from);
    cJSON_AddStringToObject(o, "text", s->text);
    if (s->skip_when_busy) cJSON_AddStringToObject(o, "when_busy", "skip");
    cJSON_AddItemToArray(a, o);
  }
}

int world_time_copy(world_spec *dst, const world_spec *src) {
  dst->clock = src->clock;
  dst->var_names = calloc(src->n_vars + 1, sizeof *dst->var_names);
  dst->var_values = calloc(src->n_vars + 1, sizeof *dst->var_values);
  dst->sched = calloc(src->n_sched + 1, sizeof *dst->sched);
  if (!dst->var_names || !dst->var_values || !dst->sched) return AG_ERR_NOMEM;
  for (; dst->n_vars < src->n_vars; dst->n_vars++) {
    size_t i = dst->n_vars;
    if (!(dst->var_names[i] = strdup(src->var_names[i])) || !(dst->var_values[i] = strdup(src->var_values[i])))
      return AG_ERR_NOMEM;
  }
  for (; dst->n_sched < src->n_sched; dst->n_sched++) {
    world_sched_item *d = &dst->sched[dst->n_sched];
    const world_sched_item *s = &src->sched[dst->n_sched];
    *d = *s;
    d->spec = strdup(s->spec);
    d->from = strdup(s->from);
    d->text = strdup(s->text);
    if (!d->spec || !d->from || !d->text) return AG_ERR_NOMEM;
  }
  return AG_OK;
}

void world_time_free(world_spec *spec) {
  for (size_t i = 0; i < spec->n_vars; i++) {
    free(spec->var_names ? spec->var_names[i] : NULL);
    free(spec->var_values ? spec->var_values[i] : NULL);
  }
  free(spec->var_names);
  free(spec->var_values);
  for (size_t i = 0; i < spec->n_sched; i++) {
    free(spec->sched[i].spec);
    free(spec->sched[i].from);
    free(spec->sched[i].text);
  }
  free(spec->sched);
  spec->var_names = spec->var_values = NULL;
  spec->sched = NULL;
  spec->n_vars = spec->n_sched = 0;
}
