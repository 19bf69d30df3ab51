/* libagora's events: the bus's messages and events, and the approver's requests, handed to the
 * subscribers as read-only views (and to the pull buffer as JSON lines), after the agents and storage
 * have seen them. */
#include "lib/agora_int.h"

#include "chat/event_json.h"
#include "runtime/output.h"

#include <stdlib.h>
#include <string.h>

struct agora_event {
  agora_world *w;
  int type;                    /* AGORA_EVENT_* */
  const ag_msg *m;             /* AGORA_EVENT_MESSAGE */
  const world_event *e;        /* AGORA_EVENT_WORLD */
  const world_approval *req;   /* AGORA_EVENT_REQUEST */
  uint64_t id;                 /* AGORA_EVENT_REQUEST, AGORA_EVENT_WITHDRAWN */
  int timed_out;               /* AGORA_EVENT_WITHDRAWN */
  const char *chat;            /* API 10: the chat it is in (NULL: none), its last message delivered */
  uint64_t position;
  char *json;                  /* made on first use, freed after the dispatch */
};

static const char *current_chat(agora_world *w) {
  chat_session *cs = rt_session(w->rt);
  return cs ? chat_session_current(cs) : NULL;
}

static cJSON *request_json(const agora_event *ev) {
  cJSON *j = cJSON_CreateObject();
  const world_approval *r = ev->req;
  if (!j) return NULL;
  cJSON_AddStringToObject(j, "type", agora_event_kind(ev));
  cJSON_AddNumberToObject(j, "id", (double)ev->id);
  if (r) {
    cJSON_AddStringToObject(j, "agent", r->agent_id);
    cJSON_AddStringToObject(j, "tool", r->tool);
    cJSON *args = cJSON_Parse(r->args_json ? r->args_json : "{}");
    cJSON_AddItemToObject(j, "args", args ? args : cJSON_CreateString(r->args_json ? r->args_json : ""));
    if (r->question) cJSON_AddStringToObject(j, "question", r->question);
  } else {
    cJSON_AddBoolToObject(j, "timed_out", ev->timed_out);
  }
  return j;
}

/* The line without the output layer's second tree (agora_json.c); AG_ERR_INVALID: take the slow path. */
static int fast_line(agora_event *ev, ag_buf *b) {
  const char *wid = world_id(ev->w->w), *chat = current_chat(ev->w);
  if (ev->type == AGORA_EVENT_MESSAGE) return agora__message_line(b, wid, chat, ev->m);
  if (ev->type == AGORA_EVENT_WORLD) return agora__event_line(b, wid, chat, ev->e);
  return AG_ERR_INVALID;
}

const char *agora_event_json(const agora_event *cev) {
  agora_event *ev = (agora_event *)cev; /* the view is the library's own: the text is cached in it */
  if (ev->json || ev->type == AGORA_EVENT_IDLE) return ev->json;
  ag_buf b;
  ag_buf_init(&b, 6 * CHAT_TEXT_LEN + 4096); /* every byte escaped as \u00XX still fits */
  if (!fast_line(ev, &b)) return ev->json = ag_buf_take(&b);
  ag_buf_free(&b);
  const char *wid = world_id(ev->w->w), *chat = current_chat(ev->w);
  cJSON *j = NULL;
  if (ev->type == AGORA_EVENT_MESSAGE) {
    j = output_message_json(wid, chat, ev->m);
  } else if (ev->type == AGORA_EVENT_WORLD) {
    cJSON *fields = chat_event_fields(ev->e);
    j = fields ? output_step_json(wid, chat, ev->e->kind, fields) : NULL;
    cJSON_Delete(fields);
  } else {
    j = request_json(ev);
  }
  ev->json = j ? output_json_text(j) : NULL;
  cJSON_Delete(j);
  return ev->json;
}

int agora_event_type(const agora_event *ev) { return ev->type; }
agora_world *agora_event_world(const agora_event *ev) { return ev->w; }

const char *agora_event_kind(const agora_event *ev) {
  switch (ev->type) {
  case AGORA_EVENT_MESSAGE: return "message";
  case AGORA_EVENT_WORLD: return ev_kind_name(ev->e->kind);
  case AGORA_EVENT_REQUEST: return ev->req->question ? "ask-human" : "approval-request";
  case AGORA_EVENT_IDLE: return "idle";
  default: return "request-withdrawn";
  }
}

const char *agora_event_sender(const agora_event *ev) { return ev->m ? ev->m->sender : NULL; }
const char *agora_event_text(const agora_event *ev) { return ev->m ? ev->m->text : NULL; }
uint64_t agora_event_seq(const agora_event *ev) { return ev->m ? ev->m->seq : 0; }

int agora_event_sim_time(const agora_event *ev, int64_t *ms) {
  if (!ev->m || !ev->m->has_sim) return 0;
  if (ms) *ms = ev->m->sim_ms;
  return 1;
}
uint64_t agora_event_request(const agora_event *ev) { return ev->id; }

const char *agora_event_agent(const agora_event *ev) {
  if (ev->m) return ev->m->kind == AG_KIND_AGENT || ev->m->kind == AG_KIND_TURN_LIMIT ? ev->m->sender : NULL;
  if (ev->e) return world_event_agent(ev->e);
  return ev->req ? ev->req->agent_id : NULL;
}

/* ---- delivery ---- */

/* Whole lines only: a line past the cap is dropped, and take says so. */
static void buffer_line(agora_world *w, agora_event *ev) {
  /* straight into the buffer, unless a subscriber has made the line already; text that is not valid
   * UTF-8 goes the slow way below, which repairs it */
  size_t start = w->events.len;
  int rc = ev->json ? AG_ERR_INVALID : fast_line(ev, &w->events);
  if (!rc && (rc = ag_buf_append(&w->events, "\n", 1))) { /* the line fitted, its newline did not */
    w->events.len = start;
    w->events.data[start] = '\0';
  }
  if (rc != AG_ERR_INVALID) {
    w->events_dropped |= rc != AG_OK;
    return;
  }
  const char *line = agora_event_json(ev);
  size_t n = line ? strlen(line) : 0;
  if (!line || w->events.len + n + 1 > w->events_cap || ag_buf_append(&w->events, line, n) ||
      ag_buf_append(&w->events, "\n", 1))
    w->events_dropped = 1;
}

/* Subscriptions ended during a dispatch leave a hole until it is over. */
static void compact(agora_world *w) {
  size_t k = 0;
  for (size_t i = 0; i < w->n_subs; i++)
    if (w->subs[i].fn) w->subs[k++] = w->subs[i];
  w->n_subs = k;
}

/* The chat ev is in, and the position in it: a message is at its own seq; on a change of chat the
 * position starts at the world's last seq, as agora serve's stream ids do. */
static void place(agora_world *w, agora_event *ev) {
  const char *cur = current_chat(w);
  if (strcmp(cur ? cur : "", w->pos_chat)) {
    snprintf(w->pos_chat, sizeof w->pos_chat, "%s", cur ? cur : "");
    w->position = world_last_seq(w->w);
  }
  if (ev->m) w->position = ev->m->seq;
  ev->chat = w->pos_chat[0] ? w->pos_chat : NULL;
  ev->position = w->position;
}

/* Whether sub takes ev: its chat's (or every chat's), and idle only when it asked. */
static int wants(const agora_sub *sub, const agora_event *ev) {
  if (!sub->fn || (ev->type == AGORA_EVENT_IDLE && !(sub->flags & AGORA_SUB_IDLE))) return 0;
  return !sub->chat[0] || (ev->chat && !strcmp(sub->chat, ev->chat));
}

static void dispatch(agora_world *w, agora_event *ev) {
  place(w, ev);
  if (w->events_cap && ev->type != AGORA_EVENT_IDLE) buffer_line(w, ev);
  size_t n = w->n_subs; /* a subscription made by a callback starts with the next event */
  w->dispatching++;
  for (size_t i = 0; i < n; i++)
    if (wants(&w->subs[i], ev)) w->subs[i].fn(ev, w->subs[i].ctx);
  if (!--w->dispatching) compact(w);
  free(ev->json);
  ev->json = NULL;
}

void agora__on_bus(void *ud, bus_topic topic, void *payload) {
  agora_world *w = ud;
  agora_event ev = {.w = w, .type = topic == BUS_MESSAGE ? AGORA_EVENT_MESSAGE : AGORA_EVENT_WORLD};
  if (topic == BUS_MESSAGE) ev.m = payload;
  else ev.e = &((bus_event *)payload)->ev;
  place(w, &ev); /* kept with nobody subscribed: a later subscription's first position is right */
  if (ev.m) w->stats.messages++;
  else rt_stats_event(&w->stats, ev.e);
  if (w->n_subs || w->events_cap) dispatch(w, &ev);
}

void agora__on_idle(void *ud) {
  agora_world *w = ud;
  if (w->idle_subs) dispatch(w, &(agora_event){.w = w, .type = AGORA_EVENT_IDLE});
}

void agora__dispatch_own(agora_world *w, const world_event *e) {
  if (!w->n_subs && !w->events_cap) return;
  dispatch(w, &(agora_event){.w = w, .type = AGORA_EVENT_WORLD, .e = e});
}

/* A request: approved at once with AGORA_AUTO_APPROVE, denied when nobody listens, else delivered and
 * left for agora_answer / agora_reply. */
static void ask(void *ud, const world_approval *req) {
  agora_world *w = ud;
  if (!req->question && (w->flags & AGORA_AUTO_APPROVE)) {
    world_approval_answer(w->w, req->id, 1);
    return;
  }
  if (!w->n_subs && !w->events_cap) {
    world_approval_reply(w->w, req->id, 0, "nobody to answer: the program using libagora does not subscribe to requests");
    return;
  }
  w->asked++;
  dispatch(w, &(agora_event){.w = w, .type = AGORA_EVENT_REQUEST, .req = req, .id = req->id});
}

static void withdrawn(void *ud, uint64_t id, int timed_out) {
  agora_world *w = ud;
  if (w->asked) w->asked--;
  dispatch(w, &(agora_event){.w = w, .type = AGORA_EVENT_WITHDRAWN, .id = id, .timed_out = timed_out});
}

const world_approver agora__approver = {.ask = ask, .withdrawn = withdrawn};

int agora_answer(agora_world *w, uint64_t id, int allow) {
  int rc = world_approval_answer(w->w, id, allow);
  if (!rc && w->asked) w->asked--;
  return rc ? agora__fail(rc, &(ag_errmsg){"no such request pending (ended, cancelled or answered)"}) : AG_OK;
}

int agora_reply(agora_world *w, uint64_t id, int allow, const char *text) {
  int rc = world_approval_reply(w->w, id, allow, text);
  if (!rc && w->asked) w->asked--;
  return rc ? agora__fail(rc, &(ag_errmsg){"no such request pending (ended, cancelled or answered)"}) : AG_OK;
}

/* ---- subscriptions and the pull buffer ---- */

static int subscribe(agora_world *w, const char *chat, unsigned flags, agora_event_fn fn, void *ctx) {
  if (w->n_subs == w->cap_subs) {
    size_t cap = w->cap_subs ? 2 * w->cap_subs : 4;
    agora_sub *s = realloc(w->subs, cap * sizeof *s);
    if (!s) return agora__fail(AG_ERR_NOMEM, NULL);
    w->subs = s, w->cap_subs = cap;
  }
  agora_sub *sub = &w->subs[w->n_subs++];
  *sub = (agora_sub){.id = ++w->next_sub, .fn = fn, .ctx = ctx, .flags = flags};
  snprintf(sub->chat, sizeof sub->chat, "%s", chat ? chat : "");
  w->idle_subs += !!(flags & AGORA_SUB_IDLE);
  return w->next_sub;
}

int agora_subscribe(agora_world *w, agora_event_fn fn, void *ctx) {
  if (!fn) return agora__fail(AG_ERR_INVALID, &(ag_errmsg){"agora_subscribe: fn is NULL"});
  return subscribe(w, NULL, 0, fn, ctx);
}

int agora_subscribe_chat(agora_world *w, const char *chat, unsigned flags, agora_event_fn fn, void *ctx) {
  ag_errmsg em = {""};
  if (!fn) return agora__fail(ag_fail(&em, AG_ERR_INVALID, "agora_subscribe_chat: fn is NULL"), &em);
  if (flags & ~(unsigned)AGORA_SUB_IDLE)
    return agora__fail(ag_fail(&em, AG_ERR_INVALID, "agora_subscribe_chat: flags 0x%x: unknown (AGORA_SUB_IDLE is "
                               "0x%x)", flags, AGORA_SUB_IDLE), &em);
  if (chat && (!*chat || strlen(chat) >= AGORA_ID_MAX))
    return agora__fail(ag_fail(&em, AG_ERR_INVALID, "agora_subscribe_chat: chat '%.80s' is not a chat id", chat), &em);
  return subscribe(w, chat, flags, fn, ctx);
}

const char *agora_event_chat(const agora_event *ev) { return ev->chat; }
uint64_t agora_event_position(const agora_event *ev) { return ev->position; }

int agora_unsubscribe(agora_world *w, int sub) {
  for (size_t i = 0; i < w->n_subs; i++) {
    if (w->subs[i].id != sub || !w->subs[i].fn) continue;
    w->subs[i].fn = NULL;
    w->idle_subs -= !!(w->subs[i].flags & AGORA_SUB_IDLE);
    if (!w->dispatching) compact(w);
    return AG_OK;
  }
  return agora__fail(AG_ERR_NOT_FOUND, &(ag_errmsg){"agora_unsubscribe: no such subscription"});
}

int agora_events_buffer(agora_world *w, size_t max_bytes) {
  ag_buf_free(&w->events);
  ag_buf_init(&w->events, max_bytes);
  w->events_cap = max_bytes;
  w->events_dropped = 0;
  return AG_OK;
}

int agora_events_take(agora_world *w, char **out, size_t *len) {
  size_t n = w->events.len;
  char *s = ag_buf_take(&w->events);
  if (!s) return agora__fail(AG_ERR_NOMEM, NULL);
  *out = s;
  if (len) *len = n;
  if (w->events_dropped) {
    w->events_dropped = 0;
    return agora__fail(AG_ERR_TOO_BIG, &(ag_errmsg){"events were dropped: the buffer was full"});
  }
  return AG_OK;
}

void agora__events_free(agora_world *w) {
  free(w->subs);
  w->subs = NULL;
  w->n_subs = w->cap_subs = w->idle_subs = 0;
  ag_buf_free(&w->events);
}
