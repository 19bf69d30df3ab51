/* A world on NATS JetStream, the loop's side (see cluster.h). The world's bus hands every published
 * message here; it goes to the stream with a de-duplication id and waits, "in flight", until the
 * stream brings it back. Deliveries arrive on libnats' threads and reach the loop through the relay;
 * here they are checked to follow each other (stream seq + 1: a gap makes a new consumer from the
 * missing seq), counted into the chat's seqs, and given to the world. Nothing here blocks the loop:
 * JetStream management and leases run on the control thread (control.c). */
#include "cluster/cluster.h"

#include "cluster/control.h"
#include "cluster/flight.h"
#include "cluster/wire.h"
#include "common/clock.h"
#include "common/ring.h"
#include "storage/store.h"
#include "world/events.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct held {
  const char *id; /* the world's agent id (borrowed from the agent) */
  int leased;
} held;

struct cluster {
  world *w;
  struct event_base *base;
  cluster_opts o;
  relay *r;
  control *ctl;
  natsConnection *nc; /* read by libnats' thread; published to from the loop */
  jsCtx *js;
  natsSubscription *sub;
  char deliver[128];  /* the consumer's deliver subject (an inbox of nc) */
  char world[WIRE_ID_MAX], stream[128], prefix[WIRE_ID_MAX + 8];
  uint64_t delivered; /* last stream seq handled */
  uint64_t catch_up;  /* the stream's last seq when we joined */
  int ready;          /* caught up: agents may answer here */
  int asking;         /* a new consumer was asked for and has not come */
  int64_t heard_ms;   /* when the consumer last said anything (message or heartbeat) */
  int64_t record_ms;  /* when the last record was delivered */
  struct event *tick;
  char chat[WIRE_ID_MAX];
  uint64_t count;     /* messages of the chat delivered: the next one's seq is count + 1 */
  char (*old)[WIRE_ID_MAX]; /* chats left behind: their late records are ignored everywhere */
  size_t n_old;
  held *held;         /* sorted by id */
  size_t n_held, n_local;
  flights fl;
  ag_ring backlog;    /* of natsMsg *: deliveries waiting for the bus to drain before a chat switch */
  void (*on_chat)(void *ud, const char *chat);
  void *on_chat_ud;
  uint64_t n_sent, n_events;
  char nonce[STORE_ID_MAX];
};

static int held_cmp(const void *a, const void *b) { return strcmp(((const held *)a)->id, ((const held *)b)->id); }

static held *held_find(const cluster *c, const char *id) {
  held key = {id, 0};
  return c->n_held ? bsearch(&key, c->held, c->n_held, sizeof *c->held, held_cmp) : NULL;
}

static int cl_is_local(void *ctx, const char *id) {
  cluster *c = ctx;
  held *h = c->ready ? held_find(c, id) : NULL;
  return h && h->leased;
}

/* ---- sending ---- */

static int cl_send_record(cluster *c, const wire_record *rec, const char *suffix, const char *key) {
  char *data = NULL, subject[256], id[WIRE_ID_MAX * 2 + 96];
  size_t len = 0;
  int rc = wire_encode(rec, &data, &len);
  if (rc) return rc;
  snprintf(subject, sizeof subject, "%s.%s.%s", c->prefix, rec->chat, suffix);
  if (key) snprintf(id, sizeof id, "%s.%s", rec->chat, key);
  else snprintf(id, sizeof id, "%s.p%s.%llu", rec->chat, c->nonce, (unsigned long long)++c->n_sent);
  rc = flights_add(&c->fl, c->js, id, subject, data, len); /* takes data */
  return rc;
}

/* The bus's transport: a message goes to the stream. Before this process has caught up, what the
 * world publishes is the replay of decisions already in the stream (turn-limit notices): not sent. */
static int cl_send(void *ctx, ag_msg *m, const char *key) {
  cluster *c = ctx;
  if (!c->ready || !c->chat[0]) return AG_OK;
  wire_record rec = {.type = WIRE_MSG, .sender = m->sender, .text = m->text, .kind = m->kind, .ts_ms = m->ts_ms,
                     .has_sim = m->has_sim, .sim_ms = m->sim_ms};
  snprintf(rec.chat, sizeof rec.chat, "%s", c->chat);
  return cl_send_record(c, &rec, "msg", key);
}

static size_t cl_in_flight(void *ctx) { return flights_count(&((cluster *)ctx)->fl); }

static int cl_turn_end(void *ctx, const char *agent_id, uint64_t trigger, size_t counter) {
  cluster *c = ctx;
  if (!c->ready || !c->chat[0]) return 0;
  wire_record rec = {.type = WIRE_TURN_END, .kind = AG_KIND_AGENT, .trigger = trigger, .counter = counter};
  snprintf(rec.chat, sizeof rec.chat, "%s", c->chat);
  snprintf(rec.agent, sizeof rec.agent, "%s", agent_id);
  char key[WIRE_ID_MAX + 32];
  snprintf(key, sizeof key, "%s.%llu.end", agent_id, (unsigned long long)trigger);
  return cl_send_record(c, &rec, "turn", key);
}

/* A failure reported here, about an agent answered here (llm-error) or an MCP server of a host
 * (mcp-error), goes to the stream so that every viewer shows why an agent did not answer; before the
 * turn's end, so a viewer waiting for that end has seen it. Events of other processes are given to the
 * bus directly (cl_show_event), not through world_emit: they do not come back here. */
static void cl_report(void *ctx, const world_event *ev) {
  cluster *c = ctx;
  /* every event passes here, chunks included: only the two failures go on */
  if (!c->ready || !c->chat[0] || (ev->kind != EV_LLM_ERROR && ev->kind != EV_MCP_ERROR)) return;
  wire_record rec = {.type = WIRE_EVENT, .kind = AG_KIND_AGENT, .ev = (int)ev->kind};
  if (ev->kind == EV_LLM_ERROR && cl_is_local(c, ev->u.llm_error.agent)) {
    const ev_llm_error *x = &ev->u.llm_error;
    rec.text = (char *)x->error, rec.has_info = x->has_info, rec.http_status = x->http_status;
    rec.attempts = x->attempts, rec.error_type = (char *)(x->error_type ? x->error_type : "");
    snprintf(rec.agent, sizeof rec.agent, "%s", x->agent);
  } else if (ev->kind == EV_MCP_ERROR && c->o.hosting) {
    rec.sender = (char *)ev->u.mcp.server, rec.text = (char *)ev->u.mcp.error;
  } else {
    return;
  }
  snprintf(rec.chat, sizeof rec.chat, "%s", c->chat);
  snprintf(rec.origin, sizeof rec.origin, "%s", control_host_id(c->ctl));
  char key[WIRE_ID_MAX + 32];
  snprintf(key, sizeof key, "e%s.%llu", rec.origin, (unsigned long long)++c->n_events);
  (void)cl_send_record(c, &rec, "evt", key); /* a report only: one that cannot be sent is not worth failing for */
}

/* ---- delivering ---- */

/* Another process's failure, shown here as it is there (not replayed while catching up: what a viewer
 * joining late sees starts with the messages it has not seen). */
static void cl_show_event(cluster *c, const wire_record *rec) {
  if (!c->ready || strcmp(rec->chat, c->chat) || !strcmp(rec->origin, control_host_id(c->ctl))) return;
  world_event ev = {(ev_kind)rec->ev, .u.mcp = {rec->sender, rec->text}};
  if (rec->ev == EV_LLM_ERROR)
    ev.u.llm_error = (ev_llm_error){rec->agent, rec->text, rec->has_info, rec->http_status, rec->attempts,
                                    rec->error_type ? rec->error_type : ""};
  bus_event *e = bus_event_new(&ev);
  if (!e) return;
  (void)bus_publish_event(world_bus(c->w), e); /* shown only: nothing to undo when it fails */
  bus_event_unref(e);
}

static void cl_ask_consumer(cluster *c) {
  if (c->asking) return;
  c->asking = 1;
  control_want_consumer(c->ctl, c->deliver, c->delivered + 1);
}

static int chat_is_old(const cluster *c, const char *chat) {
  for (size_t i = 0; i < c->n_old; i++)
    if (!strcmp(c->old[i], chat)) return 1;
  return 0;
}

/* A record of another chat: the chat before is left behind and the conversation starts over (a new
 * chat, §6) — the same decision in every process, since each sees the same order. */
static int cl_switch_chat(cluster *c, const char *chat) {
  if (chat_is_old(c, chat)) return 0;
  if (c->chat[0]) {
    char(*p)[WIRE_ID_MAX] = realloc(c->old, (c->n_old + 1) * sizeof *p);
    if (!p) return 0;
    c->old = p;
    snprintf(c->old[c->n_old++], WIRE_ID_MAX, "%s", c->chat);
  }
  snprintf(c->chat, sizeof c->chat, "%s", chat);
  c->count = 0;
  world_reset_conversation(c->w);
  /* Scripted replies start over with the chat, as in a fresh `agora run`. */
  for (size_t i = 0; i < world_agent_count(c->w); i++) agent_set_reply_counter(world_agent_at(c->w, i), 0);
  if (c->on_chat) c->on_chat(c->on_chat_ud, chat);
  return 1;
}

static void cl_record(cluster *c, const wire_record *rec, const char *id) {
  if (rec->type != WIRE_EVENT && strcmp(rec->chat, c->chat) && !cl_switch_chat(c, rec->chat)) return;
  flight *f = id ? flights_find(&c->fl, id) : NULL;
  if (rec->type == WIRE_EVENT) {
    cl_show_event(c, rec);
  } else if (rec->type == WIRE_TURN_END) {
    world_receive_turn_end(c->w, rec->agent, rec->trigger, (size_t)rec->counter);
  } else {
    world_wire_msg in = {rec->sender, rec->text, rec->kind, rec->ts_ms, rec->has_sim, rec->sim_ms, ++c->count};
    world_receive(c->w, &in);
  }
  if (f) flights_remove(&c->fl, f);
}

static void cl_ready(cluster *c) {
  c->ready = 1;
  for (size_t i = 0; i < c->n_held; i++)
    if (c->held[i].leased) world_resume_agent(c->w, c->held[i].id);
}

/* An idle heartbeat names the last stream seq the consumer sent: one we never got is a gap. */
static void cl_status(cluster *c, natsMsg *m) {
  const char *last = NULL;
  if (natsMsgHeader_Get(m, "Nats-Last-Stream", &last) == NATS_OK && last &&
      strtoull(last, NULL, 10) > c->delivered)
    cl_ask_consumer(c);
}

/* Items of the bus's own queue (what it holds beyond our flights). */
static size_t cl_bus_queued(const cluster *c) { return bus_pending(world_bus(c->w)) - flights_count(&c->fl); }

/* One delivery; 0 when it must wait until the bus has delivered everything before it (the bus delivers
 * messages on its own turn of the loop, after this batch): a record of another chat, so that the
 * conversation starts over between the two chats; and a turn's end, which ends the turn that the
 * message before it started (acting on it first found no such turn, and the turn then started waited
 * for an end already gone: `run --nats` hung under load, when the relay brought several records at once). */
static int cl_message(cluster *c, natsMsg *m) {
  c->heard_ms = ag_now_ms();
  jsMsgMetaData *meta = NULL;
  if (natsMsg_GetDataLength(m) == 0 || natsMsg_GetMetaData(&meta, m) != NATS_OK) {
    cl_status(c, m);
    return 1;
  }
  uint64_t seq = meta->Sequence.Stream;
  jsMsgMetaData_Destroy(meta);
  if (seq <= c->delivered) return 1; /* again, from a consumer made after a gap */
  if (seq > c->delivered + 1) {
    cl_ask_consumer(c);
    return 1;
  }
  wire_record rec;
  const char *id = NULL;
  natsMsgHeader_Get(m, "Nats-Msg-Id", &id);
  /* A record this version cannot read is skipped (and its seq counted as seen), never a crash. */
  if (wire_decode(natsMsg_GetData(m), (size_t)natsMsg_GetDataLength(m), &rec, NULL) == AG_OK) {
    if ((strcmp(rec.chat, c->chat) || rec.type == WIRE_TURN_END) && cl_bus_queued(c) > 0) {
      wire_record_free(&rec);
      return 0;
    }
    c->delivered = seq;
    c->record_ms = c->heard_ms;
    cl_record(c, &rec, id);
    wire_record_free(&rec);
  } else {
    c->delivered = seq;
  }
  flights_settle(&c->fl, c->delivered);
  if (!c->ready && c->delivered >= c->catch_up) cl_ready(c);
  return 1;
}

static void cl_pump(cluster *c) {
  natsMsg *m;
  while (ag_ring_len(&c->backlog) > 0) {
    if (!cl_message(c, *(natsMsg **)ag_ring_at(&c->backlog, 0))) return;
    ag_ring_pop(&c->backlog, &m);
    natsMsg_Destroy(m);
  }
}

/* The bus has drained: deliveries held for a chat switch go on. */
static void cl_idle(void *ud) { cl_pump(ud); }

static void cl_lease(cluster *c, const char *id, int owned) {
  held *h = held_find(c, id);
  if (!h || h->leased == owned) return;
  h->leased = owned;
  c->n_local += owned ? 1 : (size_t)-1;
  if (owned && c->ready) world_resume_agent(c->w, id);
}

static void cl_relay(void *ud, relay_item *it) {
  cluster *c = ud;
  switch (it->kind) {
  case RELAY_MSG:
    if (ag_ring_push(&c->backlog, &it->ptr)) natsMsg_Destroy(it->ptr); /* out of memory: a gap, asked again */
    cl_pump(c);
    break;
  case RELAY_ACK: flights_ack(&c->fl, it->str, it->a, it->flag); flights_settle(&c->fl, c->delivered); break;
  case RELAY_LEASE: cl_lease(c, it->str, it->flag); break;
  case RELAY_CONSUMER: c->asking = 0; c->heard_ms = ag_now_ms(); break;
  case RELAY_HOSTS: break;
  }
  free(it->str);
}

static void cl_drop(void *ud, relay_item *it) {
  (void)ud;
  if (it->kind == RELAY_MSG) natsMsg_Destroy(it->ptr);
  free(it->str);
}

/* libnats' threads: hand everything to the loop. Their closure is the relay, which outlives the
 * cluster when libnats' threads do not end in time (cluster_free). */
static void on_nats_msg(natsConnection *nc, natsSubscription *sub, natsMsg *m, void *closure) {
  (void)nc, (void)sub;
  relay_post(closure, &(relay_item){RELAY_MSG, m, NULL, 0, 0});
}

static void on_nats_ack(jsCtx *js, natsMsg *m, jsPubAck *pa, jsPubAckErr *pae, void *closure) {
  (void)js, (void)pae;
  const char *id = NULL;
  natsMsgHeader_Get(m, "Nats-Msg-Id", &id);
  char *s = id ? strdup(id) : NULL;
  if (s) relay_post(closure, &(relay_item){RELAY_ACK, NULL, s, pa ? pa->Sequence : 0, pa ? (pa->Duplicate ? 1 : 0) : -1});
  natsMsg_Destroy(m);
}

/* Every 250 ms: a consumer silent for three heartbeats is made again; publishes not acknowledged in
 * time are sent again (the de-duplication id keeps one copy). */
static void cl_tick(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  cluster *c = arg;
  int64_t now = ag_now_ms();
  /* Silent, or only heartbeats while the world waits for something: a record may have been lost on its
   * way (a heartbeat's last seq is the usual sign; this catches the rest). */
  int waiting = !world_is_quiet(c->w), stale = waiting && now - c->record_ms > 5000;
  if (now - c->heard_ms > 3000 || stale) {
    c->asking = 0; /* the request itself may have been lost with the connection */
    c->heard_ms = c->record_ms = now;
    cl_ask_consumer(c);
  }
  if (c->ready) flights_retry(&c->fl, c->js, now, 3000);
}

/* ---- set-up ---- */

/* The process's NATS library and the hand-over queues of freed clusters, kept until it closes. */
typedef struct cluster_lib {
  int open;
  relay **parked;
  size_t n_parked;
} cluster_lib;
static cluster_lib g_lib;

int cluster_lib_open(void) {
  if (g_lib.open) return AG_OK;
  if (nats_Open(-1) != NATS_OK) return AG_ERR_NOMEM;
  g_lib.open = 1;
  return AG_OK;
}

int cluster_lib_close(void) {
  if (!g_lib.open) return AG_OK;
  /* A reconnect in progress (a node just stopped) can take more than a few seconds on a loaded
   * machine, so wait up to 60 s; if even that is not enough, the queues are left to the exit. */
  int rc = nats_CloseAndWait(60000) == NATS_OK ? AG_OK : AG_ERR_STATE;
  for (size_t i = 0; !rc && i < g_lib.n_parked; i++) relay_free(g_lib.parked[i]);
  free(g_lib.parked);
  g_lib = (cluster_lib){0};
  return rc;
}

/* r waits for the library's close (libnats' threads may still post into it, closed). */
static void lib_park(relay *r) {
  relay **p = realloc(g_lib.parked, (g_lib.n_parked + 1) * sizeof *p);
  if (!p) return; /* left to the exit: freeing it now could crash a late post */
  g_lib.parked = p;
  p[g_lib.n_parked++] = r;
}

static int cl_names(cluster *c, ag_errmsg *em) {
  const char *id = world_id(c->w);
  if (!wire_id_ok(id)) return ag_fail(em, AG_ERR_INVALID, "world id '%s' cannot name a NATS stream", id);
  snprintf(c->world, sizeof c->world, "%s", id);
  snprintf(c->prefix, sizeof c->prefix, "agora.%s", id);
  snprintf(c->stream, sizeof c->stream, "AGORA_%s", id);
  char chat[STORE_ID_MAX];
  store_chat_id_new(chat);
  snprintf(c->nonce, sizeof c->nonce, "%s", chat);
  size_t n = world_agent_count(c->w);
  if (n && !(c->held = calloc(n, sizeof *c->held))) return AG_ERR_NOMEM;
  for (; c->n_held < n; c->n_held++) c->held[c->n_held].id = agent_id(world_agent_at(c->w, c->n_held));
  qsort(c->held, c->n_held, sizeof *c->held, held_cmp);
  return AG_OK;
}

/* The agents this process may own: --agents (ids or names), or all. */
static int cl_candidates(cluster *c, const char ***ids, size_t *n, ag_errmsg *em) {
  *n = 0;
  if (!(*ids = calloc(c->n_held ? c->n_held : 1, sizeof **ids))) return AG_ERR_NOMEM;
  if (!c->o.hosting) return AG_OK;
  if (!c->o.agents) {
    for (size_t i = 0; i < c->n_held; i++) (*ids)[(*n)++] = c->held[i].id;
    return AG_OK;
  }
  char *list = strdup(c->o.agents), *save = NULL;
  if (!list) return AG_ERR_NOMEM;
  int rc = AG_OK;
  for (char *tok = strtok_r(list, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
    agent *a = world_agent_find(c->w, tok);
    if (!a) rc = ag_fail(em, AG_ERR_INVALID, "--agents: no agent '%s' in this world", tok);
    else if (*n < c->n_held) (*ids)[(*n)++] = agent_id(a);
  }
  free(list);
  return rc;
}

static int cl_connect(cluster *c, ag_errmsg *em) {
  char name[256];
  snprintf(name, sizeof name, "agora %s", c->world);
  int rc = link_connect(&c->o, name, &c->nc, em);
  if (rc) return rc;
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.PublishAsync.AckHandler = on_nats_ack;
  jo.PublishAsync.AckHandlerClosure = c->r;
  jo.PublishAsync.MaxPending = 1 << 20;
  natsInbox *inbox = NULL;
  natsStatus s = natsConnection_JetStream(&c->js, c->nc, &jo);
  if (s == NATS_OK) s = natsInbox_Create(&inbox);
  if (s == NATS_OK) snprintf(c->deliver, sizeof c->deliver, "%s", (const char *)inbox);
  natsInbox_Destroy(inbox);
  if (s == NATS_OK) s = natsConnection_Subscribe(&c->sub, c->nc, c->deliver, on_nats_msg, c->r);
  if (s == NATS_OK) s = natsSubscription_SetPendingLimits(c->sub, -1, -1);
  char why[256];
  if (s != NATS_OK) return ag_fail(em, AG_ERR_IO, "NATS: %s", link_error(s, why, sizeof why));
  return AG_OK;
}

int cluster_open(world *w, const cluster_opts *o, cluster **out, ag_errmsg *em) {
  if (cluster_lib_open()) return ag_fail(em, AG_ERR_NOMEM, "cannot start the NATS client");
  cluster *c = calloc(1, sizeof *c);
  if (!c) return AG_ERR_NOMEM;
  c->w = w;
  c->base = world_base(w);
  c->o = *o;
  ag_ring_init(&c->backlog, sizeof(natsMsg *), 256);
  const char **ids = NULL;
  size_t n = 0;
  char subjects[WIRE_ID_MAX + 16];
  int rc = cl_names(c, em);
  if (!rc) rc = cl_candidates(c, &ids, &n, em);
  if (!rc) rc = relay_new(c->base, cl_relay, cl_drop, c, &c->r);
  snprintf(subjects, sizeof subjects, "%s.>", c->prefix);
  if (!rc) rc = control_open(o, c->world, c->stream, subjects, ids, n, c->r, &c->catch_up, &c->ctl, em);
  free(ids);
  if (!rc) rc = cl_connect(c, em);
  if (!rc && !(c->tick = event_new(c->base, -1, EV_PERSIST, cl_tick, c))) rc = AG_ERR_NOMEM;
  struct timeval quarter = {0, 250000};
  if (!rc) rc = event_add(c->tick, &quarter) ? AG_ERR_NOMEM : AG_OK;
  if (rc) {
    cluster_free(c); /* rc says why the open failed */
    return rc;
  }
  c->ready = c->catch_up == 0;
  c->heard_ms = c->record_ms = ag_now_ms();
  cl_ask_consumer(c);
  bus_set_transport(world_bus(w), &(bus_transport){c, cl_send, cl_in_flight});
  world_set_cluster(w, &(world_cluster){c, cl_is_local, cl_turn_end, cl_report});
  if ((rc = bus_on_idle(world_bus(w), BUS_IDLE_CLUSTER, cl_idle, c)) || (rc = control_start(c->ctl, em))) {
    cluster_free(c); /* rc says why the open failed */
    return rc;
  }
  *out = c;
  return AG_OK;
}

static void cl_timeout(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  *(int *)arg = 1;
}

int cluster_wait_ready(cluster *c, long timeout_ms, ag_errmsg *em) {
  int late = 0;
  struct event *t = evtimer_new(c->base, cl_timeout, &late);
  if (!t) return AG_ERR_NOMEM;
  struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  evtimer_add(t, &tv);
  while (!c->ready && !late) event_base_loop(c->base, EVLOOP_ONCE);
  event_free(t);
  if (!c->ready)
    return ag_fail(em, AG_ERR_IO, "NATS: the stream %s was not delivered within %ld ms (seq %llu of %llu)", c->stream,
                   timeout_ms, (unsigned long long)c->delivered, (unsigned long long)c->catch_up);
  return AG_OK;
}

int cluster_use_chat(cluster *c, const char *id) {
  char fresh[STORE_ID_MAX];
  if (!id) store_chat_id_new(fresh), id = fresh;
  if (!wire_id_ok(id)) return AG_ERR_INVALID;
  if (!strcmp(id, c->chat)) return AG_OK;
  return cl_switch_chat(c, id) ? AG_OK : AG_ERR_INVALID;
}

void cluster_on_chat(cluster *c, void (*fn)(void *ud, const char *chat), void *ud) {
  c->on_chat = fn;
  c->on_chat_ud = ud;
}

const char *cluster_chat(const cluster *c) { return c->chat[0] ? c->chat : NULL; }
size_t cluster_local_count(const cluster *c) { return c->ready ? c->n_local : 0; }

void cluster_free(cluster *c) {
  if (!c) return;
  if (c->w) {
    bus_set_transport(world_bus(c->w), NULL);
    bus_off_idle(world_bus(c->w), cl_idle, c);
    world_set_cluster(c->w, NULL);
  }
  if (c->tick) event_free(c->tick);
  control_free(c->ctl); /* gives the leases back */
  /* Every message libnats made must be destroyed while its library runs: destroying one after
   * nats_CloseAndWait crashes, and one destroyed while it closes is never freed (its collector thread
   * has already gone). So: the relay is closed first, and what it holds and what libnats' threads still
   * post are dropped at once; the subscription is drained, which hands every delivery it holds to the
   * closed relay, and the acknowledgements still due are awaited (a few seconds at most). A connection
   * that is away brings nothing more, and waiting on it would only delay the exit: it is not drained. */
  relay_close(c->r);
  natsMsg *m;
  while (ag_ring_pop(&c->backlog, &m)) natsMsg_Destroy(m);
  if (c->nc && natsConnection_Status(c->nc) == NATS_CONN_STATUS_CONNECTED) {
    if (c->sub && natsSubscription_Drain(c->sub) == NATS_OK) natsSubscription_WaitForDrainCompletion(c->sub, 5000);
    if (c->js) js_PublishAsyncComplete(c->js, &(jsPubOptions){.MaxWait = 2000});
  }
  /* The connection is closed before its subscription is destroyed: closing joins libnats' reading
   * thread, and libnats 3.4 can crash (abort in a mutex lock) reading a message for a subscription
   * destroyed meanwhile (nats.c issue 637, fixed in 3.6). The consumer's heartbeats keep coming until
   * then, so that race was open at every stop. */
  if (c->nc) natsConnection_Close(c->nc);
  natsSubscription_Destroy(c->sub);
  jsCtx_Destroy(c->js);
  natsConnection_Destroy(c->nc);
  /* Only once libnats' threads are gone may the relay be freed: at the library's close. */
  lib_park(c->r);
  ag_ring_free(&c->backlog);
  flights_free(&c->fl);
  free(c->old);
  free(c->held);
  free(c);
}
