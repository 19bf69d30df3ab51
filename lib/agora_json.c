/* The JSON lines of messages and events without the output layer's second cJSON tree: what every event
 * consumer of the library receives (a Python consumer reads hundreds of thousands a second). Each is byte
 * for byte the line `agora run --json` prints (runtime/output.c, cJSON's escaping); text that is not
 * valid UTF-8 takes that slow path instead, which repairs it. */
#include "lib/agora_int.h"

#include "chat/event_json.h"
#include "common/clock.h"
#include "common/json_write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* s as a JSON string, escaped as cJSON does; AG_ERR_INVALID when s is not valid UTF-8. */
static int put_string(ag_buf *b, const char *s) { return ag_json_put_string(b, s, AG_JSON_UTF8_CHECK); }

int agora__message_line(ag_buf *b, const char *world, const char *chat, const ag_msg *m) {
  char ts[AG_TIME_LEN], seq[24];
  size_t start = b->len;
  ag_time_format(m->ts_ms, ts, sizeof ts);
  snprintf(seq, sizeof seq, "%llu", (unsigned long long)m->seq);
  int rc = ag_buf_appends(b, "{\"type\":\"message\",\"world\":");
  if (!rc) rc = put_string(b, world ? world : "");
  if (!rc) rc = ag_buf_appends(b, ",\"chat\":");
  if (!rc) rc = chat ? put_string(b, chat) : ag_buf_appends(b, "null");
  if (!rc) rc = ag_buf_appends(b, ",\"seq\":");
  if (!rc) rc = ag_buf_appends(b, seq);
  if (!rc) rc = ag_buf_appends(b, ",\"sender\":");
  if (!rc) rc = put_string(b, m->sender);
  if (!rc) rc = ag_buf_appends(b, ",\"kind\":\"");
  if (!rc) rc = ag_buf_appends(b, ag_kind_name(m->kind));
  if (!rc) rc = ag_buf_appends(b, "\",\"text\":");
  if (!rc) rc = put_string(b, m->text);
  if (!rc) rc = ag_buf_appends(b, ",\"ts\":\"");
  if (!rc) rc = ag_buf_appends(b, ts);
  if (!rc) rc = ag_buf_append(b, "\"", 1);
  if (!rc && m->has_sim) {
    ag_time_format(m->sim_ms, ts, sizeof ts);
    rc = ag_buf_printf(b, ",\"sim_time\":\"%s\"", ts);
  }
  if (!rc) rc = ag_buf_append(b, "}", 1);
  if (rc) { /* nothing half-written stays */
    b->len = start;
    if (b->data) b->data[start] = '\0';
  }
  return rc;
}

/* Whole numbers print as cJSON prints them ("%d" when the double is its int); others through cJSON. */
static int put_number(ag_buf *b, const cJSON *v) {
  if (v->valuedouble == (double)v->valueint) {
    char n[16];
    snprintf(n, sizeof n, "%d", v->valueint);
    return ag_buf_appends(b, n);
  }
  char *text = cJSON_PrintUnformatted(v);
  int rc = text ? ag_buf_appends(b, text) : AG_ERR_NOMEM;
  cJSON_free(text);
  return rc;
}

/* v's members (or elements) written as cJSON_PrintUnformatted writes them, without its buffer, its
 * number round trip or a second pass for UTF-8; AG_ERR_INVALID when a string is not valid UTF-8. */
static int put_members(ag_buf *b, const cJSON *v, int keys) {
  int rc = AG_OK;
  for (const cJSON *it = v->child; !rc && it; it = it->next) {
    if (it != v->child) rc = ag_buf_append(b, ",", 1);
    if (!rc && keys && !(rc = put_string(b, it->string))) rc = ag_buf_append(b, ":", 1);
    if (rc) break;
    switch (it->type & 0xFF) {
    case cJSON_String: rc = put_string(b, it->valuestring ? it->valuestring : ""); break;
    case cJSON_Number: rc = put_number(b, it); break;
    case cJSON_Raw: rc = ag_buf_appends(b, it->valuestring ? it->valuestring : ""); break;
    case cJSON_True: rc = ag_buf_appends(b, "true"); break;
    case cJSON_False: rc = ag_buf_appends(b, "false"); break;
    case cJSON_NULL: rc = ag_buf_appends(b, "null"); break;
    case cJSON_Array:
    case cJSON_Object: {
      int obj = (it->type & 0xFF) == cJSON_Object;
      rc = ag_buf_append(b, obj ? "{" : "[", 1);
      if (!rc) rc = put_members(b, it, obj);
      if (!rc) rc = ag_buf_append(b, obj ? "}" : "]", 1);
      break;
    }
    default: rc = AG_ERR_INVALID; /* not a value cJSON would print */
    }
  }
  return rc;
}

int agora__event_line(ag_buf *b, const char *world, const char *chat, const world_event *e) {
  cJSON *fields = chat_event_fields(e);
  size_t start = b->len;
  /* the output layer drops fields named world or chat (its own ids come first): rare, left to it */
  int rc = !fields || cJSON_GetObjectItemCaseSensitive(fields, "world") ||
               cJSON_GetObjectItemCaseSensitive(fields, "chat") ? AG_ERR_INVALID
           : ag_buf_printf(b, "{\"type\":\"event\",\"event\":\"%s\",\"world\":", ev_kind_name(e->kind));
  if (!rc) rc = put_string(b, world ? world : "");
  if (!rc) rc = ag_buf_appends(b, ",\"chat\":");
  if (!rc) rc = chat ? put_string(b, chat) : ag_buf_appends(b, "null");
  if (!rc && fields->child) rc = ag_buf_append(b, ",", 1);
  if (!rc) rc = put_members(b, fields, 1);
  if (!rc) rc = ag_buf_append(b, "}", 1);
  if (rc) { /* nothing half-written stays; text that is not valid UTF-8 takes the slow path, which repairs it */
    b->len = start;
    if (b->data) b->data[start] = '\0';
  }
  cJSON_Delete(fields);
  return rc;
}
