/* libagora: the world's clock looked at and a virtual clock moved on without blocking (API version 6,
 * include/agora.h): the console's /clock and /advance, on the world's clock driver (world/clock.h), and
 * (API 7) the durations a person types for it. */
#include "lib/agora_int.h"

#include "common/clock.h"
#include "world/duration.h"
#include "world/world_time.h"

void agora__add_time(cJSON *o, const char *key, int has, int64_t ms) {
  char t[AG_TIME_LEN];
  if (!has) {
    cJSON_AddNullToObject(o, key);
    return;
  }
  ag_time_format(ms, t, sizeof t);
  cJSON_AddStringToObject(o, key, t);
}

int agora_clock(agora_world *w, char **json) {
  ag_errmsg em = {""};
  if (!json) return agora__fail(ag_fail(&em, AG_ERR_INVALID, "agora_clock: json is NULL"), &em);
  *json = NULL;
  const world_clock_spec *k = &world_time_spec(w->w)->clock;
  world_clock *c = rt_clock(w->rt);
  int64_t due = 0;
  int has_due = c && !world_clock_next_due(c, &due);
  cJSON *j = cJSON_CreateObject();
  if (!j) return agora__fail(ag_fail(&em, AG_ERR_NOMEM, "out of memory"), &em);
  cJSON_AddStringToObject(j, "mode", world_is_virtual(w->w) ? "virtual" : "real");
  agora__add_time(j, "now", 1, world_now(w->w));
  agora__add_time(j, "next_due", has_due, due);
  agora__add_time(j, "until", k->has_until, k->until_ms);
  cJSON_AddBoolToObject(j, "advancing", c && world_clock_advancing(c));
  return agora__fail(agora__hand_out(j, json, &em), &em);
}

int agora_clock_advance(agora_world *w, int64_t ms) {
  ag_errmsg em = {""};
  world_clock *c = rt_clock(w->rt);
  int rc = AG_OK;
  if (ms <= 0) rc = ag_fail(&em, AG_ERR_INVALID, "agora_clock_advance: %lld ms, expected more than 0", (long long)ms);
  else if (agora__local_only(w, "agora_clock_advance", &em)) rc = AG_ERR_STATE;
  else if (!c) rc = ag_fail(&em, AG_ERR_STATE, "agora_clock_advance: the clock is not driven (AGORA_NO_CLOCK)");
  else if (!world_is_virtual(w->w))
    rc = ag_fail(&em, AG_ERR_STATE, "agora_clock_advance: the clock is real: only a virtual clock advances");
  else if (world_clock_advancing(c))
    rc = ag_fail(&em, AG_ERR_STATE, "agora_clock_advance: the clock is already advancing");
  else rc = world_clock_advance_start(c, ms);
  return agora__fail(rc, &em);
}

int agora_clock_advancing(const agora_world *w) {
  world_clock *c = rt_clock(w->rt);
  return c && world_clock_advancing(c);
}

/* API 7: the world file's durations, for a program that takes one from a person (the console's /advance). */
int agora_duration_parse(const char *text, int64_t *ms) {
  ag_errmsg em = {""};
  int64_t v = 0;
  int rc = !text || !ms ? ag_fail(&em, AG_ERR_INVALID, "agora_duration_parse: %s is NULL", text ? "ms" : "text")
                        : duration_parse(text, &v, &em);
  if (!rc) *ms = v;
  return agora__fail(rc, &em);
}
