/* The built-in tools' effects (see tool_exec.h), apart from the agent that runs them: the agent adds
 * the approval, the publishing and the reporting around these. */
#include "agents/tool_exec.h"

#include "agents/mention.h"
#include "common/jsonnum.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *print_take(cJSON *j) {
  char *s = j ? cJSON_PrintUnformatted(j) : NULL;
  cJSON_Delete(j);
  return s;
}

char *tool_exec_error(const char *fmt, const char *detail) {
  char msg[512];
  snprintf(msg, sizeof msg, fmt, detail);
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "error", msg);
  return print_take(j);
}

int tool_exec_failed(const char *result) { return !result || strstr(result, "\"error\"") != NULL; }

char *tool_exec_check(unsigned allowed, const llm_tool_call *c, tool_id *id, cJSON **args) {
  char err[256];
  *args = NULL;
  if (tool_parse(c->name, id) || !(allowed & TOOL_BIT(*id))) return tool_exec_error("unknown tool '%s'", c->name);
  if (tool_args_parse(*id, c->args_json, args, err, sizeof err)) return tool_exec_error("invalid arguments: %s", err);
  return NULL;
}

char *tool_exec_load(const context_state *ctx) { return print_take(context_to_json(ctx)); }

char *tool_exec_save(context_state *ctx, const cJSON *args, int64_t at_ms, char **reply) {
  if (context_apply(ctx, args, at_ms)) return tool_exec_error("invalid arguments: %s", "must be an object");
  const cJSON *msg = cJSON_GetObjectItemCaseSensitive(args, "message");
  if (cJSON_IsString(msg) && msg->valuestring[0] && !*reply) *reply = strdup(msg->valuestring);
  cJSON *res = cJSON_CreateObject();
  cJSON_AddBoolToObject(res, "ok", 1);
  ag_json_add_int(res, "version", (int64_t)ctx->version);
  return print_take(res);
}

char *tool_exec_message(const cJSON *args, const char *const *ids, size_t n_ids, char **out) {
  mention_known known = {.ids = ids, .n = n_ids};
  return tool_exec_message_known(args, &known, out);
}

/* 1 when id is one of known's. */
static int known_has(const mention_known *k, const char *id) {
  if (k->has) return k->has(k->ctx, id);
  for (size_t i = 0; i < k->n; i++)
    if (k->ids[i] && strcmp(k->ids[i], id) == 0) return 1;
  return 0;
}

char *tool_exec_message_known(const cJSON *args, const mention_known *known, char **out) {
  size_t cap = 64;
  const cJSON *t;
  const cJSON *to = cJSON_GetObjectItemCaseSensitive(args, "to");
  cJSON_ArrayForEach(t, to) cap += strlen(t->valuestring) + 2;
  const char *text = cJSON_GetObjectItemCaseSensitive(args, "text")->valuestring;
  cap += strlen(text);
  char *msg = malloc(cap);
  if (!msg) return NULL;
  size_t pos = 0;
  const char *unknown = NULL;
  cJSON_ArrayForEach(t, to) {
    char id_buf[MENTION_ID_MAX] = "";
    int valid = mention_id_from_name(t->valuestring[0] == '@' ? t->valuestring + 1 : t->valuestring, id_buf,
                                     sizeof id_buf) == AG_OK;
    if (!(valid && known_has(known, id_buf)) && !unknown) unknown = t->valuestring;
    pos += (size_t)snprintf(msg + pos, cap - pos, "@%s ", id_buf);
  }
  if (unknown) {
    free(msg);
    *out = NULL;
    return tool_exec_error("no agent '%s' in this world", unknown);
  }
  snprintf(msg + pos, cap - pos, "%s", text);
  *out = msg;
  return NULL;
}

char *tool_exec_answer(const char *text) {
  cJSON *res = cJSON_CreateObject();
  cJSON_AddStringToObject(res, "answer", text);
  return print_take(res);
}

char *tool_exec_sent(uint64_t seq) {
  cJSON *res = cJSON_CreateObject();
  cJSON_AddBoolToObject(res, "ok", 1);
  ag_json_add_int(res, "seq", (int64_t)seq);
  return print_take(res);
}

int tool_exec_inline(context_state *ctx, const char *text, int64_t at_ms, char **rest, char **args_json,
                     char **result_json, int *failed) {
  cJSON *args = NULL;
  *rest = NULL;
  if (tool_inline_extract(text, &args, rest)) return 0;
  *args_json = cJSON_PrintUnformatted(args);
  *failed = context_apply(ctx, args, at_ms) != AG_OK;
  cJSON *res = cJSON_CreateObject();
  cJSON_AddBoolToObject(res, "ok", !*failed);
  ag_json_add_int(res, "version", (int64_t)ctx->version);
  *result_json = print_take(res);
  cJSON_Delete(args);
  return 1;
}
