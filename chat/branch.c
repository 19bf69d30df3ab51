/* chat_branch (see branch.h). What is stored per agent is the latest state, so the state at SEQ is
 * rebuilt: memories are cut at SEQ; turn counts are the agent's replies since the last human/world
 * message up to SEQ (a turn-limit notice in that span sets notice_sent); the scripted-reply position
 * is its replies and tool calls up to SEQ; contexts are reduced from the thread's successful save_context calls
 * anchored before SEQ, and the thread is copied up to there. */
#include "chat/branch.h"
#include "chat/inflight.h"

#include "agents/context.h"
#include "agents/msg.h"
#include "common/clock.h"
#include "storage/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BRANCH_AGENTS_MAX 4096

typedef struct branch_agent {
  char id[STORE_ID_MAX];
  store_agent_state st;
  context_state cx;
} branch_agent;

typedef struct branch_ctx {
  const char *src;
  uint64_t seq;
  char id[STORE_ID_MAX];
  store_txn *t;
  ag_errmsg *em;
  branch_agent *agents;
  size_t n;
  cJSON *calls; /* save_context calls by call_id, waiting for their result */
} branch_ctx;

static branch_agent *branch_agent_of(branch_ctx *b, const char *id) {
  for (size_t i = 0; i < b->n; i++)
    if (!strcmp(b->agents[i].id, id)) return &b->agents[i];
  if (b->n == BRANCH_AGENTS_MAX || strlen(id) >= STORE_ID_MAX) return NULL;
  branch_agent *a = &b->agents[b->n];
  memset(a, 0, sizeof *a);
  snprintf(a->id, sizeof a->id, "%s", id);
  if (context_init(&a->cx)) return NULL;
  b->n++;
  return a;
}

static int state_row(const char *agent_id, const store_agent_state *st, void *arg) {
  (void)st;
  return branch_agent_of(arg, agent_id) ? 0 : AG_ERR_NOMEM;
}

static int context_row(const char *agent_id, const store_context *c, void *arg) {
  (void)c;
  return branch_agent_of(arg, agent_id) ? 0 : AG_ERR_NOMEM;
}

static int copy_message(const store_message *m, void *arg) {
  branch_ctx *b = arg;
  if (m->seq > b->seq) return STORE_STOP;
  int rc = store_message_put(b->t, b->id, m);
  if (rc) return rc;
  if (m->kind == AG_KIND_HUMAN || m->kind == AG_KIND_WORLD) {
    for (size_t i = 0; i < b->n; i++) b->agents[i].st.turn_count = 0, b->agents[i].st.notice_sent = 0;
    return 0;
  }
  branch_agent *a = NULL;
  for (size_t i = 0; i < b->n && !a; i++) a = strcmp(b->agents[i].id, m->sender) ? NULL : &b->agents[i];
  if (a && m->kind == AG_KIND_AGENT) a->st.turn_count++, a->st.counter++;
  if (a && m->kind == AG_KIND_TURN_LIMIT) a->st.notice_sent = 1;
  return 0;
}

static int copy_memory(uint64_t seq, void *arg) {
  branch_ctx *b = arg;
  return seq > b->seq ? 0 : store_memory_append(b->t, b->id, b->agents[b->n].id, seq);
}

/* One thread event anchored before seq: copied, and a successful save_context applied. */
static int copy_event(const char *json, size_t len, void *arg) {
  branch_ctx *b = arg;
  cJSON *e = cJSON_ParseWithLength(json, len);
  const cJSON *after = cJSON_GetObjectItemCaseSensitive(e, "after_seq");
  int rc = 0;
  /* Bookkeeping of turns in flight stays with the source: a branch starts with nothing to resume. */
  if (e && cJSON_IsNumber(after) && after->valuedouble < (double)b->seq &&
      !chat_thread_bookkeeping(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "type")))) {
    char *text = strndup(json, len);
    rc = text ? store_thread_append(b->t, b->id, text) : AG_ERR_NOMEM;
    free(text);
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "type"));
    const char *tool = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "tool"));
    const char *call = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "call_id"));
    const char *who = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "agent"));
    branch_agent *a = who ? branch_agent_of(b, who) : NULL;
    if (a && type && !strcmp(type, "tool-call")) a->st.counter++; /* a reply of its own, like a message */
    if (!rc && type && tool && call && !strcmp(tool, "save_context")) {
      if (!strcmp(type, "tool-call")) {
        cJSON_AddItemToObject(b->calls, call, cJSON_DetachItemFromObjectCaseSensitive(e, "args"));
      } else if (!strcmp(type, "tool-result") && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "error"))) {
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(b->calls, call);
        const cJSON *at = cJSON_GetObjectItemCaseSensitive(e, "at_ms");
        if (a && args) context_apply(&a->cx, args, cJSON_IsNumber(at) ? (int64_t)at->valuedouble : 0);
      }
    }
  }
  cJSON_Delete(e);
  return rc;
}

static int branch_agents_put(branch_ctx *b) {
  int rc = 0;
  for (size_t i = 0; !rc && i < b->n; i++) {
    branch_agent *a = &b->agents[i];
    size_t n = b->n;
    b->n = i; /* copy_memory reads the agent at b->n */
    rc = store_memory_scan(b->t, b->src, a->id, copy_memory, b);
    b->n = n;
    if (!rc) rc = store_agent_state_put(b->t, b->id, a->id, &a->st);
    if (!rc && a->cx.version) {
      char *data = cJSON_PrintUnformatted(a->cx.data);
      store_context c = {a->cx.version, a->cx.updated_at_ms, data, NULL};
      rc = data ? store_context_put(b->t, b->id, a->id, &c) : AG_ERR_NOMEM;
      free(data);
    }
  }
  return rc;
}

static int branch_txn(store_txn *t, void *arg) {
  branch_ctx *b = arg;
  b->t = t;
  store_chat src;
  uint64_t last = 0;
  int rc = store_chat_get(t, b->src, &src);
  if (rc == AG_ERR_NOT_FOUND) return ag_fail(b->em, rc, "no chat '%s' in the database", b->src);
  if (rc || (rc = store_message_last_seq(t, b->src, &last))) goto done;
  if (b->seq < 1 || b->seq > last) {
    rc = ag_fail(b->em, AG_ERR_INVALID, "--at %llu: chat '%s' has messages 1 to %llu", (unsigned long long)b->seq,
                 b->src, (unsigned long long)last);
    goto done;
  }
  char title[STORE_TITLE_LEN + 1];
  snprintf(title, sizeof title, "%.*s (branch)", STORE_TITLE_LEN - 9, src.title);
  store_chat_id_new(b->id);
  int64_t now = ag_now_ms();
  store_chat c = {.id = b->id, .world_id = src.world_id, .title = title, .message_count = b->seq, .created_at_ms = now,
                  .updated_at_ms = now};
  if ((rc = store_chat_put(t, &c)) || (rc = store_agent_state_scan(t, b->src, state_row, b)) ||
      (rc = store_context_scan(t, b->src, context_row, b)))
    goto done;
  rc = store_message_scan(t, b->src, 1, copy_message, b);
  if (rc == STORE_STOP) rc = 0;
  if (!rc) rc = store_thread_scan(t, b->src, copy_event, b);
  if (!rc) rc = branch_agents_put(b);
done:
  store_chat_free(&src);
  return rc;
}

int chat_branch__in(store_txn *t, const char *chat_id, uint64_t seq, char out[CHAT_ID_MAX], ag_errmsg *em) {
  branch_ctx b = {chat_id, seq, "", NULL, em, calloc(BRANCH_AGENTS_MAX, sizeof(branch_agent)), 0, cJSON_CreateObject()};
  int rc = b.agents && b.calls ? branch_txn(t, &b) : AG_ERR_NOMEM;
  for (size_t i = 0; i < b.n; i++) context_free(&b.agents[i].cx);
  free(b.agents);
  cJSON_Delete(b.calls);
  if (!rc) memcpy(out, b.id, CHAT_ID_MAX);
  return rc;
}

typedef struct branch_args {
  const char *chat_id;
  uint64_t seq;
  char *out;
  ag_errmsg *em;
} branch_args;

static int branch_write(store_txn *t, void *arg) {
  branch_args *a = arg;
  return chat_branch__in(t, a->chat_id, a->seq, a->out, a->em);
}

int chat_branch(store *st, const char *chat_id, uint64_t seq, char out[CHAT_ID_MAX], ag_errmsg *em) {
  return store_write(st, branch_write, &(branch_args){chat_id, seq, out, em}, em);
}
