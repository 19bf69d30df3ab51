/* Strict world-file loading: unknown fields, wrong types, missing names, duplicate ids, unknown
 * providers and out-of-range numbers are errors naming the JSON path, because a typo in a world file
 * must never pass silently. */
#include "world/world_file.h"

#include "common/buf.h"
#include "common/nearest.h"
#include "net/net_opts.h"
#include "common/jsonnum.h"
#include "common/strset.h"
#include "storage/store.h"
#include "world/llm_spec.h"
#include "world/mcp_spec.h"
#include "world/memory_spec.h"
#include "world/world_time.h"
#include "world/world_file_get.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Fails with "<label>: <path>: <reason>". */
#define BAD(...) ag_fail(em, AG_ERR_INVALID, __VA_ARGS__)

static const char *const world_fields[] = {"name", "description", "turn_limit", "memory_window", "main_agent",
                                           "defaults", "agents", "script", "variables", "clock", "schedule",
                                           "mcp_servers", "budget", "pricing", "llm_cache", "rate_limits", NULL};
/* Agent settings that may also stand in "defaults" (everything but the name). */
static const char *const setting_fields[] = {"provider", "model", "base_url", "api_key_env", "temperature", "seed",
                                             "max_tokens", "stream", "timeout_ms", "max_retries",
                                             "system_prompt", "replies", "auto_reply", "tools", "monadic",
                                             "tool_support", "ca_file", "proxy", "insecure", "context_tokens",
                                             "memory", NULL};
static const char *const step_fields[] = {"from", "text", "new_chat", "wait", NULL};

/* A scripted reply that calls a tool: {"tool": NAME, "args": {...}, "text": optional}. The name is
 * not checked against the agent's tools: a script may call an unknown tool on purpose. */
static int script_tool_entry(const cJSON *r, char *why, size_t cap) {
  if (!cJSON_IsObject(r)) return 0;
  for (const cJSON *c = r->child; c; c = c->next) {
    if (strcmp(c->string, "tool") && strcmp(c->string, "args") && strcmp(c->string, "text")) {
      snprintf(why, cap, "unknown field '%s' in a tool call (tool, args, text)", c->string);
      return 0;
    }
  }
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(r, "tool");
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(r, "args");
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(r, "text");
  if (!cJSON_IsString(t) || !t->valuestring[0]) snprintf(why, cap, "tool: must be a tool's name");
  else if (a && !cJSON_IsObject(a)) snprintf(why, cap, "args: must be an object");
  else if (x && !cJSON_IsString(x)) snprintf(why, cap, "text: must be a string");
  else return 1;
  return 0;
}

/* "tools": ["load_context", {"name": "send_message", "approve": true}, ...] */
static int read_tools(const cJSON *v, agent_settings *s, const char *label, const char *path, ag_errmsg *em) {
  const char *dot = *path ? "." : "";
  if (!cJSON_IsArray(v)) return BAD("%s: %s%stools: must be an array of tool names", label, path, dot);
  unsigned tools = 0, approve = 0;
  size_t i = 0;
  agent_mcp_refs_free(s->mcp, s->n_mcp); /* the agent's list replaces the defaults' */
  s->mcp = NULL;
  s->n_mcp = 0;
  for (const cJSON *t = v->child; t; t = t->next, i++) {
    const cJSON *name = t;
    int needs = 0;
    if (cJSON_IsObject(t)) {
      for (const cJSON *c = t->child; c; c = c->next)
        if (strcmp(c->string, "name") && strcmp(c->string, "approve") && strcmp(c->string, "as"))
          return BAD("%s: %s%stools[%zu].%s: unknown field", label, path, dot, i, c->string);
      name = cJSON_GetObjectItemCaseSensitive(t, "name");
      const cJSON *ap = cJSON_GetObjectItemCaseSensitive(t, "approve");
      if (ap && !cJSON_IsBool(ap)) return BAD("%s: %s%stools[%zu].approve: must be true or false", label, path, dot, i);
      needs = cJSON_IsTrue(ap);
    }
    tool_id id;
    if (!cJSON_IsString(name))
      return BAD("%s: %s%stools[%zu]: must be a tool name or {\"name\", \"approve\"}", label, path, dot, i);
    if (strchr(name->valuestring, '.')) { /* an MCP server's tool: SERVER.TOOL or SERVER.* */
      char sub[96];
      snprintf(sub, sizeof sub, "%s%stools[%zu]", path, dot, i);
      int rc = world_mcp_read_ref(t, name->valuestring, s, label, sub, em);
      if (rc) return rc;
      continue;
    }
    if (cJSON_GetObjectItemCaseSensitive(t, "as"))
      return BAD("%s: %s%stools[%zu].as: only for an MCP server's tool (SERVER.TOOL)", label, path, dot, i);
    if (tool_parse(name->valuestring, &id))
      return BAD("%s: %s%stools[%zu]: unknown tool '%s' (load_context, save_context, send_message, ask_human)", label, path,
                 dot, i, name->valuestring);
    tools |= TOOL_BIT(id);
    if (needs) approve |= TOOL_BIT(id);
  }
  s->tools = tools;
  s->approve = approve;
  return AG_OK;
}

/* "replies": ["text", {"tool": NAME, "args": {...}, "text": optional}, ...] into the script provider's
 * typed options (replacing any from the defaults). */
static int read_replies(const cJSON *v, agent_settings *s, const char *label, const char *path, ag_errmsg *em) {
  const char *dot = *path ? "." : "";
  if (!cJSON_IsArray(v)) return BAD("%s: %s%sreplies: must be an array of strings", label, path, dot);
  llm_script_options o = {0};
  size_t count = (size_t)cJSON_GetArraySize(v);
  o.replies = calloc(count ? count : 1, sizeof *o.replies);
  if (!o.replies) return AG_ERR_NOMEM;
  size_t i = 0;
  int rc = AG_OK;
  for (const cJSON *r = v->child; r; r = r->next, i++) {
    char why[128] = "";
    llm_script_reply *out = &o.replies[i];
    o.n_replies = i + 1;
    if (cJSON_IsString(r)) {
      if (!(out->text = strdup(r->valuestring))) rc = AG_ERR_NOMEM;
    } else if (script_tool_entry(r, why, sizeof why)) {
      const cJSON *args = cJSON_GetObjectItemCaseSensitive(r, "args");
      const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "text"));
      out->tool = strdup(cJSON_GetObjectItemCaseSensitive(r, "tool")->valuestring);
      out->args_json = args ? cJSON_PrintUnformatted(args) : NULL;
      out->text = text ? strdup(text) : NULL;
      if (!out->tool || (args && !out->args_json) || (text && !out->text)) rc = AG_ERR_NOMEM;
    } else if (why[0]) {
      rc = BAD("%s: %s%sreplies[%zu]: %s", label, path, dot, i, why);
    } else {
      rc = BAD("%s: %s%sreplies[%zu]: must be a string or a tool call {\"tool\", \"args\"}", label, path, dot, i);
    }
    if (rc) break;
  }
  if (rc) {
    llm_script_options_free(&o);
    return rc;
  }
  llm_script_options_free(&s->llm.script);
  s->llm.script = o;
  return AG_OK;
}

/* ca_file (checked now, so a bad path is a load error naming the field), proxy, insecure. */
static int read_net(const cJSON *obj, agent_settings *s, const char *label, const char *path, ag_errmsg *em) {
  int rc;
  if ((rc = world_file_get_string(obj, "ca_file", 1, &s->llm.ca_file, label, path, em))) return rc;
  if ((rc = world_file_get_string(obj, "proxy", 1, &s->llm.proxy, label, path, em))) return rc;
  if ((rc = world_file_get_bool(obj, "insecure", &s->llm.insecure, label, path, em))) return rc;
  char why[400];
  if (cJSON_GetObjectItemCaseSensitive(obj, "ca_file") && s->llm.ca_file &&
      net_opts_check_ca_file(s->llm.ca_file, why, sizeof why))
    return BAD("%s: %s%sca_file: %s", label, path, *path ? "." : "", why);
  return AG_OK;
}

/* Applies the settings present in obj on top of s (defaults first, then the agent's own). */
static int read_settings(const cJSON *obj, agent_settings *s, const char *label, const char *path,
                         ag_errmsg *em) {
  int rc;
  const char *dot = *path ? "." : "";
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "provider");
  if (v) {
    if (!cJSON_IsString(v)) return BAD("%s: %s%sprovider: must be a string", label, path, dot);
    if (llm_provider_parse(v->valuestring, &s->llm.provider))
      return BAD("%s: %s%sprovider: unknown provider '%s' (expected script, openai, anthropic, gemini or "
                 "ollama)", label, path, dot, v->valuestring);
  }
  if ((rc = world_file_get_string(obj, "model", 1, &s->llm.model, label, path, em))) return rc;
  if ((rc = world_file_get_string(obj, "base_url", 1, &s->llm.base_url, label, path, em))) return rc;
  if ((rc = world_file_get_string(obj, "api_key_env", 1, &s->llm.api_key_env, label, path, em))) return rc;
  if ((rc = world_file_get_string(obj, "system_prompt", 1, &s->system_prompt, label, path, em))) return rc;
  v = cJSON_GetObjectItemCaseSensitive(obj, "temperature");
  if (v) {
    if (!cJSON_IsNumber(v)) return BAD("%s: %s%stemperature: must be a number", label, path, dot);
    if (!(v->valuedouble >= 0 && v->valuedouble <= 2))
      return BAD("%s: %s%stemperature: must be between 0 and 2", label, path, dot);
    s->llm.temperature = v->valuedouble;
    s->llm.has_temperature = 1;
  }
  long n;
  n = s->llm.max_tokens;
  if ((rc = world_file_get_int(obj, "max_tokens", 1, 10000000, &n, label, path, em))) return rc;
  s->llm.max_tokens = (int)n;
  n = s->llm.seed; /* 2^31 - 1: the largest every seed-taking provider accepts */
  if (cJSON_GetObjectItemCaseSensitive(obj, "seed") && !(rc = world_file_get_int(obj, "seed", 0, 2147483647L, &n, label, path, em)))
    s->llm.seed = n, s->llm.has_seed = 1;
  if (rc) return rc;
  n = s->llm.timeout_ms;
  if ((rc = world_file_get_int(obj, "timeout_ms", 1, 86400000, &n, label, path, em))) return rc;
  s->llm.timeout_ms = n;
  n = s->llm.max_retries;
  if ((rc = world_file_get_int(obj, "max_retries", 0, 20, &n, label, path, em))) return rc;
  s->llm.max_retries = (int)n;
  if ((rc = world_file_get_bool(obj, "stream", &s->llm.stream, label, path, em))) return rc;
  if ((rc = read_net(obj, s, label, path, em))) return rc;
  if ((rc = world_file_get_bool(obj, "auto_reply", &s->auto_reply, label, path, em))) return rc;
  if ((rc = world_file_get_bool(obj, "monadic", &s->monadic, label, path, em))) return rc;
  if ((rc = world_file_get_bool(obj, "tool_support", &s->tool_support, label, path, em))) return rc;
  n = s->context_tokens; /* from 64: a budget smaller than a short message and its framing is a typo */
  if ((rc = world_file_get_int(obj, "context_tokens", 64, 100000000, &n, label, path, em))) return rc;
  s->context_tokens = (int)n;
  if ((rc = world_memory_read(obj, &s->memory, label, path, em))) return rc;
  v = cJSON_GetObjectItemCaseSensitive(obj, "tools");
  if (v && (rc = read_tools(v, s, label, path, em))) return rc;
  v = cJSON_GetObjectItemCaseSensitive(obj, "replies");
  if (v && (rc = read_replies(v, s, label, path, em))) return rc;
  return AG_OK;
}

static int read_agents(const cJSON *root, const agent_settings *defaults, world_spec *spec, const char *label,
                       ag_errmsg *em) {
  const cJSON *agents = cJSON_GetObjectItemCaseSensitive(root, "agents");
  if (!agents) return AG_OK;
  if (!cJSON_IsArray(agents)) return BAD("%s: agents: must be an array", label);
  size_t count = (size_t)cJSON_GetArraySize(agents);
  spec->agents = calloc(count ? count : 1, sizeof *spec->agents);
  if (!spec->agents) return AG_ERR_NOMEM;
  /* The ids seen so far, for the duplicate check (computed once per agent, hashed: a world may hold
   * many thousands of agents). */
  char (*ids)[MENTION_ID_MAX] = calloc(count ? count : 1, sizeof *ids);
  if (!ids) return AG_ERR_NOMEM;
  ag_strset seen = {0};
  size_t i = 0;
  int rc = AG_OK;
  for (const cJSON *a = agents->child; a; a = a->next, i++) {
    char path[32];
    snprintf(path, sizeof path, "agents[%zu]", i);
    if (!cJSON_IsObject(a)) {
      rc = BAD("%s: %s: must be an object", label, path);
      break;
    }
    if ((rc = agent_settings_copy(&spec->agents[i], defaults))) break;
    spec->n_agents = i + 1;
    if ((rc = world_file_check_keys(a, setting_fields, "name", label, path, em))) break;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(a, "name");
    char id[MENTION_ID_MAX];
    if (!name) rc = BAD("%s: %s.name: missing (every agent needs a name)", label, path);
    else if (!cJSON_IsString(name)) rc = BAD("%s: %s.name: must be a string", label, path);
    else if (mention_id_from_name(name->valuestring, id, sizeof id))
      rc = BAD("%s: %s.name: invalid name '%s': it must start with a letter or digit and contain only "
               "letters, digits, '_', '-' and spaces", label, path, name->valuestring);
    if (rc) break;
    memcpy(ids[i], id, sizeof id);
    if ((rc = ag_strset_add(&seen, ids[i])) == AG_ERR_EXISTS) {
      size_t j = 0;
      while (strcmp(ids[j], id)) j++; /* once, on the error path */
      rc = BAD("%s: %s.name: duplicate agent id '%s' (agents[%zu] has it too)", label, path, id, j);
    }
    if (rc) break;
    if (!(spec->agents[i].name = strdup(name->valuestring))) rc = AG_ERR_NOMEM;
    if (rc || (rc = read_settings(a, &spec->agents[i], label, path, em))) break;
  }
  ag_strset_clear(&seen);
  free(ids);
  return rc;
}

/* A step's sender: human (or its aliases user and you), world, system, or an agent of the world by name or
 * id. Anything else is a typo that would publish as a stranger, so it is refused with the nearest name. */
static int check_from(const world_spec *spec, const char *from, const char *label, const char *path, ag_errmsg *em) {
  static const char *const roles[] = {"human", "user", "you", "world", "system"};
  for (size_t i = 0; i < sizeof roles / sizeof *roles; i++)
    if (!strcasecmp(from, roles[i])) return AG_OK;
  char want[MENTION_ID_MAX] = "", id[MENTION_ID_MAX];
  mention_id_from_name(from, want, sizeof want);
  const char **names = calloc(spec->n_agents + 4, sizeof *names);
  if (!names) return AG_ERR_NOMEM;
  names[0] = "human";
  names[1] = "world";
  names[2] = "system";
  int rc = AG_OK;
  for (size_t i = 0; i < spec->n_agents; i++) {
    names[i + 3] = spec->agents[i].name;
    if (!mention_id_from_name(spec->agents[i].name, id, sizeof id) && want[0] && !strcmp(id, want)) goto done;
  }
  const char *near = ag_nearest_name(from, names, NULL);
  char hint[STORE_ID_MAX + 32] = "";
  if (near) snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
  rc = BAD("%s: %s.from: '%s' is not an agent%s; a step comes from human, world, system or an agent of the "
           "world", label, path, from, hint);
done:
  free(names);
  return rc;
}

static int read_script(const cJSON *root, world_spec *spec, const char *label, ag_errmsg *em) {
  const cJSON *script = cJSON_GetObjectItemCaseSensitive(root, "script");
  if (!script || cJSON_IsNull(script)) return AG_OK;
  if (!cJSON_IsArray(script)) return BAD("%s: script: must be an array", label);
  size_t count = (size_t)cJSON_GetArraySize(script);
  spec->steps = calloc(count ? count : 1, sizeof *spec->steps);
  if (!spec->steps) return AG_ERR_NOMEM;
  size_t i = 0;
  for (const cJSON *st = script->child; st; st = st->next, i++) {
    char path[32];
    snprintf(path, sizeof path, "script[%zu]", i);
    if (!cJSON_IsObject(st)) return BAD("%s: %s: must be an object", label, path);
    int rc = world_file_check_keys(st, step_fields, NULL, label, path, em);
    if (rc) return rc;
    spec->n_steps = i + 1;
    world_step *step = &spec->steps[i];
    const cJSON *nc = cJSON_GetObjectItemCaseSensitive(st, "new_chat");
    if (nc) {
      if (!cJSON_IsTrue(nc)) return BAD("%s: %s.new_chat: must be true", label, path);
      if (st->child->next) return BAD("%s: %s: a new_chat step takes no other field", label, path);
      step->new_chat = 1;
      continue;
    }
    if (cJSON_GetObjectItemCaseSensitive(st, "wait")) {
      if ((rc = world_time_read_wait(st, step, label, path, em))) return rc;
      continue;
    }
    const cJSON *from = cJSON_GetObjectItemCaseSensitive(st, "from");
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(st, "text");
    if (!from) return BAD("%s: %s.from: missing (who says it: human, world, system or an agent)", label, path);
    if (!cJSON_IsString(from) || !from->valuestring[0])
      return BAD("%s: %s.from: must be a non-empty string", label, path);
    if (!text) return BAD("%s: %s.text: missing", label, path);
    if (!cJSON_IsString(text)) return BAD("%s: %s.text: must be a string", label, path);
    /* Checked here, not when the message is saved half-way through a run. */
    if (strlen(from->valuestring) > STORE_ID_LEN)
      return BAD("%s: %s.from: longer than %d bytes", label, path, STORE_ID_LEN);
    if (strlen(text->valuestring) > STORE_TEXT_LEN)
      return BAD("%s: %s.text: longer than %d bytes", label, path, STORE_TEXT_LEN);
    if ((rc = check_from(spec, from->valuestring, label, path, em))) return rc;
    if (!(step->from = strdup(from->valuestring)) || !(step->text = strdup(text->valuestring)))
      return AG_ERR_NOMEM;
  }
  return AG_OK;
}

/* `name`: required, a string that makes a valid id (spec->id) */
static int read_name(const cJSON *root, world_spec *spec, const char *label, ag_errmsg *em) {
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
  if (!name) return BAD("%s: name: missing (every world needs a name)", label);
  if (!cJSON_IsString(name)) return BAD("%s: name: must be a string", label);
  if (mention_id_from_name(name->valuestring, spec->id, sizeof spec->id))
    return BAD("%s: name: invalid world name '%s': it must start with a letter or digit and contain only "
               "letters, digits, '_', '-' and spaces", label, name->valuestring);
  return (spec->name = strdup(name->valuestring)) ? AG_OK : AG_ERR_NOMEM;
}

/* `main_agent`: null, or the name or id of one of the agents read already; spec->main_agent gets its id. */
static int read_main_agent(const cJSON *root, world_spec *spec, const char *label, ag_errmsg *em) {
  const cJSON *main_agent = cJSON_GetObjectItemCaseSensitive(root, "main_agent");
  if (!main_agent || cJSON_IsNull(main_agent)) return AG_OK;
  if (!cJSON_IsString(main_agent)) return BAD("%s: main_agent: must be an agent's name or id, or null", label);
  char want[MENTION_ID_MAX] = "";
  mention_id_from_name(main_agent->valuestring, want, sizeof want);
  for (size_t i = 0; i < spec->n_agents && !spec->main_agent; i++) {
    char id[MENTION_ID_MAX];
    mention_id_from_name(spec->agents[i].name, id, sizeof id);
    if (strcmp(id, want) == 0 && !(spec->main_agent = strdup(id))) return AG_ERR_NOMEM;
  }
  if (!spec->main_agent)
    return BAD("%s: main_agent: '%s' is not an agent of this world", label, main_agent->valuestring);
  return AG_OK;
}

int world_spec_from_json(const cJSON *root, const char *label, world_spec *out, ag_errmsg *em) {
  int rc = AG_OK;
  world_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.turn_limit = 5;
  spec.memory_window = 10;
  agent_settings defaults;
  agent_settings_init(&defaults);
  if (!cJSON_IsObject(root)) {
    rc = BAD("%s: the world file must hold a JSON object", label);
    goto fail;
  }
  if ((rc = world_file_check_keys(root, world_fields, NULL, label, "", em))) goto fail;
  if ((rc = read_name(root, &spec, label, em))) goto fail;
  if ((rc = world_file_get_string(root, "description", 1, &spec.description, label, "", em))) goto fail;
  long n = spec.turn_limit;
  if ((rc = world_file_get_int(root, "turn_limit", 1, 1000000, &n, label, "", em))) goto fail;
  spec.turn_limit = (int)n;
  n = spec.memory_window;
  if ((rc = world_file_get_int(root, "memory_window", 1, 1000000, &n, label, "", em))) goto fail;
  spec.memory_window = (int)n;
  const cJSON *defs = cJSON_GetObjectItemCaseSensitive(root, "defaults");
  if (defs && !cJSON_IsNull(defs)) {
    if (!cJSON_IsObject(defs)) {
      rc = BAD("%s: defaults: must be an object", label);
      goto fail;
    }
    if ((rc = world_file_check_keys(defs, setting_fields, NULL, label, "defaults", em))) goto fail;
    if ((rc = read_settings(defs, &defaults, label, "defaults", em))) goto fail;
  }
  if ((rc = world_mcp_read(root, &spec, label, em)) || (rc = read_agents(root, &defaults, &spec, label, em)) ||
      (rc = world_mcp_check(&spec, label, em)) || (rc = world_llm_read(root, &spec, label, em)))
    goto fail;
  if ((rc = read_main_agent(root, &spec, label, em))) goto fail;
  if ((rc = read_script(root, &spec, label, em)) || (rc = world_time_read(root, &spec, label, em)) ||
      (rc = world_time_check(&spec, label, em)))
    goto fail;
  agent_settings_free(&defaults);
  *out = spec;
  return AG_OK;
fail:
  agent_settings_free(&defaults);
  world_spec_free(&spec);
  return rc;
}

int world_spec_parse(const char *json, size_t len, const char *label, world_spec *out, ag_errmsg *em) {
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
  if (!root) {
    /* Point at the line and column where parsing stopped. */
    size_t line, col;
    ag_json_line_col(json, end ? (size_t)(end - json) : 0, &line, &col);
    return BAD("%s: malformed JSON near line %zu, column %zu", label, line, col);
  }
  int rc = ag_json_check_nul(json, len, label, em);
  if (rc) {
    cJSON_Delete(root);
    return rc;
  }
  /* Anything but white space after the document is an error too. */
  if (end) {
    for (const char *p = end; p < json + len; p++) {
      if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') {
        rc = BAD("%s: malformed JSON: unexpected text after the document", label);
        break;
      }
    }
  }
  if (!rc) rc = world_spec_from_json(root, label, out, em);
  cJSON_Delete(root);
  return rc;
}

int world_spec_load(const char *path, world_spec *out, ag_errmsg *em) {
  char *text = NULL;
  size_t len = 0;
  int rc = ag_file_read(path, WORLD_FILE_MAX, &text, &len, em);
  if (rc == AG_ERR_NOT_FOUND || rc == AG_ERR_IO) rc = AG_ERR_INVALID; /* a bad argument: exit 2 */
  if (rc) return rc;
  rc = world_spec_parse(text, len, path, out, em);
  free(text);
  if (!rc && (rc = world_mcp_resolve_paths(out, path, em))) world_spec_free(out);
  return rc;
}

void world_spec_free_agents(world_spec *spec) {
  for (size_t i = 0; i < spec->n_agents; i++) agent_settings_free(&spec->agents[i]);
  free(spec->agents);
  spec->agents = NULL;
  spec->n_agents = 0;
}

void world_spec_free(world_spec *spec) {
  free(spec->name);
  free(spec->description);
  free(spec->main_agent);
  world_spec_free_agents(spec);
  for (size_t i = 0; i < spec->n_steps; i++) {
    free(spec->steps[i].from);
    free(spec->steps[i].text);
  }
  free(spec->steps);
  world_time_free(spec);
  world_mcp_spec_free(spec);
  world_llm_spec_free(spec);
  memset(spec, 0, sizeof *spec);
}
