/* An agent's MCP tools: references and the resolved set (see mcp_tools.h). */
#include "agents/mcp_tools.h"

#include "common/nearest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static void ref_free(agent_mcp_ref *r) {
  free(r->server);
  free(r->tool);
  free(r->as);
}

int agent_mcp_ref_parse(const char *name, const char *as, int approve, agent_mcp_ref *out) {
  memset(out, 0, sizeof *out);
  const char *dot = strchr(name, '.');
  if (!dot || dot == name || !dot[1]) return AG_ERR_INVALID;
  out->server = strndup(name, (size_t)(dot - name));
  out->tool = strcmp(dot + 1, "*") ? strdup(dot + 1) : NULL;
  out->as = dup_or_null(as);
  out->approve = approve;
  if (!out->server || (strcmp(dot + 1, "*") && !out->tool) || (as && !out->as)) {
    ref_free(out);
    return AG_ERR_NOMEM;
  }
  return AG_OK;
}

int agent_mcp_refs_copy(const agent_mcp_ref *src, size_t n, agent_mcp_ref **out) {
  *out = NULL;
  if (!n) return AG_OK;
  agent_mcp_ref *r = calloc(n, sizeof *r);
  if (!r) return AG_ERR_NOMEM;
  for (size_t i = 0; i < n; i++) {
    r[i].server = strdup(src[i].server);
    r[i].tool = dup_or_null(src[i].tool);
    r[i].as = dup_or_null(src[i].as);
    r[i].approve = src[i].approve;
    if (!r[i].server || (src[i].tool && !r[i].tool) || (src[i].as && !r[i].as)) {
      agent_mcp_refs_free(r, i + 1);
      return AG_ERR_NOMEM;
    }
  }
  *out = r;
  return AG_OK;
}

void agent_mcp_refs_free(agent_mcp_ref *refs, size_t n) {
  for (size_t i = 0; refs && i < n; i++) ref_free(&refs[i]);
  free(refs);
}

static void tool_free(agent_mcp_tool *t) {
  free(t->name);
  free(t->server);
  free(t->tool);
  free(t->description);
  free(t->schema);
}

void agent_mcp_set_free(agent_mcp_set *s) {
  for (size_t i = 0; i < s->n; i++) tool_free(&s->tools[i]);
  free(s->tools);
  s->tools = NULL;
  s->n = 0;
}

/* Appends a copy of t; AG_ERR_NOMEM leaves set as it was. */
static int set_push(agent_mcp_set *set, const agent_mcp_tool *t) {
  agent_mcp_tool *grown = realloc(set->tools, (set->n + 1) * sizeof *grown);
  if (!grown) return AG_ERR_NOMEM;
  set->tools = grown;
  agent_mcp_tool *d = &grown[set->n];
  *d = (agent_mcp_tool){strdup(t->name), strdup(t->server), strdup(t->tool), strdup(t->description),
                        strdup(t->schema), t->approve, t->client};
  if (!d->name || !d->server || !d->tool || !d->description || !d->schema) {
    tool_free(d);
    return AG_ERR_NOMEM;
  }
  set->n++;
  return AG_OK;
}

int agent_mcp_set_copy(const agent_mcp_set *src, agent_mcp_set *dst) {
  dst->tools = NULL;
  dst->n = 0;
  for (size_t i = 0; i < src->n; i++) {
    int rc = set_push(dst, &src->tools[i]);
    if (rc) {
      agent_mcp_set_free(dst);
      return rc;
    }
  }
  return AG_OK;
}

const agent_mcp_tool *agent_mcp_set_find(const agent_mcp_set *s, const char *name) {
  for (size_t i = 0; s && i < s->n; i++)
    if (!strcmp(s->tools[i].name, name)) return &s->tools[i];
  return NULL;
}

/* One listed tool of ref's server into set, unless its name is taken. */
static int add_one(agent_mcp_set *set, const agent_mcp_ref *ref, const mcp_tool *mt, mcp_client *client,
                   const char *const *taken, size_t n_taken, ag_errmsg *em) {
  const char *name = ref->tool && ref->as ? ref->as : mt->name;
  for (size_t i = 0; i < n_taken; i++)
    if (!strcmp(taken[i], name))
      return ag_fail(em, AG_ERR_EXISTS, "tool name '%s' of %s.%s is taken by the built-in tool %s", name, ref->server,
                     mt->name, taken[i]);
  const agent_mcp_tool *other = agent_mcp_set_find(set, name);
  if (other)
    return ag_fail(em, AG_ERR_EXISTS, "tool name '%s' is given twice: %s.%s and %s.%s (rename one with \"as\")", name,
                   other->server, other->tool, ref->server, mt->name);
  int approve = ref->approve >= 0 ? ref->approve : !mt->read_only;
  agent_mcp_tool t = {(char *)name, ref->server, mt->name, mt->description, mt->input_schema, approve, client};
  return set_push(set, &t);
}

/* AG_ERR_NOT_FOUND naming the tool, with the server's nearest name when one is close ("ecoh": "echo"). */
static int no_such_tool(const agent_mcp_ref *ref, const mcp_tool *list, size_t n, ag_errmsg *em) {
  const char **names = calloc(n + 1, sizeof *names);
  for (size_t i = 0; names && i < n; i++) names[i] = list[i].name;
  const char *near = names ? ag_nearest_name(ref->tool, names, NULL) : NULL;
  int rc = near ? ag_fail(em, AG_ERR_NOT_FOUND, "MCP server %s has no tool '%s' (did you mean '%s.%s'?)", ref->server,
                          ref->tool, ref->server, near)
                : ag_fail(em, AG_ERR_NOT_FOUND, "MCP server %s has no tool '%s'", ref->server, ref->tool);
  free(names);
  return rc;
}

int agent_mcp_set_add(agent_mcp_set *set, const agent_mcp_ref *ref, mcp_client *client,
                      const char *const *taken, size_t n_taken, ag_errmsg *em) {
  size_t n = 0;
  const mcp_tool *list = mcp_client_tools(client, &n);
  if (ref->tool) {
    const mcp_tool *mt = mcp_client_tool(client, ref->tool);
    if (!mt) return no_such_tool(ref, list, n, em);
    return add_one(set, ref, mt, client, taken, n_taken, em);
  }
  for (size_t i = 0; i < n; i++) {
    int rc = add_one(set, ref, &list[i], client, taken, n_taken, em);
    if (rc) return rc;
  }
  return AG_OK;
}
