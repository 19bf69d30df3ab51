/* The MCP client's calls: queued until the server is ready, sent with an id, found again by id,
 * timed out, cancelled, answered (see client.h; the lifecycle is in client.c). */
#include "mcp/client_int.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonnum.h"
#include "mcp/render.h"
#include "mcp/rpc.h"

static mcp_call **bucket(mcp_client *c, long long id) { return &c->buckets[(unsigned long long)id & (MCP_CALL_BUCKETS - 1)]; }

static void unhash(mcp_call *call) {
  if (call->state != CALL_SENT) return;
  for (mcp_call **p = bucket(call->c, call->id); *p; p = &(*p)->hnext)
    if (*p == call) {
      *p = call->hnext;
      break;
    }
  call->state = CALL_QUEUED;
}

static void unlink_call(mcp_call *call) {
  mcp_client *c = call->c;
  if (call->prev) call->prev->next = call->next;
  else if (c->head == call) c->head = call->next;
  if (call->next) call->next->prev = call->prev;
  else if (c->tail == call) c->tail = call->prev;
  call->prev = call->next = NULL;
}

static void arm(mcp_call *call) {
  struct timeval tv = {call->timeout_ms / 1000, (call->timeout_ms % 1000) * 1000};
  evtimer_add(call->timer, &tv);
}

static void on_timeout(evutil_socket_t fd, short what, void *arg);

mcp_call *mcp__call_new(mcp_client *c, call_kind kind, long timeout_ms) {
  mcp_call *call = calloc(1, sizeof *call);
  if (!call) return NULL;
  call->c = c;
  call->kind = kind;
  call->timeout_ms = timeout_ms > 0 ? timeout_ms : c->timeout_ms;
  call->epoch = c->epoch;
  call->timer = evtimer_new(c->base, on_timeout, call);
  if (!call->timer) {
    free(call);
    return NULL;
  }
  call->prev = c->tail;
  if (c->tail) c->tail->next = call;
  else c->head = call;
  c->tail = call;
  c->n_calls++;
  arm(call);
  return call;
}

void mcp__call_free(mcp_call *call) {
  unhash(call);
  unlink_call(call);
  call->c->n_calls--;
  event_free(call->timer);
  free(call->tool);
  free(call->args);
  free(call);
}

int mcp__call_send(mcp_call *call, const char *method, cJSON *params) {
  mcp_client *c = call->c;
  if (!c->t) {
    cJSON_Delete(params);
    return AG_ERR_IO;
  }
  call->id = ++c->next_id;
  char *msg = mcp_rpc_request(call->id, method, params);
  if (!msg) return AG_ERR_NOMEM;
  int rc = c->t->ops->send(c->t, msg, strlen(msg));
  free(msg);
  if (rc) return rc;
  call->state = CALL_SENT;
  call->hnext = *bucket(c, call->id);
  *bucket(c, call->id) = call;
  return AG_OK;
}

mcp_call *mcp__call_find(mcp_client *c, long long id) {
  for (mcp_call *call = *bucket(c, id); call; call = call->hnext)
    if (call->id == id) return call;
  return NULL;
}

void mcp__call_finish(mcp_call *call, const char *text, int is_error) {
  mcp_result_fn fn = call->fn;
  void *ud = call->ud;
  /* The one way out of the client for a result or an error: the server's secrets stop here. */
  char *clean = mcp_secrets_redact(&call->c->secrets, text);
  mcp__call_free(call);
  mcp_result r = {clean ? clean : "(the result could not be scrubbed of secrets: out of memory)", clean ? is_error : 1};
  if (fn) fn(ud, &r);
  free(clean);
}

/* tools/call's params, with the call's id as its progress token (a progress notification restarts its
 * timeout: a long task that reports progress is not cut off). */
static cJSON *tool_params(const mcp_call *call, long long id) {
  cJSON *p = cJSON_CreateObject(), *args = call->args ? cJSON_Parse(call->args) : cJSON_CreateObject();
  cJSON *meta = cJSON_CreateObject();
  if (!p || !args || !meta || !cJSON_IsObject(args)) {
    cJSON_Delete(p), cJSON_Delete(args), cJSON_Delete(meta);
    return NULL;
  }
  cJSON_AddStringToObject(p, "name", call->tool);
  cJSON_AddItemToObject(p, "arguments", args);
  ag_json_add_int(meta, "progressToken", (int64_t)id);
  cJSON_AddItemToObject(p, "_meta", meta);
  return p;
}

/* Sends a queued call. Arguments that are not an object fail it from the loop (never inside
 * mcp_client_call); a transport that refused ends, and its end fails the call. */
static void send_tool_call(mcp_call *call) {
  cJSON *params = tool_params(call, call->c->next_id + 1);
  if (!params) {
    call->fail = "invalid arguments: not a JSON object";
    struct timeval now = {0, 0};
    evtimer_add(call->timer, &now);
    return;
  }
  mcp__call_send(call, "tools/call", params);
}

void mcp__calls_flush(mcp_client *c) {
  /* A failing send may end a call (and free it): take the next one first. */
  for (mcp_call *call = c->head, *next; call; call = next) {
    next = call->next;
    if (call->kind == CALL_TOOL && call->state == CALL_QUEUED) send_tool_call(call);
    if (!c->t) break; /* the transport ended meanwhile: the rest wait for the next start */
  }
}

void mcp__calls_fail(mcp_client *c, const char *why) {
  char text[400];
  snprintf(text, sizeof text, "MCP server %s: %s", c->name, why);
  /* Calls made by the callbacks below belong to the next start: they come after the old ones (the
   * list is in creation order), so this ends at the first of them. A callback may cancel other old
   * calls; taking the head each time never touches a freed one. */
  unsigned old = c->epoch++;
  while (c->head && c->head->epoch <= old) {
    mcp_call *call = c->head;
    if (call->kind != CALL_TOOL) mcp__call_free(call);
    else mcp__call_finish(call, text, 1);
  }
}

/* notifications/cancelled for a call the server has (best effort: the call ends either way). */
static void tell_cancelled(const mcp_call *call, const char *reason) {
  mcp_client *c = call->c;
  if (call->state != CALL_SENT || !c->t) return;
  cJSON *p = cJSON_CreateObject();
  ag_json_add_int(p, "requestId", (int64_t)call->id);
  cJSON_AddStringToObject(p, "reason", reason);
  char *msg = mcp_rpc_notification("notifications/cancelled", p);
  if (msg) c->t->ops->send(c->t, msg, strlen(msg));
  free(msg);
}

static void on_timeout(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  mcp_call *call = arg;
  mcp_client *c = call->c;
  char text[400];
  if (call->fail) {
    mcp__call_finish(call, call->fail, 1);
    return;
  }
  if (call->kind != CALL_TOOL) {
    snprintf(text, sizeof text, "no answer to the handshake within %ld ms", call->timeout_ms);
    mcp__client_down(c, text);
    return;
  }
  snprintf(text, sizeof text, "MCP server %s: no answer within %ld ms", c->name, call->timeout_ms);
  tell_cancelled(call, "timeout");
  mcp__call_finish(call, text, 1);
}

void mcp__call_answered(mcp_call *call, const cJSON *result, long long code, const char *error_text) {
  if (!result) {
    char text[600];
    snprintf(text, sizeof text, "MCP error %lld: %s", code, error_text);
    mcp__call_finish(call, text, 1);
    return;
  }
  char *text = NULL;
  int is_error = 0;
  if (mcp_render_result(result, call->c->result_cap, &text, &is_error)) {
    mcp__call_finish(call, "out of memory rendering the result", 1);
    return;
  }
  mcp__call_finish(call, text, is_error);
  free(text);
}

void mcp__call_progress(mcp_client *c, const cJSON *params) {
  const cJSON *tok = cJSON_GetObjectItemCaseSensitive(params, "progressToken");
  if (!cJSON_IsNumber(tok)) return;
  mcp_call *call = mcp__call_find(c, (long long)tok->valuedouble);
  if (call && call->kind == CALL_TOOL) arm(call);
}

int mcp_client_call(mcp_client *c, const char *tool, const char *args_json, long timeout_ms, mcp_result_fn fn,
                    void *ud, mcp_call **out) {
  mcp_call *call = mcp__call_new(c, CALL_TOOL, timeout_ms);
  if (!call) return AG_ERR_NOMEM;
  call->fn = fn;
  call->ud = ud;
  call->tool = strdup(tool);
  call->args = args_json ? strdup(args_json) : NULL;
  if (!call->tool || (args_json && !call->args)) {
    mcp__call_free(call);
    return AG_ERR_NOMEM;
  }
  if (out) *out = call;
  if (c->state == MC_READY) send_tool_call(call);
  else mcp__client_wake(c);
  return AG_OK;
}

void mcp_call_cancel(mcp_call *call) {
  tell_cancelled(call, "cancelled by the user");
  mcp__call_free(call);
}
