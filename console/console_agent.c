/* The console's commands on the agents (issue 15 item 13): /agents lists them, /agent shows one's settings,
 * /set changes its model, prompt or temperature, /clear forgets its memory of this chat, /add adds one (with
 * the settings of a like agent, or --like OTHER's), /remove removes one. Every change goes through libagora,
 * which stores it with the world, so the next console or run sees it. */
#include "console/console_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const providers[] = {"script", "openai", "anthropic", "gemini", "ollama"};

const char *con_provider_name(size_t i) { return i < sizeof providers / sizeof *providers ? providers[i] : NULL; }

int con_cmd_agents(console *c, char *args, ag_errmsg *em) {
  (void)args;
  cJSON *agents = con_agents(c, em);
  const cJSON *a;
  if (!agents) return AG_ERR_NOMEM;
  int limit = con_turn_limit(c);
  if (!cJSON_GetArraySize(agents)) con_print(c, "no agents (add one with /add NAME)\n");
  cJSON_ArrayForEach(a, agents) {
    const char *id = con_str(a, "id"), *name = con_str(a, "name"), *model = con_str(a, "model");
    char named[256] = "", tokens[64] = "";
    if (name && id && strcmp(name, id)) snprintf(named, sizeof named, " (%s)", name);
    double in = con_num(a, "input_tokens", 0), out = con_num(a, "output_tokens", 0);
    if (in || out) snprintf(tokens, sizeof tokens, "  tokens %.0f in, %.0f out", in, out);
    con_print(c, "  %s%s  %s%s%s  turns %d/%d%s%s\n", id ? id : "?", named, con_str(a, "provider"), model ? "/" : "",
              model ? model : "", (int)con_num(a, "turns", 0), limit, tokens,
              cJSON_IsTrue(cJSON_GetObjectItem(a, "thinking")) ? "  thinking" : "");
  }
  cJSON_Delete(agents);
  return AG_OK;
}

/* The agent named and its settings in world-file form (the same place in agora_settings' "agents", which
 * lists them in the order agora_agents does). *agents and *settings are the caller's. */
static int agent_get(console *c, const char *name, cJSON **agents, cJSON **settings, const cJSON **a,
                     const cJSON **s, ag_errmsg *em) {
  *settings = NULL;
  if (!(*agents = con_agents(c, em))) return AG_ERR_NOMEM;
  if (!(*a = con_agent_find(*agents, name, em))) return AG_ERR_NOT_FOUND;
  if (!s) return AG_OK;
  if (!(*settings = con_settings(c, em))) return AG_ERR_NOMEM;
  int i = 0;
  for (const cJSON *x = (*agents)->child; x && x != *a; x = x->next) i++;
  *s = cJSON_GetArrayItem(cJSON_GetObjectItem(*settings, "agents"), i);
  return AG_OK;
}

int con_cmd_agent(console *c, char *args, ag_errmsg *em) {
  if (!args[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /agent NAME");
  cJSON *agents = NULL, *settings = NULL;
  const cJSON *a = NULL, *s = NULL;
  int rc = agent_get(c, args, &agents, &settings, &a, &s, em);
  if (!rc) {
    const char *model = con_str(s, "model"), *url = con_str(s, "base_url"), *prompt = con_str(s, "system_prompt");
    const cJSON *t = cJSON_GetObjectItem(s, "temperature");
    con_print(c, "%s (%s)\n  provider: %s\n  model: %s\n  base_url: %s\n", con_str(a, "id"), con_str(a, "name"),
              con_str(a, "provider"), model ? model : "(provider default)", url ? url : "(provider default)");
    if (cJSON_IsNumber(t)) con_print(c, "  temperature: %g\n", t->valuedouble);
    else con_print(c, "  temperature: (provider default)\n");
    con_print(c, "  prompt: %s\n  turns: %d/%d\n", prompt ? prompt : "(none)", (int)con_num(a, "turns", 0),
              con_turn_limit(c));
  }
  cJSON_Delete(agents);
  cJSON_Delete(settings);
  return rc;
}

/* field = value as an agent's change ({"model": ...}), checked as the console always checked it. */
static cJSON *set_change(const char *field, const char *value, ag_errmsg *em) {
  const char *key = !strcmp(field, "model") ? "model" : !strcmp(field, "prompt") ? "system_prompt" : NULL;
  cJSON *j = cJSON_CreateObject();
  if (!j) return NULL;
  if (key) {
    cJSON_AddStringToObject(j, key, value);
    return j;
  }
  char *end;
  errno = 0;
  double t = strtod(value, &end);
  if (strcmp(field, "temperature"))
    ag_fail(em, AG_ERR_INVALID, "unknown setting '%s' (model, prompt or temperature)", field);
  else if (errno || *end || end == value || !isfinite(t) || t < 0 || t > 2)
    ag_fail(em, AG_ERR_INVALID, "the temperature must be a number from 0 to 2, not '%s'", value);
  else return cJSON_AddNumberToObject(j, "temperature", t), j;
  cJSON_Delete(j);
  return NULL;
}

/* An agent's change (its id, json) made, or rc with em set. */
static int change_agent(console *c, const char *id, const cJSON *change, ag_errmsg *em) {
  char *text = cJSON_PrintUnformatted(change);
  int rc = text ? agora_agent_change(c->w, id, text, NULL) : AG_ERR_NOMEM;
  free(text);
  return rc && rc != AG_ERR_NOMEM ? con_lib_fail(rc, em) : rc;
}

int con_cmd_set(console *c, char *args, ag_errmsg *em) {
  char *name = con_next_word(&args);
  char *field = con_next_word(&args);
  char *value = con_trim(args);
  if (!name[0] || !field[0] || !value[0])
    return ag_fail(em, AG_ERR_INVALID, "usage: /set NAME model|prompt|temperature VALUE");
  cJSON *agents = NULL, *settings = NULL, *change = NULL;
  const cJSON *a = NULL;
  int rc = agent_get(c, name, &agents, &settings, &a, NULL, em);
  if (!rc && !(change = set_change(field, value, em))) rc = em->text[0] ? AG_ERR_INVALID : AG_ERR_NOMEM;
  if (!rc) rc = change_agent(c, con_str(a, "id"), change, em);
  if (!rc) con_print(c, "%s: %s = %s\n", con_str(a, "id"), field, value);
  cJSON_Delete(change);
  cJSON_Delete(agents);
  return rc;
}

int con_cmd_clear(console *c, char *args, ag_errmsg *em) {
  if (!args[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /clear NAME");
  cJSON *agents = NULL, *settings = NULL;
  const cJSON *a = NULL;
  int rc = agent_get(c, args, &agents, &settings, &a, NULL, em);
  if (!rc && (rc = agora_agent_forget(c->w, con_str(a, "id")))) con_lib_fail(rc, em);
  cJSON_Delete(agents);
  return rc;
}

int con_cmd_remove(console *c, char *args, ag_errmsg *em) {
  if (!args[0] || !strcmp(args, "@")) return ag_fail(em, AG_ERR_INVALID, "usage: /remove NAME");
  cJSON *agents = NULL, *settings = NULL;
  const cJSON *a = NULL;
  int rc = agent_get(c, args, &agents, &settings, &a, NULL, em);
  /* The world's main_agent is refused by the library, which says why (docs/console.md). */
  if (!rc && (rc = agora_agent_remove(c->w, con_str(a, "id")))) con_lib_fail(rc, em);
  cJSON_Delete(agents);
  return rc;
}

/* Adds an agent: like (an id, may be NULL) lends its settings, json's fields go on top. A name taken
 * already is said as the console always said it. */
static int add_agent(console *c, const char *like, cJSON *json, ag_errmsg *em) {
  cJSON *agents = con_agents(c, em);
  const char *name = con_str(json, "name");
  const cJSON *a = agents && name ? con_agent_find(agents, name, NULL) : NULL;
  int taken = a != NULL;
  if (a) ag_fail(em, AG_ERR_EXISTS, "an agent with id '%s' already exists", con_str(a, "id"));
  cJSON_Delete(agents);
  if (taken) return AG_ERR_EXISTS;
  char *text = cJSON_PrintUnformatted(json);
  int rc = !text ? AG_ERR_NOMEM : like ? agora_agent_add_like(c->w, like, text, NULL) : agora_agent_add(c->w, text, NULL);
  free(text);
  return rc && rc != AG_ERR_NOMEM ? con_lib_fail(rc, em) : rc;
}

/* What a new agent takes from its like agent: its LLM settings (model, endpoint, key variable, ...), never
 * its prompt, tools, memory or replies: every other field of its settings is taken away. */
static void keep_llm_only(cJSON *json, const cJSON *like_settings) {
  static const char *const llm[] = {"name", "provider", "model", "base_url", "api_key_env", "temperature", "seed",
                                    "max_tokens", "stream", "timeout_ms", "max_retries", "ca_file", "proxy",
                                    "insecure", "system_prompt", "replies"};
  const cJSON *f;
  cJSON_ArrayForEach(f, like_settings) {
    size_t i = 0;
    while (i < sizeof llm / sizeof *llm && strcmp(f->string, llm[i])) i++;
    if (i == sizeof llm / sizeof *llm) cJSON_AddNullToObject(json, f->string);
  }
}

/* "/add dave --like alice": alice's settings (prompt, model, ...), never her replies. */
static int add_like(console *c, const char *name, const char *other, ag_errmsg *em) {
  if (!name[0] || !other[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /add NAME --like OTHER");
  cJSON *agents = NULL, *settings = NULL, *json = cJSON_CreateObject();
  const cJSON *o = NULL;
  int rc = json ? agent_get(c, other, &agents, &settings, &o, NULL, em) : AG_ERR_NOMEM;
  if (!rc) cJSON_AddStringToObject(json, "name", name);
  if (!rc) rc = add_agent(c, con_str(o, "id"), json, em);
  cJSON_Delete(json);
  cJSON_Delete(agents);
  return rc;
}

/* "/add carol", "/add carol openai", "/add Madame Pedagogue openai": after the first word, the last one is
 * the provider (checked, so that a typo is not taken for part of a name). The first agent on the same
 * provider (or the first agent when none is named) lends its LLM settings; the prompt is "You are NAME.". */
int con_cmd_add(console *c, char *args, ag_errmsg *em) {
  char *like = strstr(args, " --like ");
  if (like) {
    *like = '\0';
    return add_like(c, con_trim(args), con_trim(like + 8), em);
  }
  char *provider = strrchr(args, ' '), prompt[512];
  if (provider) *provider++ = '\0';
  char *name = con_trim(args);
  if (!name[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /add NAME [provider]");
  size_t k = 0;
  while (provider && con_provider_name(k) && strcmp(provider, con_provider_name(k))) k++;
  if (provider && !con_provider_name(k))
    return ag_fail(em, AG_ERR_INVALID, "unknown provider '%s' (script, openai, anthropic, gemini or ollama; "
                   "a name with spaces needs its provider after it)", provider);
  cJSON *settings = con_settings(c, em), *json = cJSON_CreateObject(), *s, *tpl = NULL;
  if (!settings || !json) {
    cJSON_Delete(settings);
    cJSON_Delete(json);
    return AG_ERR_NOMEM;
  }
  cJSON_ArrayForEach(s, cJSON_GetObjectItem(settings, "agents")) {
    const char *p = con_str(s, "provider");
    if (!tpl && (!provider || (p && !strcmp(p, provider)))) tpl = s;
  }
  snprintf(prompt, sizeof prompt, "You are %s.", name);
  cJSON_AddStringToObject(json, "name", name);
  cJSON_AddStringToObject(json, "system_prompt", prompt);
  if (tpl) keep_llm_only(json, tpl);
  else cJSON_AddStringToObject(json, "provider", provider ? provider : "script");
  int i = 0;
  for (const cJSON *x = tpl ? cJSON_GetObjectItem(settings, "agents")->child : NULL; x && x != tpl; x = x->next) i++;
  cJSON *agents = tpl ? con_agents(c, em) : NULL;
  const char *like_id = con_str(cJSON_GetArrayItem(agents, i), "id");
  int rc = tpl && !like_id ? AG_ERR_NOMEM : add_agent(c, like_id, json, em);
  cJSON_Delete(agents);
  cJSON_Delete(settings);
  cJSON_Delete(json);
  return rc;
}
