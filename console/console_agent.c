/* The console's commands on one agent (issue 15 item 13): /agent shows its settings, /set changes its
 * model, prompt or temperature, /clear forgets its memory of this chat, /add NAME --like OTHER copies
 * another's settings. Every change is stored with the world, so the next console or run sees it. */
#include "console/console_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static agent *find(console *c, const char *name, ag_errmsg *em) {
  if (name[0] == '@') name++;
  agent *a = name[0] ? world_agent_find(c->cw.w, name) : NULL;
  if (!a) ag_fail(em, AG_ERR_NOT_FOUND, "no agent '%s' in this world (see /agents)", name);
  return a;
}

int con_cmd_agent(console *c, char *args, ag_errmsg *em) {
  if (!args[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /agent NAME");
  agent *a = find(c, args, em);
  if (!a) return AG_ERR_NOT_FOUND;
  const agent_settings *s = agent_settings_of(a);
  const llm_config *l = &s->llm;
  con_print(c, "%s (%s)\n  provider: %s\n  model: %s\n  base_url: %s\n", agent_id(a), agent_name(a),
            llm_provider_name(l->provider), l->model ? l->model : "(provider default)",
            l->base_url ? l->base_url : "(provider default)");
  if (l->has_temperature) con_print(c, "  temperature: %g\n", l->temperature);
  else con_print(c, "  temperature: (provider default)\n");
  con_print(c, "  prompt: %s\n  turns: %d/%d\n", s->system_prompt ? s->system_prompt : "(none)",
            agent_turn_state(a).count, world_turn_limit(c->cw.w));
  return AG_OK;
}

/* Sets field to value in s (a copy of the agent's settings). */
static int set_field(agent_settings *s, const char *field, const char *value, ag_errmsg *em) {
  char **dst = !strcmp(field, "model") ? &s->llm.model : !strcmp(field, "prompt") ? &s->system_prompt : NULL;
  if (dst) {
    char *v = strdup(value);
    if (!v) return AG_ERR_NOMEM;
    free(*dst);
    *dst = v;
    return AG_OK;
  }
  if (strcmp(field, "temperature"))
    return ag_fail(em, AG_ERR_INVALID, "unknown setting '%s' (model, prompt or temperature)", field);
  char *end;
  errno = 0;
  double t = strtod(value, &end);
  if (errno || *end || end == value || !isfinite(t) || t < 0 || t > 2)
    return ag_fail(em, AG_ERR_INVALID, "the temperature must be a number from 0 to 2, not '%s'", value);
  s->llm.temperature = t;
  s->llm.has_temperature = 1;
  return AG_OK;
}

int con_cmd_set(console *c, char *args, ag_errmsg *em) {
  char *name = con_next_word(&args);
  char *field = con_next_word(&args);
  char *value = con_trim(args);
  if (!name[0] || !field[0] || !value[0])
    return ag_fail(em, AG_ERR_INVALID, "usage: /set NAME model|prompt|temperature VALUE");
  agent *a = find(c, name, em);
  if (!a) return AG_ERR_NOT_FOUND;
  agent_settings s;
  int rc = agent_settings_copy(&s, agent_settings_of(a));
  if (rc) return rc;
  if (!(rc = set_field(&s, field, value, em)) && !(rc = world_update_agent(c->cw.w, &s, em)) &&
      !(rc = chat_session_save_world(c->cw.cs, em)))
    con_print(c, "%s: %s = %s\n", agent_id(a), field, value);
  agent_settings_free(&s);
  return rc;
}

int con_cmd_clear(console *c, char *args, ag_errmsg *em) {
  if (!args[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /clear NAME");
  agent *a = find(c, args, em);
  if (!a) return AG_ERR_NOT_FOUND;
  return chat_session_clear_agent(c->cw.cs, agent_id(a), em);
}

int con_add_like(console *c, const char *name, const char *other, ag_errmsg *em) {
  if (!name[0] || !other[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /add NAME --like OTHER");
  agent *o = find(c, other, em);
  if (!o) return AG_ERR_NOT_FOUND;
  agent_settings s;
  int rc = agent_settings_copy(&s, agent_settings_of(o));
  if (rc) return rc;
  char *n = strdup(name);
  if (!n) rc = AG_ERR_NOMEM;
  else {
    free(s.name);
    s.name = n;
    /* The other's scripted replies are its own; the newcomer says its fallback line. */
    llm_script_options_free(&s.llm.script);
    memset(&s.llm.script, 0, sizeof s.llm.script);
  }
  if (!rc && !(rc = world_add_agent(c->cw.w, &s, em))) rc = chat_session_save_world(c->cw.cs, em);
  agent_settings_free(&s);
  return rc;
}
