/* The MCP client's lifecycle (see client.h): start, handshake, tool list, messages from the server,
 * going down and starting again with backoff. The calls themselves are in call.c. */
#include "mcp/client_int.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcp/render.h"
#include "mcp/rpc.h"

/* Protocol versions this client speaks; a server may answer any of them. */
static const char *const g_versions[] = {"2025-11-25", MCP_PROTOCOL_VERSION, "2025-03-26", "2024-11-05"};

int64_t mcp__now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void tools_free(mcp_tool *t, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(t[i].name);
    free(t[i].description);
    free(t[i].input_schema);
  }
  free(t);
}

/* One state setter, so every transition is seen in one place. */
static void client_set_state(mcp_client *c, client_state s) { c->state = s; }

static void client_close_transport(mcp_client *c) {
  mcp_transport *t = c->t;
  c->t = NULL;
  if (t) t->ops->close(t);
}

void mcp__client_down(mcp_client *c, const char *why) {
  int starting = c->state != MC_READY;
  char *clean = mcp_secrets_redact(&c->secrets, why);
  snprintf(c->why, sizeof c->why, "%s", clean ? clean : "the server ended (its reason could not be scrubbed)");
  free(clean);
  why = c->why;
  client_close_transport(c);
  client_set_state(c, MC_IDLE);
  tools_free(c->listing, c->n_listing);
  c->listing = NULL;
  c->n_listing = c->list_pages = 0;
  c->failed_at_ms = mcp__now_ms();
  c->backoff_ms = c->backoff_ms ? c->backoff_ms * 2 : MCP_BACKOFF_MIN_MS;
  if (c->backoff_ms > MCP_BACKOFF_MAX_MS) c->backoff_ms = MCP_BACKOFF_MAX_MS;
  mcp__calls_fail(c, why);
  if (starting && c->ev.on_start) c->ev.on_start(c->ev.ud, c, AG_ERR_IO, c->why);
}

static void send_notification(mcp_client *c, const char *method, cJSON *params) {
  char *msg = mcp_rpc_notification(method, params);
  if (msg && c->t) c->t->ops->send(c->t, msg, strlen(msg));
  free(msg);
}

/* tools/list, from the start or after a cursor. Failing to send ends the start. */
static void send_list(mcp_client *c, const char *cursor) {
  mcp_call *call = mcp__call_new(c, CALL_LIST, 0);
  cJSON *params = cursor ? cJSON_CreateObject() : NULL;
  if (params) cJSON_AddStringToObject(params, "cursor", cursor);
  if (!call || mcp__call_send(call, "tools/list", params)) {
    if (call) mcp__call_free(call);
    mcp__client_down(c, "cannot send tools/list");
  }
}

static void on_start_timer(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  mcp_client *c = arg;
  ag_errmsg em = {{0}};
  if (c->state != MC_IDLE) return;
  if (c->connect(c->connect_ud, c->base, &c->sink, c, &c->t, &em)) {
    c->t = NULL;
    mcp__client_down(c, em.text[0] ? em.text : "cannot start");
    return;
  }
  client_set_state(c, MC_STARTING);
  cJSON *p = cJSON_CreateObject(), *info = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "protocolVersion", MCP_PROTOCOL_VERSION);
  cJSON_AddItemToObject(p, "capabilities", cJSON_CreateObject());
  cJSON_AddStringToObject(info, "name", "agora");
  cJSON_AddStringToObject(info, "version", c->version);
  cJSON_AddItemToObject(p, "clientInfo", info);
  mcp_call *call = mcp__call_new(c, CALL_INIT, 0);
  if (!call || mcp__call_send(call, "initialize", p)) {
    if (call) mcp__call_free(call);
    mcp__client_down(c, "cannot send initialize");
  }
}

static void on_init_result(mcp_client *c, const cJSON *result) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(result, "protocolVersion");
  int known = 0;
  for (size_t i = 0; cJSON_IsString(v) && i < sizeof g_versions / sizeof *g_versions; i++)
    known |= !strcmp(v->valuestring, g_versions[i]);
  if (!known) {
    char why[160];
    snprintf(why, sizeof why, "the server speaks MCP version %.64s, which Agora does not",
             cJSON_IsString(v) ? v->valuestring : "(none)");
    mcp__client_down(c, why);
    return;
  }
  send_notification(c, "notifications/initialized", NULL);
  client_set_state(c, MC_LISTING);
  send_list(c, NULL);
}

/* Copies one listed tool; 0 when it has no name (skipped). */
static int tool_copy(const cJSON *j, mcp_tool *t) {
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
  const cJSON *desc = cJSON_GetObjectItemCaseSensitive(j, "description");
  const cJSON *schema = cJSON_GetObjectItemCaseSensitive(j, "inputSchema");
  const cJSON *ann = cJSON_GetObjectItemCaseSensitive(j, "annotations");
  if (!cJSON_IsString(name) || !name->valuestring[0]) return 0;
  t->name = strdup(name->valuestring);
  t->description = strdup(cJSON_IsString(desc) ? desc->valuestring : "");
  t->input_schema = cJSON_IsObject(schema) ? cJSON_PrintUnformatted(schema) : strdup("{\"type\":\"object\"}");
  t->read_only = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ann, "readOnlyHint"));
  return 1;
}

static void list_done(mcp_client *c) {
  tools_free(c->tools, c->n_tools);
  c->tools = c->listing;
  c->n_tools = c->n_listing;
  c->listing = NULL;
  c->n_listing = c->list_pages = 0;
  if (c->state == MC_LISTING) {
    client_set_state(c, MC_READY);
    c->backoff_ms = 0;
    c->reinitialized = 0;
    c->why[0] = '\0';
    mcp__calls_flush(c);
    if (c->ev.on_start) c->ev.on_start(c->ev.ud, c, AG_OK, "");
  } else if (c->ev.on_tools) {
    c->ev.on_tools(c->ev.ud, c);
  }
  if (c->relist && c->state == MC_READY) {
    c->relist = 0;
    send_list(c, NULL);
  }
}

static void on_list_result(mcp_client *c, const cJSON *result) {
  const cJSON *tools = cJSON_GetObjectItemCaseSensitive(result, "tools"), *j;
  const cJSON *cursor = cJSON_GetObjectItemCaseSensitive(result, "nextCursor");
  size_t more = (size_t)cJSON_GetArraySize(tools);
  if (!cJSON_IsArray(tools) || c->n_listing + more > MCP_TOOLS_MAX || ++c->list_pages > MCP_LIST_PAGES_MAX) {
    mcp__client_down(c, cJSON_IsArray(tools) ? "too many tools listed" : "tools/list answered without tools");
    return;
  }
  mcp_tool *grown = realloc(c->listing, (c->n_listing + more + 1) * sizeof *grown);
  if (!grown) {
    mcp__client_down(c, "out of memory");
    return;
  }
  c->listing = grown;
  cJSON_ArrayForEach(j, tools) {
    mcp_tool *t = &c->listing[c->n_listing];
    memset(t, 0, sizeof *t);
    if (!tool_copy(j, t)) continue;
    c->n_listing++;
    if (!t->name || !t->description || !t->input_schema) {
      mcp__client_down(c, "out of memory");
      return;
    }
  }
  if (cJSON_IsString(cursor) && cursor->valuestring[0]) send_list(c, cursor->valuestring);
  else list_done(c);
}

/* A request from the server: ping is answered; Agora offers no other capability. */
static void on_request(mcp_client *c, const mcp_msg *m) {
  char *msg = !strcmp(m->method, "ping") ? mcp_rpc_result(m->id, NULL)
                                         : mcp_rpc_error(m->id, -32601, "method not supported by this client");
  if (msg && c->t) c->t->ops->send(c->t, msg, strlen(msg));
  free(msg);
}

static void on_notification(mcp_client *c, const mcp_msg *m) {
  if (!strcmp(m->method, "notifications/progress")) {
    mcp__call_progress(c, m->params);
  } else if (!strcmp(m->method, "notifications/tools/list_changed")) {
    /* Before the first list is asked for, that list is the news; while one is collected, list again. */
    if (c->state == MC_READY && !c->listing && !c->list_pages) send_list(c, NULL);
    else if (c->state == MC_LISTING || c->list_pages) c->relist = 1;
  }
}

static void on_response(mcp_client *c, const mcp_msg *m) {
  mcp_call *call = m->has_num_id ? mcp__call_find(c, m->num_id) : NULL;
  if (!call) return; /* an answer to a call cancelled or timed out */
  call_kind kind = call->kind;
  if (kind == CALL_TOOL) {
    mcp__call_answered(call, m->kind == MCP_MSG_RESULT ? m->result : NULL, m->error_code, m->error_text);
    return;
  }
  mcp__call_free(call);
  if (m->kind == MCP_MSG_ERROR) {
    char why[400];
    snprintf(why, sizeof why, "%s failed: %.300s", kind == CALL_INIT ? "initialize" : "tools/list", m->error_text);
    mcp__client_down(c, why);
  } else if (kind == CALL_INIT) {
    on_init_result(c, m->result);
  } else {
    on_list_result(c, m->result);
  }
}

static void on_message(void *ud, const char *json, size_t len) {
  mcp_client *c = ud;
  mcp_msg m;
  const char *why;
  if (mcp_msg_parse(json, len, &m, &why)) {
    /* A request whose id cannot be echoed gets JSON-RPC's Invalid Request (id null), not silence; anything
     * else that is not JSON-RPC is ignored, as a stray line would be. */
    char *msg = why == mcp_rpc_bad_request_id ? mcp_rpc_invalid(why) : NULL;
    if (msg && c->t) c->t->ops->send(c->t, msg, strlen(msg));
    free(msg);
    return;
  }
  switch (m.kind) {
  case MCP_MSG_REQUEST: on_request(c, &m); break;
  case MCP_MSG_NOTIFICATION: on_notification(c, &m); break;
  case MCP_MSG_RESULT:
  case MCP_MSG_ERROR: on_response(c, &m); break;
  }
  mcp_msg_free(&m);
}

static void on_closed(void *ud, const char *why) {
  mcp_client *c = ud;
  char copy[256];
  snprintf(copy, sizeof copy, "%s", why); /* borrowed from the transport, which close frees */
  /* An HTTP session the server forgot: initialize again at once, once (not after a backoff). */
  int reinit = !strcmp(copy, MCP_SESSION_EXPIRED) && c->state == MC_READY && !c->reinitialized;
  mcp__client_down(c, copy);
  if (!reinit) return;
  c->reinitialized = 1;
  c->failed_at_ms = 0;
  mcp__client_wake(c);
}

void mcp__client_wake(mcp_client *c) {
  if (c->state != MC_IDLE || evtimer_pending(c->restart, NULL)) return;
  int64_t wait = c->failed_at_ms ? c->failed_at_ms + c->backoff_ms - mcp__now_ms() : 0;
  if (wait < 0) wait = 0;
  struct timeval tv = {(long)(wait / 1000), (long)(wait % 1000) * 1000};
  evtimer_add(c->restart, &tv);
}

int mcp_client_new(struct event_base *base, const mcp_client_config *cfg, const mcp_client_events *ev,
                   mcp_client **out) {
  mcp_client *c = calloc(1, sizeof *c);
  if (!c) return AG_ERR_NOMEM;
  c->base = base;
  c->name = strdup(cfg->name ? cfg->name : "?");
  c->version = strdup(cfg->version ? cfg->version : "0");
  c->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : MCP_TIMEOUT_MS;
  c->result_cap = cfg->result_cap ? cfg->result_cap : MCP_RESULT_CAP;
  c->connect = cfg->connect;
  c->connect_ud = cfg->connect_ud;
  if (ev) c->ev = *ev;
  c->sink.on_message = on_message;
  c->sink.on_closed = on_closed;
  c->restart = evtimer_new(base, on_start_timer, c);
  if (!c->name || !c->version || !c->restart) {
    mcp_client_free(c);
    return AG_ERR_NOMEM;
  }
  *out = c;
  return AG_OK;
}

void mcp_client_start(mcp_client *c) {
  c->failed_at_ms = 0;
  mcp__client_wake(c);
}

void mcp_client_restart(mcp_client *c) {
  if (c->state != MC_IDLE) mcp__client_down(c, "restarted on request");
  c->why[0] = '\0'; /* nothing failed: the next start says how it went */
  evtimer_del(c->restart);
  c->failed_at_ms = 0;
  c->backoff_ms = 0;
  mcp__client_wake(c);
}

void mcp_client_free(mcp_client *c) {
  if (!c) return;
  while (c->head) mcp__call_free(c->head);
  client_close_transport(c);
  if (c->restart) event_free(c->restart);
  tools_free(c->tools, c->n_tools);
  tools_free(c->listing, c->n_listing);
  mcp_secrets_clear(&c->secrets);
  free(c->name);
  free(c->version);
  free(c);
}

int mcp_client_redact_vars(mcp_client *c, const char *const *templates, size_t n) {
  mcp_secrets_clear(&c->secrets);
  for (size_t i = 0; i < n; i++)
    if (mcp_secrets_add_vars(&c->secrets, templates[i])) return AG_ERR_NOMEM;
  return AG_OK;
}

const char *mcp_client_name(const mcp_client *c) { return c->name; }
int mcp_client_ready(const mcp_client *c) { return c->state == MC_READY; }
const char *mcp_client_why(const mcp_client *c) { return c->why; }
size_t mcp_client_pending(const mcp_client *c) { return c->n_calls; }
mcp_transport *mcp_client_transport(const mcp_client *c) { return c->t; }

const mcp_tool *mcp_client_tools(const mcp_client *c, size_t *n) {
  *n = c->n_tools;
  return c->tools;
}

const mcp_tool *mcp_client_tool(const mcp_client *c, const char *name) {
  for (size_t i = 0; i < c->n_tools; i++)
    if (!strcmp(c->tools[i].name, name)) return &c->tools[i];
  return NULL;
}
