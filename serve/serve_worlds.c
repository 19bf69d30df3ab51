/* The worlds agora serve hosts: each built on the server's one loop with its session (saving as the
 * console does), its clock, and its event stream fed from the bus at the output phase with the very
 * objects `run --json` prints. Tool approvals and ask_human questions wait here for an HTTP answer. */
#include "serve/serve_int.h"

#include "chat/event_json.h"
#include "chat/transcript.h"
#include "runtime/output.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the stream's ids need beyond the hub: the chat they are in and its last message delivered. */
typedef struct serve_world_ext {
  serve_world sw; /* first: a serve_world * is a serve_world_ext * */
  const char *label; /* while opening: the file or id, for messages */
  char chat[CHAT_ID_MAX];
  uint64_t seq;
} serve_world_ext;

/* The current chat for the next frame; on a change of chat its position starts at the world's seq. */
static const char *frame_chat(serve_world_ext *x) {
  const char *cur = x->sw.cs ? chat_session_current(x->sw.cs) : NULL;
  if (!cur) cur = "";
  if (strcmp(cur, x->chat)) {
    snprintf(x->chat, sizeof x->chat, "%s", cur);
    x->seq = world_last_seq(x->sw.w);
  }
  return x->chat[0] ? x->chat : NULL;
}

/* Publishes j (taken) into the world's stream. */
static void publish(serve_world_ext *x, cJSON *j) {
  char *text = j ? output_json_text(j) : NULL;
  cJSON_Delete(j);
  if (text) sse_hub_publish(x->sw.hub, text, x->chat[0] ? x->chat : NULL, x->seq);
  free(text);
}

static void event_frame(serve_world_ext *x, const world_event *e) {
  if (e->kind == EV_STORAGE_ERROR) /* kept for the report at stop, which nobody may be streaming */
    snprintf(x->sw.srv->storage_error, sizeof x->sw.srv->storage_error, "%s", e->u.storage.error);
  const char *chat = frame_chat(x);
  cJSON *fields = chat_event_fields(e);
  if (fields) publish(x, output_step_json(world_id(x->sw.w), chat, e->kind, fields));
  cJSON_Delete(fields);
}

static void on_bus(void *ud, bus_topic topic, void *payload) {
  serve_world_ext *x = ud;
  if (topic == BUS_MESSAGE) {
    const ag_msg *m = payload;
    const char *chat = frame_chat(x);
    x->sw.stats.messages++;
    x->seq = m->seq;
    publish(x, output_message_json(world_id(x->sw.w), chat, m));
  } else {
    const world_event *e = &((const bus_event *)payload)->ev;
    rt_stats_event(&x->sw.stats, e);
    if (e->kind == EV_TURNS_RESUMED) {
      snprintf(x->sw.resumed_chat, sizeof x->sw.resumed_chat, "%s", frame_chat(x) ? frame_chat(x) : "");
      snprintf(x->sw.resumed_agents, sizeof x->sw.resumed_agents, "%s", e->u.resumed.agents);
      x->sw.resumed_replies = e->u.resumed.replies;
    }
    event_frame(x, e);
  }
}

void serve_world_announce(serve_world *sw, const world_event *e) { event_frame((serve_world_ext *)sw, e); }

/* ---- resuming from stored messages ---- */

typedef struct replay {
  serve_world_ext *x;
  sse_client *c;
  const char *chat;
  uint64_t until, last;
  size_t bytes, max_bytes;
} replay;

static int replay_one(const chat_entry *e, void *arg) {
  replay *r = arg;
  if (!e->msg) return 0;
  if (e->msg->seq > r->until || r->bytes >= r->max_bytes) return CHAT_STOP;
  char id[SSE_ID_MAX];
  sse_id_format(r->x->sw.hub, 0, r->chat, e->msg->seq, id);
  cJSON *j = output_message_json(world_id(r->x->sw.w), r->chat, e->msg);
  char *text = j ? output_json_text(j) : NULL;
  cJSON_Delete(j);
  int rc = text ? sse_client_send(r->c, id, text) : AG_ERR_NOMEM;
  r->bytes += text ? strlen(text) + strlen(id) + 16 : 0;
  free(text);
  if (rc) return AG_ERR_NOMEM;
  r->last = e->msg->seq;
  return 0;
}

/* A resume from a position the ring no longer holds: the messages stored after it, if it is in the
 * current chat (otherwise the client is told to resync and reloads), one slice per call. */
static int fallback(void *ud, sse_client *c, const char *chat, uint64_t after, uint64_t *until, size_t max_bytes,
                    uint64_t *last) {
  serve_world_ext *x = ud;
  const char *cur = chat_session_current(x->sw.cs);
  if (!chat || !cur || strcmp(chat, cur)) return -1;
  if (!*until) {
    *until = world_last_seq(x->sw.w);
    if (*until > after && *until - after > SSE_FALLBACK_MAX) return -1;
  }
  replay r = {.x = x, .c = c, .chat = cur, .until = *until, .last = after, .max_bytes = max_bytes};
  ag_errmsg em = {""};
  int rc = after < *until ? chat_messages_each(x->sw.srv->st, cur, after + 1, replay_one, &r, &em) : 0;
  /* a gap in storage (nothing more up to until) ends the replay too */
  *last = rc == 0 && r.bytes < max_bytes ? *until : r.last;
  return rc ? -1 : 0;
}

/* ---- approvals ---- */

static serve_ask *ask_find(serve *s, uint64_t id, size_t *at) {
  for (size_t i = 0; i < s->n_asks; i++)
    if (s->asks[i].id == id) return *at = i, &s->asks[i];
  return NULL;
}

static void ask_remove(serve *s, size_t i) {
  serve_ask *a = &s->asks[i];
  free(a->agent), free(a->tool), free(a->args), free(a->question);
  memmove(a, a + 1, (s->n_asks - i - 1) * sizeof *a);
  s->n_asks--;
}

/* The "approval" event of an ended tool approval, made here from the request serve keeps rather than
 * from a world event: the library emits no such event (agora_answer only answers; docs/decisions.md
 * "serve's own approval events"), so serve, which answers, says what happened. Same fields, in the same
 * order, as chat/event_json.c gives an EV_APPROVAL. */
static cJSON *approval_frame(serve_world_ext *x, const serve_ask *a, int approved, const char *ended,
                             const char *chat) {
  cJSON *j = cJSON_CreateObject();
  if (!j) return NULL;
  cJSON_AddStringToObject(j, "type", "event");
  cJSON_AddStringToObject(j, "event", "approval");
  cJSON_AddStringToObject(j, "world", world_id(x->sw.w));
  if (chat) cJSON_AddStringToObject(j, "chat", chat);
  else cJSON_AddNullToObject(j, "chat");
  cJSON_AddStringToObject(j, "agent", a->agent);
  cJSON_AddStringToObject(j, "tool", a->tool);
  cJSON_AddBoolToObject(j, "approved", approved);
  if (ended) cJSON_AddStringToObject(j, "ended", ended);
  return j;
}

/* The end of a request, for the page: its prompt goes away. */
static void ask_ended(serve_world_ext *x, const serve_ask *a, int approved, const char *ended) {
  const char *chat = frame_chat(x);
  cJSON *j = cJSON_CreateObject();
  if (!j) return;
  cJSON_AddStringToObject(j, "type", "approval-ended");
  cJSON_AddStringToObject(j, "world", world_id(x->sw.w));
  if (chat) cJSON_AddStringToObject(j, "chat", chat);
  else cJSON_AddNullToObject(j, "chat");
  cJSON_AddNumberToObject(j, "id", (double)a->id);
  publish(x, j);
  if (!a->question) publish(x, approval_frame(x, a, approved, ended, chat));
}

/* The request as the stream and GET /api/worlds/{id} show it. */
cJSON *serve_ask_json(const serve_ask *a, const char *chat) {
  cJSON *j = cJSON_CreateObject();
  if (!j) return NULL;
  cJSON_AddStringToObject(j, "type", "approval-request");
  cJSON_AddStringToObject(j, "world", world_id(a->sw->w));
  if (chat) cJSON_AddStringToObject(j, "chat", chat);
  else cJSON_AddNullToObject(j, "chat");
  cJSON_AddNumberToObject(j, "id", (double)a->id);
  cJSON_AddStringToObject(j, "agent", a->agent);
  cJSON_AddStringToObject(j, "tool", a->tool);
  cJSON *args = cJSON_Parse(a->args);
  cJSON_AddItemToObject(j, "args", args ? args : cJSON_CreateString(a->args));
  if (a->question) cJSON_AddStringToObject(j, "question", a->question);
  return j;
}

static void on_ask(void *ud, const world_approval *req) {
  serve_world_ext *x = ud;
  serve *s = x->sw.srv;
  if (s->n_asks == s->cap_asks) {
    size_t ncap = s->cap_asks ? s->cap_asks * 2 : 8;
    serve_ask *p = realloc(s->asks, ncap * sizeof *p);
    if (!p) {
      world_approval_answer(x->sw.w, req->id, 0);
      return;
    }
    s->asks = p, s->cap_asks = ncap;
  }
  serve_ask *a = &s->asks[s->n_asks];
  *a = (serve_ask){++s->next_ask, req->id, &x->sw, strdup(req->agent_id), strdup(req->tool), strdup(req->args_json),
                   req->question ? strdup(req->question) : NULL};
  s->n_asks++;
  if (!a->agent || !a->tool || !a->args || (req->question && !a->question)) {
    ask_remove(s, s->n_asks - 1);
    world_approval_answer(x->sw.w, req->id, 0);
    return;
  }
  publish(x, serve_ask_json(a, frame_chat(x)));
}

static void on_withdrawn(void *ud, uint64_t local, int timed_out) {
  serve_world_ext *x = ud;
  serve *s = x->sw.srv;
  for (size_t i = 0; i < s->n_asks; i++) {
    if (s->asks[i].sw != &x->sw || s->asks[i].local != local) continue;
    ask_ended(x, &s->asks[i], 0, timed_out ? "timed out" : "cancelled");
    ask_remove(s, i);
    return;
  }
}

int serve_approval_answer(serve *s, uint64_t id, int allow, const char *text) {
  size_t i;
  serve_ask *a = ask_find(s, id, &i);
  /* Ids are handed out in order and never reused: one not pending but handed out has ended. */
  if (!a) return id && id <= s->next_ask ? AG_ERR_STATE : AG_ERR_NOT_FOUND;
  world *w = a->sw->w;
  int rc = a->question ? world_approval_reply(w, a->local, allow, text) : world_approval_answer(w, a->local, allow);
  if (rc == AG_ERR_STATE) return rc;
  if (!rc) ask_ended((serve_world_ext *)a->sw, a, allow, NULL);
  ask_remove(s, i);
  return rc;
}

/* ---- loading and freeing ---- */

static void world_release(serve *s, serve_world_ext *x) {
  for (size_t i = s->n_asks; i-- > 0;)
    if (s->asks[i].sw == &x->sw) ask_remove(s, i);
  if (x->sw.cs) { /* its last save, whose failures the stop reports */
    chat_session_detach(x->sw.cs);
    s->unsaved += chat_session_failures(x->sw.cs);
  }
  rt_close(x->sw.rt); /* the clock, the NATS join, the MCP servers, the session and the world */
  sse_hub_free(x->sw.hub);
  free(x);
}

/* The stream moved to another chat (already current in the session): the page hears of it. */
static void stream_chat(void *ud, const char *chat) {
  serve_world_ext *x = ud;
  chat_info c;
  ag_errmsg em = {""};
  if (!chat_info_get(x->sw.srv->st, chat, &c, &em))
    serve_world_announce(&x->sw, &(world_event){EV_CHAT_LOADED, .u.chat_open = {c.id, c.title, c.message_count}});
}

static serve_world *find_loaded(serve *s, const char *id);

/* The world is built: one served world per id, and its event stream. */
static int on_world(void *ud, runtime *rt, ag_errmsg *em) {
  serve_world_ext *x = ud;
  serve *s = x->sw.srv;
  x->sw.w = rt_world(rt);
  if (find_loaded(s, world_id(x->sw.w)))
    return ag_fail(em, AG_ERR_INVALID, "%s: world '%s' is already served", x->label, world_id(x->sw.w));
  int rc = sse_hub_new(s->base, s->boot, fallback, x, &x->sw.hub);
  if (rc) return ag_fail(em, rc, "%s", ag_strerror(rc));
  sse_hub_set_closecb(x->sw.hub, serve_conn_closed, s); /* a stream's connection is still counted */
  return AG_OK;
}

/* Frames go out when the bus is idle, before the commit: they never wait for the disk. */
static void flush_frames(void *ud) { sse_hub_flush(((serve_world_ext *)ud)->sw.hub); }

/* Opens world (a file, or a stored world's id with stored) on the server's loop through the runtime
 * and resumes its current chat (a new one when it has none); a file with --nats joins its world over
 * NATS instead (the stream's chat is current). */
static int host(serve *s, const char *world, int stored, ag_errmsg *em) {
  serve_world_ext *x = calloc(1, sizeof *x);
  serve_world **list = realloc(s->worlds, (s->n_worlds + 1) * sizeof *list);
  if (list) s->worlds = list;
  if (!x || !list) {
    free(x);
    return ag_fail(em, AG_ERR_NOMEM, "out of memory");
  }
  x->sw.srv = s;
  x->label = world;
  int join = !stored && s->nats.url;
  rt_opts o = {.cmd = NULL, .world = world, .from_store = stored, .st = s->st, .db = chat_store_dir(s->st),
               .base = s->base, .over = s->over, .allow = &s->allow, .nats = &s->nats, .nats_role = join ? RT_NATS_VIEW : RT_NATS_OFF,
               .pick = RT_CHAT_CURRENT, .rerun_turns = 1, .mcp = 1, .clock = 1, .emit_chunks = 1, .on_world = on_world,
               .on_bus = on_bus, .on_bus_ud = x, .on_idle = flush_frames,
               .approver = &(world_approver){on_ask, on_withdrawn}, .approver_ud = x, .on_stream_chat = stream_chat};
  int rc = rt_open(&o, &x->sw.rt, em);
  if (rc) {
    sse_hub_free(x->sw.hub);
    free(x);
    return rc;
  }
  x->sw.w = rt_world(x->sw.rt);
  x->sw.cs = rt_session(x->sw.rt);
  x->sw.nats = rt_join(x->sw.rt);
  x->sw.named = !stored;
  x->label = NULL;
  const char *still = rt_clock_still(x->sw.rt);
  if (still) fprintf(stderr, "agora: serve: world %s: %s\n", world_id(x->sw.w), still);
  s->worlds[s->n_worlds++] = &x->sw;
  return AG_OK;
}

static serve_world *find_loaded(serve *s, const char *id) {
  for (size_t i = 0; i < s->n_worlds; i++)
    if (!strcmp(world_id(s->worlds[i]->w), id)) return s->worlds[i];
  return NULL;
}

int serve_world_get(serve *s, const char *id, serve_world **out, ag_errmsg *em) {
  if ((*out = find_loaded(s, id))) return AG_OK;
  int rc = host(s, id, 1, em);
  if (!rc) *out = s->worlds[s->n_worlds - 1];
  return rc;
}

serve_world *serve_world_find(serve *s, const char *id) { return find_loaded(s, id); }

int serve_world_add_file(serve *s, const char *path, ag_errmsg *em) { return host(s, path, 0, em); }

void serve_world_unload(serve *s, serve_world *sw) {
  for (size_t i = 0; i < s->n_worlds; i++) {
    if (s->worlds[i] != sw) continue;
    memmove(&s->worlds[i], &s->worlds[i + 1], (s->n_worlds - i - 1) * sizeof *s->worlds);
    s->n_worlds--;
    world_release(s, (serve_world_ext *)sw);
    return;
  }
}

void serve_world_cancel(serve_world *sw) {
  char names[512];
  rt_cancel(sw->rt, names, sizeof names);
  serve_world_announce(sw, &(world_event){EV_CANCELLED, .u.cancelled = {names[0] ? names : NULL}});
}

void serve_worlds_settle(serve *s) {
  /* Replies in flight are cancelled; what was published is delivered, and so saved. */
  for (size_t i = 0; i < s->n_worlds; i++)
    if (!world_is_quiet(s->worlds[i]->w)) serve_world_cancel(s->worlds[i]);
  for (int k = 0; k < 100000; k++) {
    int quiet = 1;
    for (size_t i = 0; i < s->n_worlds; i++) {
      if (world_is_quiet(s->worlds[i]->w)) continue;
      quiet = 0;
      world_cancel_all(s->worlds[i]->w);
    }
    if (quiet) break;
    event_base_loop(s->base, EVLOOP_NONBLOCK);
  }
}

void serve_worlds_free(serve *s) {
  for (size_t i = 0; i < s->n_worlds; i++) world_release(s, (serve_world_ext *)s->worlds[i]);
  free(s->worlds);
  s->worlds = NULL;
  s->n_worlds = 0;
  free(s->asks);
  s->asks = NULL;
}
