/* Tool calling on the wire, shared by the four formats: assembling a reply's calls from the pieces
 * they stream in (under caps, like text), and the request-side conversions between the library's
 * JSON text and the objects some formats want instead. */
#include "llm/wire.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void llm_wire_calls_init(llm_wire_calls *c, size_t cap) {
  memset(c, 0, sizeof *c);
  c->cap = cap;
}

void llm_wire_calls_free(llm_wire_calls *c) {
  for (size_t i = 0; i < c->n; i++) {
    free(c->v[i].id);
    free(c->v[i].name);
    free(c->v[i].signature);
    ag_buf_free(&c->v[i].args);
  }
  free(c->v);
  c->v = NULL;
  c->n = 0;
  c->bytes = 0;
}

static int too_big(llm_wire_out *out, const char *why) {
  snprintf(out->err->type, sizeof out->err->type, "too_big");
  snprintf(out->err->message, sizeof out->err->message, "%s", why);
  return AG_ERR_TOO_BIG;
}

/* Charges n bytes of outside text against the reply's cap. */
static int charge(llm_wire_out *out, size_t n) {
  llm_wire_calls *c = out->calls;
  if (n > c->cap - c->bytes) return too_big(out, "the tool calls are larger than 4 MiB");
  c->bytes += n;
  return AG_OK;
}

static llm_wire_call *find(llm_wire_calls *c, long index) {
  for (size_t i = c->n; i-- > 0;)
    if (c->v[i].index == index) return &c->v[i];
  return NULL;
}

static int add_call(llm_wire_out *out, long index, llm_wire_call **res) {
  llm_wire_calls *c = out->calls;
  if (c->n >= LLM_WIRE_MAX_CALLS) return too_big(out, "more than 128 tool calls in one reply");
  llm_wire_call *v = realloc(c->v, (c->n + 1) * sizeof *v);
  if (!v) return AG_ERR_NOMEM;
  c->v = v;
  llm_wire_call *k = &v[c->n++];
  memset(k, 0, sizeof *k);
  k->index = index;
  ag_buf_init(&k->args, c->cap);
  *res = k;
  return AG_OK;
}

static int get_call(llm_wire_out *out, long index, llm_wire_call **res) {
  *res = find(out->calls, index);
  return *res ? AG_OK : add_call(out, index, res);
}

/* Sets *dst from s unless it is already known (later pieces repeat or omit it). */
static int set_once(llm_wire_out *out, char **dst, const char *s) {
  if (!s || *dst) return AG_OK;
  int rc = charge(out, strlen(s));
  if (rc) return rc;
  *dst = strdup(s);
  return *dst ? AG_OK : AG_ERR_NOMEM;
}

static int append_args(llm_wire_out *out, llm_wire_call *k, const char *s, size_t n) {
  int rc = charge(out, n);
  return rc ? rc : ag_buf_append(&k->args, s, n);
}

/* The argument text of a whole value: a string's own text, anything else serialised. */
static int set_args_value(llm_wire_out *out, llm_wire_call *k, const cJSON *args) {
  if (!args) return AG_OK;
  if (cJSON_IsString(args)) return append_args(out, k, args->valuestring, strlen(args->valuestring));
  char *s = cJSON_PrintUnformatted(args);
  if (!s) return AG_ERR_NOMEM;
  int rc = append_args(out, k, s, strlen(s));
  free(s);
  return rc;
}

int llm_wire_call_piece(llm_wire_out *out, long index, const char *id, const char *name, const char *args,
                        size_t args_len) {
  if (!out->calls) return AG_OK;
  llm_wire_call *k;
  int rc = get_call(out, index, &k);
  if (!rc) rc = set_once(out, &k->id, id);
  if (!rc) rc = set_once(out, &k->name, name);
  if (rc || !args_len) return rc;
  if (k->provisional) {
    out->calls->bytes -= k->args.len;
    ag_buf_reset(&k->args);
    k->provisional = 0;
  }
  return append_args(out, k, args, args_len);
}

int llm_wire_call_append(llm_wire_out *out, long index, const char *args, size_t args_len) {
  if (!out->calls || !find(out->calls, index)) return AG_OK;
  return llm_wire_call_piece(out, index, NULL, NULL, args, args_len);
}

int llm_wire_call_start(llm_wire_out *out, long index, const char *id, const char *name, const cJSON *args) {
  if (!out->calls) return AG_OK;
  llm_wire_call *k;
  int rc = get_call(out, index, &k);
  if (!rc) rc = set_once(out, &k->id, id);
  if (!rc) rc = set_once(out, &k->name, name);
  if (rc || k->args.len || !args) return rc;
  /* Anthropic starts a tool_use block with "input":{} and streams the real input after it. */
  if (cJSON_IsObject(args) && !args->child) return AG_OK;
  k->provisional = 1;
  return set_args_value(out, k, args);
}

int llm_wire_call_whole(llm_wire_out *out, const char *id, const char *name, const cJSON *args) {
  if (!out->calls) return AG_OK;
  llm_wire_call *k;
  /* Whole calls are never looked up, so any index no streamed piece uses will do. */
  int rc = add_call(out, -1 - (long)out->calls->n, &k);
  if (!rc) rc = set_once(out, &k->id, id);
  if (!rc) rc = set_once(out, &k->name, name);
  if (!rc) rc = set_args_value(out, k, args);
  return rc;
}

int llm_wire_call_sign(llm_wire_out *out, const char *signature) {
  if (!out->calls || !out->calls->n || !signature) return AG_OK;
  llm_wire_call *k = &out->calls->v[out->calls->n - 1];
  size_t n = strlen(signature);
  if (out->calls->bytes + n > out->calls->cap) return too_big(out, "tool calls larger than the cap");
  free(k->signature);
  if (!(k->signature = strdup(signature))) return AG_ERR_NOMEM;
  out->calls->bytes += n;
  return AG_OK;
}

/* Parses the whole of s (cJSON_Parse alone accepts trailing garbage). */
static cJSON *parse_all(const char *s) { return s ? cJSON_ParseWithOpts(s, NULL, 1) : NULL; }

int llm_wire_schema(const char *parameters_json, cJSON **out) {
  if (!parameters_json || !parameters_json[0]) parameters_json = "{\"type\":\"object\",\"properties\":{}}";
  cJSON *o = parse_all(parameters_json);
  if (!cJSON_IsObject(o)) {
    cJSON_Delete(o);
    *out = NULL;
    return AG_ERR_INVALID;
  }
  *out = o;
  return AG_OK;
}

cJSON *llm_wire_args_object(const char *args_json) {
  cJSON *o = parse_all(args_json);
  if (cJSON_IsObject(o)) return o;
  cJSON_Delete(o);
  return cJSON_CreateObject();
}

cJSON *llm_wire_result_object(const char *content) {
  if (!content) content = "";
  cJSON *v = parse_all(content);
  if (cJSON_IsObject(v)) return v;
  if (!v) v = cJSON_CreateString(content);
  cJSON *o = cJSON_CreateObject();
  if (!o || !v || !cJSON_AddItemToObject(o, "result", v)) {
    cJSON_Delete(o);
    cJSON_Delete(v);
    return NULL;
  }
  return o;
}

int llm_wire_tool_list(cJSON *decls, const llm_request *req, const char *schema_key, int as_function) {
  for (size_t i = 0; i < req->n_tools; i++) {
    const llm_tool *t = &req->tools[i];
    cJSON *schema;
    int rc = llm_wire_schema(t->parameters_json, &schema);
    if (rc) return rc;
    cJSON *o = cJSON_CreateObject(), *d = o;
    int ok = cJSON_AddItemToArray(decls, o);
    if (ok && as_function)
      ok = cJSON_AddStringToObject(o, "type", "function") && (d = cJSON_AddObjectToObject(o, "function"));
    if (ok) ok = cJSON_AddStringToObject(d, "name", t->name ? t->name : "") != NULL;
    if (ok && t->description) ok = cJSON_AddStringToObject(d, "description", t->description) != NULL;
    if (!ok || !cJSON_AddItemToObject(d, schema_key, schema)) {
      cJSON_Delete(schema);
      return AG_ERR_NOMEM;
    }
  }
  return AG_OK;
}

int llm_wire_function_tools(cJSON *root, const llm_request *req) {
  if (!req->n_tools) return AG_OK;
  cJSON *tools = cJSON_AddArrayToObject(root, "tools");
  return tools ? llm_wire_tool_list(tools, req, "parameters", 1) : AG_ERR_NOMEM;
}
