/* The MCP parts of a world file (see mcp_spec.h). */
#include "world/mcp_spec.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonnum.h"
#include "common/nearest.h"
#include "world/world_time.h"

#define BAD(...) ag_fail(em, AG_ERR_INVALID, __VA_ARGS__)
#define MCP_NAME_MAX 64

static const char *const server_fields[] = {"command", "args", "env", "cwd", "timeout_ms", "url", "headers", NULL};

/* Server names and the names tools go by: what every provider accepts in a tool's name. */
static int valid_name(const char *s, int allow_dot) {
  size_t n = strlen(s);
  if (!n || n > MCP_NAME_MAX) return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
          *s == '-' || (allow_dot && *s == '.')))
      return 0;
  return 1;
}

/* An array of strings (args). */
static int read_strings(const cJSON *v, char ***out, size_t *n, const char *label, const char *path, ag_errmsg *em) {
  if (!cJSON_IsArray(v)) return BAD("%s: %s: must be an array of strings", label, path);
  size_t count = (size_t)cJSON_GetArraySize(v), i = 0;
  if (!(*out = calloc(count ? count : 1, sizeof **out))) return AG_ERR_NOMEM;
  for (const cJSON *e = v->child; e; e = e->next, i++) {
    if (!cJSON_IsString(e)) return BAD("%s: %s[%zu]: must be a string", label, path, i);
    if (!((*out)[i] = strdup(e->valuestring))) return AG_ERR_NOMEM;
    *n = i + 1;
  }
  return AG_OK;
}

/* An object of strings (env, headers): names and values kept as written. */
static int read_map(const cJSON *v, char ***names, char ***values, size_t *n, const char *label, const char *path,
                    ag_errmsg *em) {
  if (!cJSON_IsObject(v)) return BAD("%s: %s: must be an object of strings", label, path);
  int rc = world_file_check_keys(v, NULL, NULL, label, path, em);
  if (rc) return rc;
  size_t count = (size_t)cJSON_GetArraySize(v), i = 0;
  *names = calloc(count ? count : 1, sizeof **names);
  *values = calloc(count ? count : 1, sizeof **values);
  if (!*names || !*values) return AG_ERR_NOMEM;
  for (const cJSON *e = v->child; e; e = e->next, i++) {
    if (!cJSON_IsString(e)) return BAD("%s: %s.%s: must be a string", label, path, e->string);
    if (!e->string[0] || strchr(e->string, '=')) return BAD("%s: %s.%s: not a valid name", label, path, e->string);
    (*names)[i] = strdup(e->string);
    (*values)[i] = strdup(e->valuestring);
    *n = i + 1;
    if (!(*names)[i] || !(*values)[i]) return AG_ERR_NOMEM;
  }
  return AG_OK;
}

static int read_server(const cJSON *o, world_mcp_server *sv, const char *label, const char *path, ag_errmsg *em) {
  char sub[300];
  if (!cJSON_IsObject(o)) return BAD("%s: %s: must be an object", label, path);
  int rc = world_file_check_keys(o, server_fields, NULL, label, path, em);
  if (rc) return rc;
  const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(o, "command"), *url = cJSON_GetObjectItemCaseSensitive(o, "url");
  if (!cmd && !url) return BAD("%s: %s: missing command or url (how to reach the server)", label, path);
  if (cmd && url) return BAD("%s: %s: command and url: give one (stdio or HTTP), not both", label, path);
  const char *kind_field = cmd ? "command" : "url";
  const cJSON *kind = cmd ? cmd : url;
  if (!cJSON_IsString(kind) || !kind->valuestring[0]) return BAD("%s: %s.%s: must be a non-empty string", label, path, kind_field);
  static const char *const stdio_only[] = {"args", "env", "cwd"};
  for (size_t i = 0; url && i < 3; i++)
    if (cJSON_GetObjectItemCaseSensitive(o, stdio_only[i]))
      return BAD("%s: %s.%s: only for a server started with a command", label, path, stdio_only[i]);
  if (cmd && cJSON_GetObjectItemCaseSensitive(o, "headers"))
    return BAD("%s: %s.headers: only for a server reached by url", label, path);
  if (!((cmd ? (sv->command = strdup(kind->valuestring)) : (sv->url = strdup(kind->valuestring))))) return AG_ERR_NOMEM;
  const cJSON *v;
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "args")) &&
      (snprintf(sub, sizeof sub, "%s.args", path), rc = read_strings(v, &sv->args, &sv->n_args, label, sub, em)))
    return rc;
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "env")) &&
      (snprintf(sub, sizeof sub, "%s.env", path), rc = read_map(v, &sv->env_names, &sv->env_values, &sv->n_env, label, sub, em)))
    return rc;
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "headers")) &&
      (snprintf(sub, sizeof sub, "%s.headers", path),
       rc = read_map(v, &sv->header_names, &sv->header_values, &sv->n_headers, label, sub, em)))
    return rc;
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "cwd"))) {
    if (!cJSON_IsString(v) || !v->valuestring[0]) return BAD("%s: %s.cwd: must be a non-empty string", label, path);
    if (!(sv->cwd = strdup(v->valuestring))) return AG_ERR_NOMEM;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "timeout_ms"))) {
    int64_t n;
    if (ag_json_int(v, 1, 86400000, &n)) return BAD("%s: %s.timeout_ms: must be an integer between 1 and 86400000", label, path);
    sv->timeout_ms = (long)n;
  }
  return AG_OK;
}

int world_mcp_read(const cJSON *root, world_spec *spec, const char *label, ag_errmsg *em) {
  const cJSON *servers = cJSON_GetObjectItemCaseSensitive(root, "mcp_servers");
  if (!servers || cJSON_IsNull(servers)) return AG_OK;
  if (!cJSON_IsObject(servers)) return BAD("%s: mcp_servers: must be an object of servers by name", label);
  int rc = world_file_check_keys(servers, NULL, NULL, label, "mcp_servers", em);
  if (rc) return rc;
  size_t count = (size_t)cJSON_GetArraySize(servers);
  if (!(spec->mcp = calloc(count ? count : 1, sizeof *spec->mcp))) return AG_ERR_NOMEM;
  for (const cJSON *o = servers->child; o; o = o->next) {
    char path[128];
    snprintf(path, sizeof path, "mcp_servers.%.64s", o->string);
    if (!strcmp(o->string, "_comment")) continue;
    if (!valid_name(o->string, 0))
      return BAD("%s: %s: a server's name must be 1-64 letters, digits, '_' or '-'", label, path);
    world_mcp_server *sv = &spec->mcp[spec->n_mcp++];
    if (!(sv->name = strdup(o->string))) return AG_ERR_NOMEM;
    if ((rc = read_server(o, sv, label, path, em))) return rc;
  }
  return AG_OK;
}

int world_mcp_read_ref(const cJSON *t, const char *name, agent_settings *s, const char *label, const char *path,
                       ag_errmsg *em) {
  const char *as = NULL;
  int approve = -1;
  if (cJSON_IsObject(t)) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(t, "as"), *ap = cJSON_GetObjectItemCaseSensitive(t, "approve");
    if (a && (!cJSON_IsString(a) || !valid_name(a->valuestring, 0)))
      return BAD("%s: %s.as: must be a tool name of 1-64 letters, digits, '_' or '-'", label, path);
    as = a ? a->valuestring : NULL;
    if (ap) approve = cJSON_IsTrue(ap);
  }
  agent_mcp_ref ref;
  int rc = agent_mcp_ref_parse(name, as, approve, &ref);
  if (rc == AG_ERR_INVALID || (!rc && (!valid_name(ref.server, 0) || (ref.tool && !valid_name(ref.tool, 1))))) {
    if (!rc) free(ref.server), free(ref.tool), free(ref.as);
    return BAD("%s: %s: '%s' is not SERVER.TOOL or SERVER.*", label, path, name);
  }
  if (rc) return rc;
  if (as && !ref.tool) {
    free(ref.server), free(ref.as);
    return BAD("%s: %s.as: renames one tool, not %s (all of a server's tools)", label, path, name);
  }
  agent_mcp_ref *grown = realloc(s->mcp, (s->n_mcp + 1) * sizeof *grown);
  if (!grown) {
    free(ref.server), free(ref.tool), free(ref.as);
    return AG_ERR_NOMEM;
  }
  s->mcp = grown;
  s->mcp[s->n_mcp++] = ref;
  return AG_OK;
}

static const world_mcp_server *find_server(const world_spec *spec, const char *name) {
  for (size_t i = 0; i < spec->n_mcp; i++)
    if (!strcmp(spec->mcp[i].name, name)) return &spec->mcp[i];
  return NULL;
}

/* The name an entry gives its one tool (NULL for SERVER.*). */
static const char *ref_exposed(const agent_mcp_ref *r) { return r->tool ? (r->as ? r->as : r->tool) : NULL; }

static int check_agent(const world_spec *spec, const agent_settings *s, size_t ai, const char *label, ag_errmsg *em) {
  for (size_t j = 0; j < s->n_mcp; j++) {
    const agent_mcp_ref *r = &s->mcp[j];
    if (!find_server(spec, r->server)) {
      const char **names = calloc(spec->n_mcp + 1, sizeof *names);
      for (size_t k = 0; names && k < spec->n_mcp; k++) names[k] = spec->mcp[k].name;
      const char *near = names ? ag_nearest_name(r->server, names, NULL) : NULL;
      int rc = BAD("%s: agents[%zu].tools: '%s.%s' names no server of mcp_servers%s%s%s", label, ai, r->server,
                   r->tool ? r->tool : "*", near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
      free(names);
      return rc;
    }
    const char *name = ref_exposed(r);
    tool_id builtin;
    if (name && !tool_parse(name, &builtin) && (s->tools & TOOL_BIT(builtin)))
      return BAD("%s: agents[%zu].tools: '%s.%s' would be called %s, like the built-in tool (rename it with \"as\")",
                 label, ai, r->server, r->tool, name);
    for (size_t k = 0; name && k < j; k++) {
      const char *other = ref_exposed(&s->mcp[k]);
      if (other && !strcmp(other, name))
        return BAD("%s: agents[%zu].tools: '%s.%s' and '%s.%s' are both called %s (rename one with \"as\")", label,
                   ai, s->mcp[k].server, s->mcp[k].tool, r->server, r->tool, name);
    }
  }
  return AG_OK;
}

int world_mcp_check(const world_spec *spec, const char *label, ag_errmsg *em) {
  for (size_t i = 0; i < spec->n_agents; i++) {
    int rc = check_agent(spec, &spec->agents[i], i, label, em);
    if (rc) return rc;
  }
  return AG_OK;
}

/* dir/rel as a new string, or a copy of rel when it is absolute. */
static char *join(const char *dir, const char *rel) {
  if (rel[0] == '/') return strdup(rel);
  size_t n = strlen(dir) + strlen(rel) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, rel);
  return p;
}

int world_mcp_resolve_paths(world_spec *spec, const char *path, ag_errmsg *em) {
  char *copy = strdup(path);
  if (!copy) return ag_fail(em, AG_ERR_NOMEM, "out of memory");
  const char *dir = dirname(copy);
  int rc = AG_OK;
  for (size_t i = 0; i < spec->n_mcp && !rc; i++) {
    world_mcp_server *sv = &spec->mcp[i];
    if (!sv->command) continue;
    char *cwd = join(dir, sv->cwd ? sv->cwd : ".");
    char *cmd = strchr(sv->command, '/') ? join(dir, sv->command) : strdup(sv->command);
    if (!cwd || !cmd) rc = ag_fail(em, AG_ERR_NOMEM, "out of memory");
    free(sv->cwd);
    free(sv->command);
    sv->cwd = cwd;
    sv->command = cmd;
  }
  free(copy);
  return rc;
}

static void add_map(cJSON *o, const char *key, char **names, char **values, size_t n) {
  if (!n) return;
  cJSON *m = cJSON_AddObjectToObject(o, key);
  for (size_t i = 0; m && i < n; i++) cJSON_AddStringToObject(m, names[i], values[i]);
}

void world_mcp_to_json(const world_spec *spec, cJSON *w) {
  if (!spec->n_mcp) return;
  cJSON *all = cJSON_AddObjectToObject(w, "mcp_servers");
  for (size_t i = 0; all && i < spec->n_mcp; i++) {
    const world_mcp_server *sv = &spec->mcp[i];
    cJSON *o = cJSON_AddObjectToObject(all, sv->name);
    if (!o) return;
    if (sv->command) cJSON_AddStringToObject(o, "command", sv->command);
    if (sv->url) cJSON_AddStringToObject(o, "url", sv->url);
    if (sv->n_args) {
      cJSON *a = cJSON_AddArrayToObject(o, "args");
      for (size_t k = 0; a && k < sv->n_args; k++) cJSON_AddItemToArray(a, cJSON_CreateString(sv->args[k]));
    }
    /* As written: ${VAR} names, never the values (read only when the server starts). */
    add_map(o, "env", sv->env_names, sv->env_values, sv->n_env);
    add_map(o, "headers", sv->header_names, sv->header_values, sv->n_headers);
    if (sv->cwd) cJSON_AddStringToObject(o, "cwd", sv->cwd);
    if (sv->timeout_ms) cJSON_AddNumberToObject(o, "timeout_ms", (double)sv->timeout_ms);
  }
}

void world_mcp_refs_to_json(const agent_settings *s, cJSON *tools) {
  for (size_t i = 0; tools && i < s->n_mcp; i++) {
    const agent_mcp_ref *r = &s->mcp[i];
    char name[160];
    snprintf(name, sizeof name, "%s.%s", r->server, r->tool ? r->tool : "*");
    if (!r->as && r->approve < 0) {
      cJSON_AddItemToArray(tools, cJSON_CreateString(name));
      continue;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", name);
    if (r->as) cJSON_AddStringToObject(o, "as", r->as);
    if (r->approve >= 0) cJSON_AddBoolToObject(o, "approve", r->approve);
    cJSON_AddItemToArray(tools, o);
  }
}

static void free_strings(char **v, size_t n) {
  for (size_t i = 0; v && i < n; i++) free(v[i]);
  free(v);
}

void world_mcp_spec_free(world_spec *spec) {
  for (size_t i = 0; i < spec->n_mcp; i++) {
    world_mcp_server *sv = &spec->mcp[i];
    free(sv->name), free(sv->command), free(sv->cwd), free(sv->url);
    free_strings(sv->args, sv->n_args);
    free_strings(sv->env_names, sv->n_env), free_strings(sv->env_values, sv->n_env);
    free_strings(sv->header_names, sv->n_headers), free_strings(sv->header_values, sv->n_headers);
  }
  free(spec->mcp);
  spec->mcp = NULL;
  spec->n_mcp = 0;
}

int world_mcp_spec_copy(world_spec *dst, const world_spec *src) {
  if (!src->n_mcp) return AG_OK;
  cJSON *w = cJSON_CreateObject();
  if (!w) return AG_ERR_NOMEM;
  world_mcp_to_json(src, w); /* the world-file form read back: one definition of what a server holds */
  int rc = world_mcp_read(w, dst, "mcp_servers", NULL);
  cJSON_Delete(w);
  if (rc) world_mcp_spec_free(dst);
  return rc == AG_ERR_INVALID ? AG_ERR_NOMEM : rc;
}
