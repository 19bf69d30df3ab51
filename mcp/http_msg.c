/* JSON-RPC messages as the Streamable HTTP transport sees them (see http_msg.h). */
#include "mcp/http_msg.h"

#include "common/error.h"
#include "common/jsonnum.h"
#include "mcp/rpc.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static void copy_str(char *dst, size_t cap, const char *src) {
  size_t n = src ? strlen(src) : 0;
  if (n >= cap) n = 0; /* too long to be one we sent or need: treated as absent */
  memcpy(dst, src ? src : "", n);
  dst[n] = '\0';
}

/* The id as the compact JSON text an answer must carry: a string as cJSON prints it, a number as its
 * exact integer. AG_ERR_INVALID for an id no answer could echo faithfully (mcp_rpc_id_ok: -1e999 is
 * -Infinity, which cJSON prints as null; 2^53 + 1 reads as 2^53; 1.5, true). AG_ERR_TOO_BIG when it
 * does not fit. */
static int id_text(const cJSON *id, char *dst, size_t cap) {
  if (!mcp_rpc_id_ok(id)) return AG_ERR_INVALID;
  cJSON *exact = mcp_rpc_id_copy(id);
  char *s = exact ? cJSON_PrintUnformatted(exact) : NULL;
  cJSON_Delete(exact);
  if (!s) return AG_ERR_NOMEM;
  int rc = strlen(s) < cap ? AG_OK : AG_ERR_TOO_BIG;
  copy_str(dst, cap, s);
  free(s);
  return rc;
}

static void peek_item(const cJSON *m, mcp_http_peek *out) {
  memset(out, 0, sizeof *out);
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(m, "method");
  if (id && !cJSON_IsNull(id)) {
    int rc = id_text(id, out->id, sizeof out->id);
    out->bad_id = rc == AG_ERR_INVALID;
    if (rc) out->id[0] = '\0';
  }
  if (cJSON_IsString(method)) copy_str(out->method, sizeof out->method, method->valuestring);
  out->is_request = out->id[0] && method;
  const cJSON *result = cJSON_GetObjectItemCaseSensitive(m, "result");
  out->is_response = out->id[0] && !method && (result || cJSON_GetObjectItemCaseSensitive(m, "error"));
  const cJSON *pv = cJSON_GetObjectItemCaseSensitive(result, "protocolVersion");
  if (out->is_response && cJSON_IsString(pv))
    copy_str(out->protocol_version, sizeof out->protocol_version, pv->valuestring);
}

int mcp_http_peek_text(const char *json, size_t len, mcp_http_peek *out) {
  cJSON *m = cJSON_ParseWithLength(json, len);
  int rc = cJSON_IsObject(m) ? AG_OK : AG_ERR_INVALID;
  if (rc == AG_OK) peek_item(m, out);
  else memset(out, 0, sizeof *out);
  cJSON_Delete(m);
  return rc;
}

/* A message handed on: an object whose id, if any, an answer can echo (see id_text). */
static int usable(const cJSON *m) {
  mcp_http_peek pk;
  if (!cJSON_IsObject(m)) return 0;
  peek_item(m, &pk);
  return !pk.bad_id;
}

static int deliver(cJSON *m, mcp_http_msg_fn fn, void *ud) {
  mcp_http_peek pk;
  peek_item(m, &pk);
  /* The text is printed again from the parsed tree: the id and other integers go out exactly. */
  char *text = ag_json_exact_ints(m) ? NULL : cJSON_PrintUnformatted(m);
  if (!text) return AG_ERR_NOMEM;
  int rc = fn(ud, text, strlen(text), &pk);
  free(text);
  return rc;
}

int mcp_http_split(const char *body, size_t len, mcp_http_msg_fn fn, void *ud) {
  int rc = AG_ERR_INVALID;
  cJSON *doc = cJSON_ParseWithLength(body, len);
  if (cJSON_IsObject(doc)) {
    if (usable(doc)) rc = deliver(doc, fn, ud);
    goto done;
  }
  if (!cJSON_IsArray(doc)) goto done;
  cJSON *m;
  cJSON_ArrayForEach(m, doc) if (!usable(m)) goto done; /* all or nothing */
  rc = AG_OK;
  cJSON_ArrayForEach(m, doc) if ((rc = deliver(m, fn, ud))) break;
done:
  cJSON_Delete(doc);
  return rc;
}

char *mcp_http_error_answer(const char *id_json, const char *message) {
  cJSON *msg = cJSON_CreateObject();
  cJSON *err = cJSON_CreateObject();
  cJSON *id = cJSON_Parse(id_json);
  char *out = NULL;
  if (!msg || !err || !mcp_rpc_id_ok(id)) goto done;
  cJSON_AddStringToObject(msg, "jsonrpc", "2.0");
  cJSON_AddItemToObject(msg, "id", mcp_rpc_id_copy(id)); /* exact, never reprinted from a double */
  cJSON_AddNumberToObject(err, "code", MCP_HTTP_TRANSPORT_ERROR);
  cJSON_AddStringToObject(err, "message", message);
  cJSON_AddItemToObject(msg, "error", err);
  err = NULL;
  out = cJSON_PrintUnformatted(msg);
done:
  cJSON_Delete(id);
  cJSON_Delete(err);
  cJSON_Delete(msg);
  return out;
}
