/* Rendering a tools/call result for the model (see render.h). */
#include "mcp/render.h"

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/error.h"

/* What is collected before capping: a message is at most MCP_LINE_CAP, its structured content
 * printed again at most as much. */
#define RENDER_COLLECT_CAP (16u << 20)

static const char *str_of(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A text item that is the structured content printed (what servers send for older clients). */
static int same_json(const char *text, const cJSON *structured) {
  cJSON *v = cJSON_Parse(text);
  int same = v && cJSON_Compare(v, structured, 1);
  cJSON_Delete(v);
  return same;
}

static int render_item(ag_buf *b, const cJSON *item, const cJSON *structured) {
  const char *type = str_of(item, "type"), *text = str_of(item, "text");
  int is_text = type && !strcmp(type, "text") && text;
  if (is_text && structured && same_json(text, structured)) return AG_OK; /* shown once, below */
  int rc = b->len ? ag_buf_append(b, "\n", 1) : AG_OK;
  if (rc) return rc;
  if (is_text) return ag_buf_appends(b, text);
  if (type && (!strcmp(type, "image") || !strcmp(type, "audio"))) {
    const char *mime = str_of(item, "mimeType"), *data = str_of(item, "data");
    return ag_buf_printf(b, "[%s: %s, %zu bytes of base64]", type, mime ? mime : "unknown type",
                         data ? strlen(data) : 0);
  }
  if (type && !strcmp(type, "resource_link")) {
    const char *uri = str_of(item, "uri"), *name = str_of(item, "name");
    return ag_buf_printf(b, "[resource link: %s%s%s]", uri ? uri : "?", name ? " " : "", name ? name : "");
  }
  if (type && !strcmp(type, "resource")) {
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(item, "resource");
    const char *rtext = str_of(res, "text"), *uri = str_of(res, "uri");
    if (rtext) return ag_buf_appends(b, rtext);
    return ag_buf_printf(b, "[resource: %s]", uri ? uri : "?");
  }
  return ag_buf_printf(b, "[%s content]", type ? type : "unknown");
}

char *mcp_render_cap(const char *s, size_t len, size_t cap) {
  size_t keep = len;
  if (len > cap) {
    keep = cap;
    while (keep && ((unsigned char)s[keep] & 0xC0) == 0x80) keep--; /* not inside a UTF-8 sequence */
  }
  size_t extra = len > cap ? sizeof MCP_TRUNCATED - 1 : 0;
  char *out = malloc(keep + extra + 1);
  if (!out) return NULL;
  memcpy(out, s, keep);
  memcpy(out + keep, MCP_TRUNCATED, extra);
  out[keep + extra] = '\0';
  return out;
}

int mcp_render_result(const cJSON *result, size_t cap, char **out, int *is_error) {
  ag_buf b;
  ag_buf_init(&b, RENDER_COLLECT_CAP);
  *out = NULL;
  *is_error = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(result, "isError"));
  const cJSON *content = cJSON_GetObjectItemCaseSensitive(result, "content");
  const cJSON *structured = cJSON_GetObjectItemCaseSensitive(result, "structuredContent");
  const cJSON *item;
  int rc = AG_OK;
  const cJSON *items = cJSON_IsArray(content) ? content : NULL;
  cJSON_ArrayForEach(item, items) {
    if ((rc = render_item(&b, item, structured))) break;
  }
  if (!rc && structured) {
    char *js = cJSON_PrintUnformatted(structured);
    rc = !js ? AG_ERR_NOMEM : b.len ? ag_buf_append(&b, "\n", 1) : AG_OK;
    if (!rc) rc = ag_buf_appends(&b, js);
    cJSON_free(js);
  }
  /* Past the collecting cap the text is cut anyway: what was kept is far longer than any cap. */
  if (rc == AG_ERR_TOO_BIG) rc = AG_OK;
  if (!rc && !b.len) rc = ag_buf_appends(&b, *is_error ? "(the tool failed with no detail)" : "(no content)");
  if (!rc && !(*out = mcp_render_cap(ag_buf_str(&b), b.len, cap))) rc = AG_ERR_NOMEM;
  ag_buf_free(&b);
  return rc;
}
