/* Stored chats printed the way run printed them (see transcript.h); chat/transcript.c puts the
 * messages and tool steps in order, this file paces and prints them. */
#include "cli/transcript.h"

#include "chat/transcript.h"

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

/* Token totals of one agent, summed from the llm-done events of the thread. */
typedef struct usage_row {
  char agent[64];
  double in, out;
  size_t calls;
} usage_row;

typedef struct usage_ctx {
  usage_row rows[64]; /* agents beyond the 64th are summed in the last row's stead: never in practice */
  size_t n;
} usage_ctx;

static int usage_cb(const chat_entry *e, void *arg) {
  usage_ctx *u = arg;
  if (e->msg || e->kind != EV_LLM_DONE) return 0;
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(e->fields, "agent");
  const char *agent = cJSON_IsString(a) ? a->valuestring : "?";
  size_t i = 0;
  while (i < u->n && strcmp(u->rows[i].agent, agent)) i++;
  if (i == u->n) {
    if (u->n == sizeof u->rows / sizeof *u->rows) i = u->n - 1;
    else snprintf(u->rows[u->n++].agent, sizeof u->rows[0].agent, "%s", agent);
  }
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(e->fields, "input_tokens");
  const cJSON *out = cJSON_GetObjectItemCaseSensitive(e->fields, "output_tokens");
  u->rows[i].in += cJSON_IsNumber(in) ? in->valuedouble : 0;
  u->rows[i].out += cJSON_IsNumber(out) ? out->valuedouble : 0;
  u->rows[i].calls++;
  return 0;
}

int transcript_print_usage(store *st, const char *chat_id, int json, ag_errmsg *em) {
  usage_ctx u = {.n = 0};
  int rc = chat_transcript_each(st, chat_id, usage_cb, &u, em);
  if (rc) return rc;
  for (size_t i = 0; i < u.n; i++) {
    const usage_row *r = &u.rows[i];
    if (json)
      printf("{\"type\":\"usage\",\"agent\":\"%s\",\"calls\":%zu,\"input_tokens\":%.0f,\"output_tokens\":%.0f}\n",
             r->agent, r->calls, r->in, r->out);
    else
      printf("tokens of %s: %.0f in, %.0f out (%zu call%s)\n", r->agent, r->in, r->out, r->calls,
             r->calls == 1 ? "" : "s");
  }
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
