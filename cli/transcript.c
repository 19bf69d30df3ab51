/* Stored chats printed the way run printed them (see transcript.h); chat/transcript.c puts the
 * messages and tool steps in order, this file paces and prints them. */
#include "cli/transcript.h"

#include "chat/transcript.h"
#include "chat/usage.h"

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

typedef struct print_ctx {
  output *o;
  long delay;
  int seen; /* a message was printed: the next one waits */
} print_ctx;

static int print_entry(const chat_entry *e, void *arg) {
  print_ctx *pc = arg;
  if (!e->msg) {
    output_thread_step(pc->o, e->kind, e->fields);
    return 0;
  }
  if (pc->seen) pace(pc->delay);
  pc->seen = 1;
  output_message(pc->o, e->msg);
  return 0;
}

int transcript_print_stored(store *st, const char *chat_id, output *o, long delay_ms, ag_errmsg *em) {
  print_ctx pc = {o, delay_ms, 0};
  return chat_transcript_each(st, chat_id, print_entry, &pc, em);
}

int transcript_print_snapshot(const cJSON *snap, output *o, long delay_ms) {
  print_ctx pc = {o, delay_ms, 0};
  return chat_snapshot_each(snap, print_entry, &pc);
}

int transcript_print_usage(store *st, const char *chat_id, int json, ag_errmsg *em) {
  chat_usage u;
  int rc = chat_usage_get(st, chat_id, &u, em);
  if (rc) return rc;
  for (size_t i = 0; i < u.n; i++) {
    const chat_usage_row *r = &u.rows[i];
    if (json)
      printf("{\"type\":\"usage\",\"agent\":\"%s\",\"calls\":%zu,\"input_tokens\":%.0f,\"output_tokens\":%.0f}\n",
             r->agent, r->calls, r->in, r->out);
    else
      printf("tokens of %s: %.0f in, %.0f out (%zu call%s)\n", r->agent, r->in, r->out, r->calls,
             r->calls == 1 ? "" : "s");
  }
  chat_usage_free(&u);
  return AG_OK;
}

typedef struct state_ctx {
  int json;
  int n;
} state_ctx;

static int state_cb(const char *agent_id, const context_state *cx, void *arg) {
  state_ctx *sc = arg;
  cJSON *j = context_to_json(cx);
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
    printf("state of %s: version %llu, updated %s\n  %s\n", agent_id, (unsigned long long)cx->version,
           cJSON_IsString(u) ? u->valuestring : "never", data ? data : "{}");
    free(data);
  }
  cJSON_Delete(j);
  return 0;
}

int transcript_print_state(store *st, const char *chat_id, int json, ag_errmsg *em) {
  state_ctx sc = {json, 0};
  int rc = chat_contexts_each(st, chat_id, state_cb, &sc, em);
  if (!rc && !sc.n && !json) printf("(no agent has saved a context in this chat)\n");
  if (!rc && !json) printf("\n");
  return rc;
}
