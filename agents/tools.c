/* Built-in tool names, definitions and argument checks (see tools.h). */
#include "agents/tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const llm_tool defs[TOOL_COUNT] = {
  {"load_context", "Load what you saved about this conversation: {version, updated_at, data}.",
   "{\"type\":\"object\",\"properties\":{}}"},
  {"save_context",
   "Save what to remember of this conversation and give your reply. Lists (topics, people, notes) "
   "accumulate; pass drop to remove items. message is published as your reply.",
   "{\"type\":\"object\",\"properties\":{"
   "\"message\":{\"type\":\"string\",\"description\":\"your reply, published to the others\"},"
   "\"topics\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
   "\"people\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
   "\"notes\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
   "\"drop\":{\"type\":\"object\",\"description\":\"items to remove, e.g. {\\\"topics\\\": [\\\"x\\\"]}\"}},"
   "\"required\":[\"message\"]}"},
  {"send_message", "Send a message to the given agents (by id or name).",
   "{\"type\":\"object\",\"properties\":{"
   "\"to\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
   "\"text\":{\"type\":\"string\"}},\"required\":[\"to\",\"text\"]}"},
  {"ask_human", "Ask the human user a question and wait for the answer: {answer}.",
   "{\"type\":\"object\",\"properties\":{"
   "\"question\":{\"type\":\"string\",\"description\":\"what to ask the human\"}},"
   "\"required\":[\"question\"]}"},
  {"remember",
   "Store a note in your long-term memory, to be recalled when it becomes relevant, with how important it is "
   "(1: mundane, 10: vital).",
   "{\"type\":\"object\",\"properties\":{"
   "\"text\":{\"type\":\"string\",\"description\":\"what to remember\"},"
   "\"importance\":{\"type\":\"number\",\"minimum\":1,\"maximum\":10}},"
   "\"required\":[\"text\"]}"},
};

const char *tool_name(tool_id id) { return id < TOOL_COUNT ? defs[id].name : "unknown"; }

int tool_parse(const char *name, tool_id *out) {
  for (int i = 0; i < TOOL_COUNT; i++) {
    if (!strcmp(name, defs[i].name)) {
      *out = (tool_id)i;
      return AG_OK;
    }
  }
  return AG_ERR_INVALID;
}

const llm_tool *tool_definition(tool_id id) { return id < TOOL_COUNT ? &defs[id] : NULL; }

static int all_strings(const cJSON *arr) {
  const cJSON *x;
  cJSON_ArrayForEach(x, arr) if (!cJSON_IsString(x)) return 0;
  return 1;
}

int tool_args_parse(tool_id id, const char *args_json, cJSON **out, char *err, size_t cap) {
  cJSON *a = cJSON_Parse(args_json && args_json[0] ? args_json : "{}");
  if (!a || !cJSON_IsObject(a)) {
    snprintf(err, cap, "arguments must be a JSON object");
    goto bad;
  }
  if (id == TOOL_SAVE_CONTEXT) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(a, "message");
    if (m && !cJSON_IsString(m)) {
      snprintf(err, cap, "message must be a string");
      goto bad;
    }
    static const char *const lists[] = {"topics", "people", "notes"};
    for (int i = 0; i < 3; i++) {
      const cJSON *l = cJSON_GetObjectItemCaseSensitive(a, lists[i]);
      if (l && (!cJSON_IsArray(l) || !all_strings(l))) {
        snprintf(err, cap, "%s must be an array of strings", lists[i]);
        goto bad;
      }
    }
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(a, "drop");
    if (d && !cJSON_IsObject(d)) {
      snprintf(err, cap, "drop must be an object of arrays");
      goto bad;
    }
  } else if (id == TOOL_SEND_MESSAGE) {
    const cJSON *to = cJSON_GetObjectItemCaseSensitive(a, "to");
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(a, "text");
    if (!cJSON_IsArray(to) || cJSON_GetArraySize(to) == 0 || !all_strings(to)) {
      snprintf(err, cap, "to must be a non-empty array of agent ids");
      goto bad;
    }
    if (!cJSON_IsString(text) || !text->valuestring[0]) {
      snprintf(err, cap, "text must be a non-empty string");
      goto bad;
    }
  } else if (id == TOOL_REMEMBER) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(a, "text");
    const cJSON *imp = cJSON_GetObjectItemCaseSensitive(a, "importance");
    if (!cJSON_IsString(t) || !t->valuestring[0]) {
      snprintf(err, cap, "text must be a non-empty string");
      goto bad;
    }
    if (imp && (!cJSON_IsNumber(imp) || !(imp->valuedouble >= 1 && imp->valuedouble <= 10))) {
      snprintf(err, cap, "importance must be a number from 1 to 10");
      goto bad;
    }
  } else if (id == TOOL_ASK_HUMAN) {
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(a, "question");
    if (!cJSON_IsString(q) || !q->valuestring[0]) {
      snprintf(err, cap, "question must be a non-empty string");
      goto bad;
    }
  }
  *out = a;
  return AG_OK;
bad:
  cJSON_Delete(a);
  return AG_ERR_INVALID;
}

int tool_inline_extract(const char *text, cJSON **args, char **rest) {
  const char *start = NULL, *p = text;
  while ((p = strstr(p, "```json"))) {
    start = p;
    p += 7;
  }
  if (!start) return AG_ERR_NOT_FOUND;
  const char *body = start + 7;
  const char *end = strstr(body, "```");
  if (!end) return AG_ERR_NOT_FOUND;
  cJSON *j = cJSON_ParseWithLength(body, (size_t)(end - body));
  if (!cJSON_IsObject(j)) {
    cJSON_Delete(j);
    return AG_ERR_NOT_FOUND;
  }
  size_t before = (size_t)(start - text);
  const char *after = end + 3;
  char *r = malloc(before + strlen(after) + 1);
  if (!r) {
    cJSON_Delete(j);
    return AG_ERR_NOMEM;
  }
  memcpy(r, text, before);
  strcpy(r + before, after);
  *args = j;
  *rest = r;
  return AG_OK;
}
