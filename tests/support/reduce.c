/* Context reduction over a stored event thread, for tests (see reduce.h). */
#include "support/reduce.h"

#include <cjson/cJSON.h>
#include <string.h>

typedef struct reduce_ctx {
  const char *agent;
  cJSON *calls; /* call_id → args, for this agent */
  context_state *st;
} reduce_ctx;

static int reduce_cb(const char *json, size_t len, void *arg) {
  reduce_ctx *r = arg;
  cJSON *e = cJSON_ParseWithLength(json, len);
  const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(e, "type"));
  const char *agent = cJSON_GetStringValue(cJSON_GetObjectItem(e, "agent"));
  const char *tool = cJSON_GetStringValue(cJSON_GetObjectItem(e, "tool"));
  const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(e, "call_id"));
  if (type && agent && !strcmp(agent, r->agent) && tool && !strcmp(tool, "save_context") && id) {
    if (!strcmp(type, "tool-call")) {
      cJSON_DeleteItemFromObject(r->calls, id);
      cJSON_AddItemToObject(r->calls, id, cJSON_Duplicate(cJSON_GetObjectItem(e, "args"), 1));
    } else if (!cJSON_IsTrue(cJSON_GetObjectItem(e, "error"))) {
      const cJSON *at = cJSON_GetObjectItem(e, "at_ms");
      context_apply(r->st, cJSON_GetObjectItem(r->calls, id), cJSON_IsNumber(at) ? (int64_t)at->valuedouble : 0);
    }
  }
  cJSON_Delete(e);
  return 0;
}

int reduce_thread_txn(store_txn *t, const char *chat, const char *agent, context_state *out) {
  reduce_ctx r = {agent, cJSON_CreateObject(), out};
  int rc = store_thread_scan(t, chat, reduce_cb, &r);
  cJSON_Delete(r.calls);
  return rc;
}

int reduce_same_context(const context_state *a, const context_state *b) {
  return a->version == b->version && a->updated_at_ms == b->updated_at_ms && cJSON_Compare(a->data, b->data, 1);
}
