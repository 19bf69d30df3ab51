/* JSON-RPC framing and messages for MCP (see rpc.h). */
#include "mcp/rpc.h"

#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "common/jsonnum.h"

void mcp_lines_init(mcp_lines *l, size_t cap, mcp_line_fn fn, void *ud) {
  ag_buf_init(&l->line, cap);
  l->skipping = 0;
  l->fn = fn;
  l->ud = ud;
}

void mcp_lines_free(mcp_lines *l) { ag_buf_free(&l->line); }

static int blank(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return 0;
  return 1;
}

/* The line collected so far is complete: hand it over and start the next. */
static int lines_emit(mcp_lines *l) {
  int rc = AG_OK;
  size_t n = l->line.len;
  if (n && l->line.data[n - 1] == '\r') n--;
  if (n && !blank(l->line.data, n)) {
    l->line.data[n] = '\0';
    rc = l->fn(l->ud, l->line.data, n, 0);
  }
  l->line.len = 0;
  if (l->line.data) l->line.data[0] = '\0';
  return rc;
}

int mcp_lines_feed(mcp_lines *l, const char *data, size_t len) {
  while (len) {
    const char *nl = memchr(data, '\n', len);
    size_t part = nl ? (size_t)(nl - data) : len;
    if (!l->skipping) {
      int rc = ag_buf_append(&l->line, data, part);
      if (rc == AG_ERR_TOO_BIG) {
        l->skipping = 1;
        ag_buf_reset(&l->line);
        rc = l->fn(l->ud, NULL, 0, 1);
        if (rc) return rc;
      } else if (rc) {
        return rc;
      }
    }
    if (!nl) break;
    if (l->skipping) {
      l->skipping = 0;
    } else {
      int rc = lines_emit(l);
      if (rc) return rc;
    }
    data += part + 1;
    len -= part + 1;
  }
  return AG_OK;
}

/* A JSON number that is a whole number within +-(2^53 - 1), exact in a double and a long long. */
static int whole_id(const cJSON *v, long long *out) {
  int64_t n;
  if (ag_json_int(v, -AG_JSON_INT_MAX, AG_JSON_INT_MAX, &n)) return 0;
  *out = (long long)n;
  return 1;
}

int mcp_rpc_id_ok(const cJSON *id) {
  long long n;
  return cJSON_IsString(id) || whole_id(id, &n);
}

cJSON *mcp_rpc_id_copy(const cJSON *id) {
  long long n;
  if (whole_id(id, &n)) return ag_json_create_int(n);
  return cJSON_IsString(id) ? cJSON_CreateString(id->valuestring) : cJSON_CreateNull();
}

const char mcp_rpc_bad_request_id[] = "a request whose id is not a string or a whole number within +-(2^53-1)";

static int classify(mcp_msg *m, const char **why) {
  const cJSON *r = m->root;
  const cJSON *ver = cJSON_GetObjectItemCaseSensitive(r, "jsonrpc");
  if (!cJSON_IsString(ver) || strcmp(ver->valuestring, "2.0")) return *why = "no \"jsonrpc\": \"2.0\"", AG_ERR_INVALID;
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(r, "id");
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(r, "method");
  /* An id no answer could carry back exactly (-1e999 is -Infinity, printed as null; 2^53 + 1 reads as
   * 2^53): a request stripped of it would pass for a notification, a response would match the wrong call. */
  if (id && !cJSON_IsNull(id) && !mcp_rpc_id_ok(id)) {
    if (method) return *why = mcp_rpc_bad_request_id, AG_ERR_INVALID;
    return *why = "an id that is not a string or a whole number within +-(2^53-1)", AG_ERR_INVALID;
  }
  m->id = cJSON_IsNull(id) ? NULL : id;
  m->has_num_id = m->id && whole_id(m->id, &m->num_id);
  if (method) {
    if (!cJSON_IsString(method)) return *why = "a method that is not a string", AG_ERR_INVALID;
    m->method = method->valuestring;
    m->params = cJSON_GetObjectItemCaseSensitive(r, "params");
    m->kind = m->id ? MCP_MSG_REQUEST : MCP_MSG_NOTIFICATION;
    return AG_OK;
  }
  const cJSON *err = cJSON_GetObjectItemCaseSensitive(r, "error");
  if (cJSON_IsObject(err)) {
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(err, "code");
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(err, "message");
    if (!whole_id(code, &m->error_code)) m->error_code = 0;
    m->error_text = cJSON_IsString(text) ? text->valuestring : "";
    m->kind = MCP_MSG_ERROR;
    return AG_OK;
  }
  m->result = cJSON_GetObjectItemCaseSensitive(r, "result");
  if (!m->result) return *why = "neither a method, a result nor an error", AG_ERR_INVALID;
  if (!m->id) return *why = "a result without an id", AG_ERR_INVALID;
  m->kind = MCP_MSG_RESULT;
  return AG_OK;
}

int mcp_msg_parse(const char *json, size_t len, mcp_msg *out, const char **why) {
  memset(out, 0, sizeof *out);
  *why = NULL;
  out->root = cJSON_ParseWithLength(json, len);
  if (!out->root) return *why = "not JSON", AG_ERR_INVALID;
  if (!cJSON_IsObject(out->root)) {
    mcp_msg_free(out);
    return *why = "not a JSON object", AG_ERR_INVALID;
  }
  int rc = classify(out, why);
  if (rc) mcp_msg_free(out);
  return rc;
}

void mcp_msg_free(mcp_msg *m) {
  cJSON_Delete(m->root);
  memset(m, 0, sizeof *m);
}

int mcp_rpc_split(const char *json, size_t len, mcp_split_fn fn, void *ud) {
  size_t i = 0;
  while (i < len && strchr(" \t\r\n", json[i])) i++;
  if (i == len || json[i] != '[') return fn(ud, json, len);
  cJSON *arr = cJSON_ParseWithLength(json, len);
  if (!cJSON_IsArray(arr) || !cJSON_GetArraySize(arr)) {
    cJSON_Delete(arr);
    return AG_ERR_INVALID;
  }
  int rc = AG_OK;
  const cJSON *el;
  cJSON_ArrayForEach(el, arr) {
    char *s = ag_json_print_exact(el); /* ids kept exact */
    rc = s ? fn(ud, s, strlen(s)) : AG_ERR_NOMEM;
    cJSON_free(s);
    if (rc) break;
  }
  cJSON_Delete(arr);
  return rc;
}

/* {"jsonrpc":"2.0", ...} printed and freed. */
static char *print_take(cJSON *j) {
  char *s = j ? cJSON_PrintUnformatted(j) : NULL;
  cJSON_Delete(j);
  return s;
}

static cJSON *envelope(void) {
  cJSON *j = cJSON_CreateObject();
  if (j && !cJSON_AddStringToObject(j, "jsonrpc", "2.0")) {
    cJSON_Delete(j);
    return NULL;
  }
  return j;
}

static char *with_method(cJSON *j, const char *method, cJSON *params) {
  if (!j || !cJSON_AddStringToObject(j, "method", method)) {
    cJSON_Delete(params);
    cJSON_Delete(j);
    return NULL;
  }
  if (params) cJSON_AddItemToObject(j, "params", params);
  return print_take(j);
}

char *mcp_rpc_request(long long id, const char *method, cJSON *params) {
  cJSON *j = envelope();
  if (j) ag_json_add_int(j, "id", id);
  return with_method(j, method, params);
}

char *mcp_rpc_notification(const char *method, cJSON *params) { return with_method(envelope(), method, params); }

static cJSON *with_id(const cJSON *id) {
  cJSON *j = envelope();
  if (j) cJSON_AddItemToObject(j, "id", mcp_rpc_id_copy(id)); /* echoed exactly; NULL: null */
  return j;
}

char *mcp_rpc_result(const cJSON *id, cJSON *result) {
  cJSON *j = with_id(id);
  if (!j) {
    cJSON_Delete(result);
    return NULL;
  }
  cJSON_AddItemToObject(j, "result", result ? result : cJSON_CreateObject());
  return print_take(j);
}

char *mcp_rpc_error(const cJSON *id, int code, const char *message) {
  cJSON *j = with_id(id);
  cJSON *e = cJSON_CreateObject();
  if (!j || !e) {
    cJSON_Delete(e);
    cJSON_Delete(j);
    return NULL;
  }
  cJSON_AddNumberToObject(e, "code", code);
  cJSON_AddStringToObject(e, "message", message);
  cJSON_AddItemToObject(j, "error", e);
  return print_take(j);
}

char *mcp_rpc_invalid(const char *why) {
  char text[200];
  snprintf(text, sizeof text, "Invalid Request: %s", why);
  return mcp_rpc_error(NULL, -32600, text);
}
