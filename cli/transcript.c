/* Stored chats printed the way run printed them (see transcript.h). */
#include "cli/transcript.h"

#include "agents/context.h"
#include "chat/snapshot.h"
#include "common/jsonnum.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void pace(long ms) {
  if (ms <= 0) return;
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* Prints the thread events anchored after seq, from *next on; events are in anchor order. */
static void print_events_upto(const cJSON *thread, const cJSON **next, uint64_t seq, output *o) {
  while (*next) {
    const cJSON *after = cJSON_GetObjectItemCaseSensitive(*next, "after_seq");
    int64_t a;
    if (!ag_json_int(after, 0, AG_JSON_INT_MAX, &a) && (uint64_t)a > seq) return;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(*next, "type");
    cJSON *fields = cJSON_Duplicate(*next, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(fields, "type");
    cJSON_DeleteItemFromObjectCaseSensitive(fields, "after_seq");
    output_event(o, cJSON_IsString(type) ? type->valuestring : "event", fields);
    cJSON_Delete(fields);
    *next = (*next)->next;
  }
  (void)thread;
}

typedef struct stored_ctx {
  output *o;
  long delay;
  cJSON *thread;
  const cJSON *next;
} stored_ctx;

static int thread_cb(const char *json, size_t len, void *arg) {
  cJSON *e = cJSON_ParseWithLength(json, len);
  if (e) cJSON_AddItemToArray((cJSON *)arg, e);
  return 0;
}

static int msg_cb(const store_message *m, void *arg) {
  stored_ctx *sc = arg;
  ag_msg msg = {1, m->seq, (char *)m->sender, (char *)m->text, (ag_kind)m->kind, m->ts_ms, {0, NULL}, 0};
  if (m->seq > 1) pace(sc->delay);
  output_message(sc->o, &msg);
  print_events_upto(sc->thread, &sc->next, m->seq, sc->o);
  return 0;
}

int transcript_print_stored(store_txn *t, const char *chat_id, output *o, long delay_ms) {
  stored_ctx sc = {o, delay_ms, cJSON_CreateArray(), NULL};
  if (!sc.thread) return AG_ERR_NOMEM;
  int rc = store_thread_scan(t, chat_id, thread_cb, sc.thread);
  if (!rc) {
    sc.next = sc.thread->child;
    print_events_upto(sc.thread, &sc.next, 0, o);
    rc = store_message_scan(t, chat_id, 1, msg_cb, &sc);
  }
  if (!rc) print_events_upto(sc.thread, &sc.next, UINT64_MAX, o);
  cJSON_Delete(sc.thread);
  return rc;
}

int transcript_print_snapshot(const cJSON *snap, output *o, long delay_ms) {
  const cJSON *thread = cJSON_GetObjectItemCaseSensitive(snap, "thread");
  const cJSON *next = cJSON_IsArray(thread) ? thread->child : NULL;
  print_events_upto(thread, &next, 0, o);
  const cJSON *m;
  int first = 1;
  cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(snap, "messages")) {
    ag_msg msg = {1, (uint64_t)cJSON_GetObjectItem(m, "seq")->valuedouble, cJSON_GetObjectItem(m, "sender")->valuestring,
                  cJSON_GetObjectItem(m, "text")->valuestring,
                  (ag_kind)ag_kind_parse(cJSON_GetObjectItem(m, "kind")->valuestring),
                  chat_time_parse(cJSON_GetObjectItem(m, "ts")->valuestring), {0, NULL}, 0};
    if (!first) pace(delay_ms);
    first = 0;
    output_message(o, &msg);
    print_events_upto(thread, &next, msg.seq, o);
  }
  print_events_upto(thread, &next, UINT64_MAX, o);
  return AG_OK;
}

typedef struct state_ctx {
  int json;
  int n;
} state_ctx;

static int state_cb(const char *agent_id, const store_context *c, void *arg) {
  state_ctx *sc = arg;
  context_state cs = {c->version, c->updated_at_ms, cJSON_Parse(c->data_json)};
  if (!cs.data) return AG_ERR_STORAGE;
  cJSON *j = context_to_json(&cs);
  context_free(&cs);
  if (!j) return AG_ERR_NOMEM;
  sc->n++;
  if (sc->json) {
    cJSON_AddStringToObject(j, "type", "state");
    cJSON_AddStringToObject(j, "agent", agent_id);
    char *s = cJSON_PrintUnformatted(j);
    if (s) puts(s);
    free(s);
  } else {
    char *data = cJSON_PrintUnformatted(cJSON_GetObjectItem(j, "data"));
    const cJSON *u = cJSON_GetObjectItem(j, "updated_at");
    printf("state of %s: version %llu, updated %s\n  %s\n", agent_id, (unsigned long long)c->version,
           cJSON_IsString(u) ? u->valuestring : "never", data ? data : "{}");
    free(data);
  }
  cJSON_Delete(j);
  return 0;
}

int transcript_print_state(store_txn *t, const char *chat_id, int json) {
  state_ctx sc = {json, 0};
  int rc = store_context_scan(t, chat_id, state_cb, &sc);
  if (!rc && !sc.n && !json) printf("(no agent has saved a context in this chat)\n");
  if (!rc && !json) printf("\n");
  return rc;
}
