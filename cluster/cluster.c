/* A world on NATS JetStream, the loop's side (see cluster.h). The world's bus hands every published
 * message to cluster_send.c; it goes to the stream with a de-duplication id and waits, "in flight",
 * until the stream brings it back. Deliveries arrive on libnats' threads and reach the loop through the
 * relay; here they are checked (order.c: seq + 1, or a gap the stream itself has; a gap on the way makes
 * a new consumer from the missing seq; their subject and signature: who may have sent them), counted
 * into the chat's seqs, and given to the world. Nothing here blocks the loop: JetStream management and
 * leases run on the control thread (control.c). */
#include "cluster/cluster_int.h"

#include "cluster/notes.h"
#include "common/clock.h"
#include "common/jsonnum.h"
#include "world/events.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- delivering ---- */

/* Another process's failure, shown here as it is there (not replayed while catching up: what a viewer
 * joining late sees starts with the messages it has not seen). */
static void cl_show_event(cluster *c, const wire_record *rec) {
  if (!c->ready || strcmp(rec->chat, c->chat) || !strcmp(rec->origin, control_host_id(c->ctl))) return;
  world_event ev = {(ev_kind)rec->ev, .u.mcp = {rec->sender, rec->text}};
  if (rec->ev == EV_LLM_ERROR)
    ev.u.llm_error = (ev_llm_error){rec->agent, rec->text, rec->has_info, rec->http_status, rec->attempts,
                                    rec->error_type ? rec->error_type : ""};
  (void)world_receive_event(c->w, &ev); /* shown only: nothing to undo when it fails */
}

static void cl_ask_consumer(cluster *c) {
  if (c->asking) return;
  c->asking = 1;
  control_want_consumer(c->ctl, c->deliver, c->ord.delivered + 1);
}

/* A record of another chat: the chat before is left behind and the conversation starts over (a new
 * chat, §6) — the same decision in every process, since each sees the same order. */
static int cl_switch_chat(cluster *c, const char *chat) {
  if (cluster__idset_has(&c->old, chat) || (c->chat[0] && !cluster__idset_add(&c->old, c->chat))) return 0;
  snprintf(c->chat, sizeof c->chat, "%s", chat);
  c->count = 0;
  world_reset_conversation(c->w);
  /* Scripted replies start over with the chat, as in a fresh `agora run`. */
  for (size_t i = 0; i < world_agent_count(c->w); i++) agent_set_reply_counter(world_agent_at(c->w, i), 0);
  if (c->on_chat) c->on_chat(c->on_chat_ud, chat);
  return 1;
}

/* A chat record, in the stream's order, while catching up too: a title given by hand, or a tombstone
 * (its chat is deleted from every copy that has it, and no later record of it counts). A tombstone of
 * the stream's current chat is ignored, the same way in every process (each refuses to delete that chat
 * before recording it; this stops a peer that did not). */
static void cl_chat_record(cluster *c, const wire_record *rec) {
  if (cluster__idset_has(&c->dead, rec->chat)) return;
  if (!rec->deleted) {
    if (c->on_record) c->on_record(c->on_record_ud, rec->chat, rec->text, rec->ts_ms);
    return;
  }
  if (!strcmp(rec->chat, c->chat) || !cluster__idset_add(&c->dead, rec->chat) ||
      !cluster__idset_add(&c->old, rec->chat))
    return;
  if (c->on_record) c->on_record(c->on_record_ud, rec->chat, NULL, 0);
}

/* Another process's memory step of an agent (cl_report_memory), given to the agent here and stored in
 * this copy's thread where it stood there; while catching up too, so that a host joining late, or taking
 * an agent over, has what the agent noted, reflected and summarised. Its own come back: already done. */
static void cl_memory(cluster *c, const wire_record *rec) {
  if (strcmp(rec->chat, c->chat) || !strcmp(rec->origin, control_host_id(c->ctl))) return;
  char *json = NULL;
  world_event ev = {EV_SUMMARY, .u.summary = {.agent = rec->agent, .summary = rec->text, .upto = rec->upto,
                                              .after_seq = rec->after_seq}};
  if (rec->mem == WIRE_MEM_REFLECTION)
    ev = (world_event){EV_REFLECTION, .u.reflection = {.agent = rec->agent, .insights = rec->text,
                                                       .at_ms = rec->ts_ms, .after_seq = rec->after_seq}};
  if (rec->mem == WIRE_MEM_RATED)
    ev = (world_event){EV_MEMORY_RATED, .u.rated = {.agent = rec->agent, .ratings = rec->text,
                                                    .after_seq = rec->after_seq}};
  if (rec->mem == WIRE_MEM_NOTE) { /* the remember tool's result, as the origin stored it */
    cJSON *r = cJSON_CreateObject();
    if (r && cJSON_AddStringToObject(r, "remembered", rec->text) &&
        cJSON_AddNumberToObject(r, "importance", rec->importance) && ag_json_add_int(r, "at_ms", rec->ts_ms))
      json = cJSON_PrintUnformatted(r);
    cJSON_Delete(r);
    ev = (world_event){EV_TOOL_RESULT, .u.tool = {.agent = rec->agent, .tool = "remember", .call_id = "",
                                                  .json = json, .at_ms = rec->ts_ms, .after_seq = rec->after_seq}};
  }
  int rc = rec->mem == WIRE_MEM_NOTE && !json ? AG_ERR_NOMEM : world_receive_memory(c->w, &ev);
  if (rc)
    cluster__notice(c, "NATS: the %s of %s was not taken: %s", ev_kind_name(ev.kind), rec->agent, ag_strerror(rc));
  free(json);
}

static void cl_record(cluster *c, const wire_record *rec, const char *id) {
  int other = rec->type != WIRE_EVENT && rec->type != WIRE_CHAT && rec->type != WIRE_MEMORY &&
              strcmp(rec->chat, c->chat);
  if (other && !cl_switch_chat(c, rec->chat)) return;
  flight *f = id ? flights_find(&c->fl, id) : NULL;
  if (rec->type == WIRE_CHAT) {
    cl_chat_record(c, rec);
  } else if (rec->type == WIRE_EVENT) {
    cl_show_event(c, rec);
  } else if (rec->type == WIRE_MEMORY) {
    cl_memory(c, rec);
  } else if (rec->type == WIRE_TURN_END) {
    world_receive_turn_end(c->w, rec->agent, rec->trigger, (size_t)rec->counter);
  } else {
    world_wire_msg in = {rec->sender, rec->text, rec->kind, rec->ts_ms, rec->has_sim, rec->sim_ms, ++c->count};
    /* On a virtual clock the publisher's simulated time comes with each message, and this process's
     * clock follows it, so that an agent answering here stamps its reply with the time of what it
     * answers, not with the clock's start (a host has no clock of its own). Forward only, but for a
     * chat's first message: a late record must not take a publisher's clock back mid-chat. */
    if (rec->has_sim && world_is_virtual(c->w) && (in.seq == 1 || rec->sim_ms > world_now(c->w)))
      world_set_sim_time(c->w, rec->sim_ms);
    world_receive(c->w, &in);
  }
  if (f) flights_remove(&c->fl, f);
}

static void cl_ready(cluster *c) {
  c->ready = 1;
  c->held_changed = 1;
  for (size_t i = 0; i < c->n_held; i++)
    if (c->held[i].leased) world_resume_agent(c->w, c->held[i].id);
}

/* Seqs from..to are not in the stream: said once, when they are passed. */
static void cl_gap_notice(cluster *c, uint64_t from, uint64_t to) {
  char seqs[64];
  if (to > from) snprintf(seqs, sizeof seqs, "seqs %llu..%llu", (unsigned long long)from, (unsigned long long)to);
  else snprintf(seqs, sizeof seqs, "seq %llu", (unsigned long long)from);
  cluster__notice(c, "NATS: the stream %s holds no record at %s (deleted or purged); going on", c->stream, seqs);
}

/* An idle heartbeat names the last stream seq and consumer seq its consumer reached. A stream seq we
 * never got is a record lost on the way (or passed: order.c), and a new consumer is made from the first
 * one; unless the heartbeat is that new consumer's, with nothing sent yet (consumer seq 0): then it went
 * past seqs the stream no longer holds (its last records deleted: the stream keeps its last seq), and
 * they are skipped. */
static void cl_status(cluster *c, natsMsg *m) {
  const char *last = NULL, *cons = NULL;
  if (natsMsgHeader_Get(m, "Nats-Last-Stream", &last) != NATS_OK || !last) return;
  uint64_t seq = strtoull(last, NULL, 10);
  if (seq <= c->ord.delivered) return;
  int fresh = !c->asking && c->ord.made[0] && c->ord.made_from == c->ord.delivered + 1 &&
              natsMsgHeader_Get(m, "Nats-Last-Consumer", &cons) == NATS_OK && cons && !strcmp(cons, "0");
  if (!fresh) {
    cl_ask_consumer(c);
    return;
  }
  cl_gap_notice(c, c->ord.delivered + 1, seq);
  c->ord.delivered = seq;
  flights_settle(&c->fl, c->ord.delivered);
  if (!c->ready && c->ord.delivered >= c->catch_up) cl_ready(c);
}

/* Items of the bus's own queue (what it holds beyond our flights). */
static size_t cl_bus_queued(const cluster *c) { return bus_pending(world_bus(c->w)) - flights_count(&c->fl); }

/* One delivery; 0 when it must wait until the bus has delivered everything before it (the bus delivers
 * messages on its own turn of the loop, after this batch): a record of another chat, so that the
 * conversation starts over between the two chats; and a turn's end, which ends the turn that the
 * message before it started (acting on it first found no such turn, and the turn then started waited
 * for an end already gone: `run --nats` hung under load, when the relay brought several records at once). */
/* Decodes m's record and checks who may have sent it: its subject names its chat and its type (a
 * record naming another chat switched every process to it), and with a signing key its signature is
 * the key's. 1 when it may take effect (release rec); 0, with a notice, when it is refused. */
static int cl_admit(cluster *c, natsMsg *m, uint64_t seq, wire_record *rec) {
  ag_errmsg em = {""};
  const char *subject = natsMsg_GetSubject(m), *data = natsMsg_GetData(m), *id = NULL, *sig = NULL;
  size_t len = (size_t)natsMsg_GetDataLength(m);
  natsMsgHeader_Get(m, "Nats-Msg-Id", &id);
  natsMsgHeader_Get(m, SIGN_HEADER, &sig);
  int rc = wire_decode(data, len, rec, &em);
  if (rc) {
    memset(rec, 0, sizeof *rec);
  } else if (!(rc = wire_subject_check(rec, c->prefix, subject, &em)) && c->key &&
             !sign_check(c->key, subject, id ? id : "", data, len, sig)) {
    rc = ag_fail(&em, AG_ERR_INVALID, "%s", sig ? "its signature is not the world's key's" : "it is not signed");
  }
  if (!rc) return 1;
  wire_record_free(rec);
  /* A flood of forgeries must not flood the output: the first ten, then one in a thousand. */
  if (++c->n_refused <= 10 || c->n_refused % 1000 == 0)
    cluster__notice(c, "NATS: record seq %llu on %s refused (%llu so far): %s", (unsigned long long)seq,
                    subject ? subject : "?", (unsigned long long)c->n_refused, em.text);
  return 0;
}

/* One delivery; 0 when it must wait: until the bus has delivered everything before it (the bus delivers
 * messages on its own turn of the loop, after this batch) for a record of another chat, so that the
 * conversation starts over between the two chats, and for a turn's end, which ends the turn that the
 * message before it started (acting on it first found no such turn, and the turn then started waited
 * for an end already gone: `run --nats` hung under load, when the relay brought several records at
 * once); or until the consumer that sent it is known (order.h). */
static int cl_message(cluster *c, natsMsg *m) {
  c->heard_ms = ag_now_ms();
  jsMsgMetaData *meta = NULL;
  if (natsMsg_GetDataLength(m) == 0 || natsMsg_GetMetaData(&meta, m) != NATS_OK) {
    cl_status(c, m);
    return 1;
  }
  uint64_t seq = meta->Sequence.Stream, cseq = meta->Sequence.Consumer, from = c->ord.delivered + 1;
  order_verdict v = order_judge(&c->ord, seq, meta->Consumer, cseq, c->asking);
  wire_record rec;
  int admitted = 0, go = v == ORDER_NEXT || v == ORDER_GAP;
  if (v == ORDER_LOST) cl_ask_consumer(c);
  if (go && (admitted = cl_admit(c, m, seq, &rec)) &&
      (strcmp(rec.chat, c->chat) || rec.type == WIRE_TURN_END || rec.type == WIRE_MEMORY) && cl_bus_queued(c) > 0) {
    wire_record_free(&rec);
    go = admitted = 0;
    v = ORDER_WAIT;
  }
  if (go) {
    if (v == ORDER_GAP) cl_gap_notice(c, from, seq - 1);
    order_take(&c->ord, seq, meta->Consumer, cseq);
    if (admitted) {
      const char *id = NULL;
      natsMsgHeader_Get(m, "Nats-Msg-Id", &id);
      c->record_ms = c->progress_ms = c->heard_ms;
      cl_record(c, &rec, id);
      wire_record_free(&rec);
    }
    flights_settle(&c->fl, c->ord.delivered);
    if (!c->ready && c->ord.delivered >= c->catch_up) cl_ready(c);
  }
  jsMsgMetaData_Destroy(meta);
  return v != ORDER_WAIT;
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
  held *h = cluster__held_find(c, id);
  if (!h || h->leased == owned) return;
  h->leased = owned;
  c->n_local += owned ? 1 : (size_t)-1;
  c->held_changed = 1;
  if (owned && c->ready) world_resume_agent(c->w, id);
}

/* The agents some host holds (holders: "id\n" each): the ones this publisher waits for that have none
 * are named, once per change, so that a run with no live host for them does not wait in silence. */
static void cl_holders(cluster *c, const char *holders, int known) {
  char *line = known && !world_is_quiet(c->w) ? notes_hostless(c->w, holders ? holders : "") : NULL;
  if (line && (!c->waiting_note || strcmp(line, c->waiting_note))) cluster__notice(c, "%s", line);
  free(c->waiting_note);
  c->waiting_note = line;
}

static void cl_relay(void *ud, relay_item *it) {
  cluster *c = ud;
  switch (it->kind) {
  case RELAY_MSG:
    if (ag_ring_push(&c->backlog, &it->ptr)) natsMsg_Destroy(it->ptr); /* out of memory: a gap, asked again */
    cl_pump(c);
    break;
  case RELAY_ACK: flights_ack(&c->fl, it->str, it->a, it->flag); flights_settle(&c->fl, c->ord.delivered); break;
  case RELAY_LEASE: cl_lease(c, it->str, it->flag); break;
  case RELAY_CONSUMER:
    c->asking = 0;
    c->heard_ms = ag_now_ms();
    if (it->flag == 0) order_made(&c->ord, it->str, it->a);
    cl_pump(c); /* a delivery may have waited to know its consumer */
    break;
  case RELAY_HOSTS: break;
  case RELAY_HOLDERS: cl_holders(c, it->str, it->flag == 0); break;
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
  /* A publisher waiting 3 s for nothing asks who holds its agents (again every 3 s while it waits). */
  if (!c->o.hosting && c->ready && waiting && now - c->progress_ms >= 3000 && now - c->holders_ms >= 3000) {
    c->holders_ms = now;
    control_want_holders(c->ctl);
  }
  if (c->o.hosting && c->ready && c->held_changed) {
    char *line = notes_holding(c->w, cluster__is_local, c);
    if (line) cluster__notice(c, "%s", line);
    free(line);
    c->held_changed = 0;
  }
}

/* ---- set-up ---- */

/* The process's NATS library and the hand-over queues of freed clusters, kept until it closes. Worlds
 * on loops of different threads (libagora's agora_options.loop) open and free clusters at once: mu
 * guards the record. */
typedef struct cluster_lib {
  pthread_mutex_t mu;
  int open;
  relay **parked;
  size_t n_parked;
} cluster_lib;
static cluster_lib g_lib = {.mu = PTHREAD_MUTEX_INITIALIZER};

int cluster_lib_open(void) {
  pthread_mutex_lock(&g_lib.mu);
  if (!g_lib.open) g_lib.open = nats_Open(-1) == NATS_OK;
  int rc = g_lib.open ? AG_OK : AG_ERR_NOMEM;
  pthread_mutex_unlock(&g_lib.mu);
  return rc;
}

int cluster_lib_close(void) {
  int rc = AG_OK;
  pthread_mutex_lock(&g_lib.mu);
  if (!g_lib.open) goto out;
  /* A reconnect in progress (a node just stopped) can take more than a few seconds on a loaded
   * machine, so wait up to 60 s; if even that is not enough, the queues are left to the exit. */
  rc = nats_CloseAndWait(60000) == NATS_OK ? AG_OK : AG_ERR_STATE;
  for (size_t i = 0; !rc && i < g_lib.n_parked; i++) relay_free(g_lib.parked[i]);
  free(g_lib.parked);
  g_lib.parked = NULL;
  g_lib.n_parked = 0;
  g_lib.open = 0;
out:
  pthread_mutex_unlock(&g_lib.mu);
  return rc;
}

/* r waits for the library's close (libnats' threads may still post into it, closed). */
static void lib_park(relay *r) {
  pthread_mutex_lock(&g_lib.mu);
  relay **p = realloc(g_lib.parked, (g_lib.n_parked + 1) * sizeof *p);
  if (p) { /* else left to the exit: freeing it now could crash a late post */
    g_lib.parked = p;
    p[g_lib.n_parked++] = r;
  }
  pthread_mutex_unlock(&g_lib.mu);
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
  qsort(c->held, c->n_held, sizeof *c->held, cluster__held_cmp);
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

/* control_open's lines, as the cluster's own notices. */
static void cl_notice(void *ud, const char *line) { cluster__notice(ud, "%s", line); }

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
  if (!rc) rc = sign_key_from_env(&c->key, em);
  if (!rc) rc = cl_candidates(c, &ids, &n, em);
  if (!rc) rc = relay_new(c->base, cl_relay, cl_drop, c, &c->r);
  snprintf(subjects, sizeof subjects, "%s.>", c->prefix);
  if (!rc)
    rc = control_open(o, c->world, c->stream, subjects, ids, n, c->r, &c->catch_up,
                      (control_notice){.fn = cl_notice, .ud = c}, &c->ctl, em);
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
  c->heard_ms = c->record_ms = c->progress_ms = ag_now_ms();
  cl_ask_consumer(c);
  bus_set_transport(world_bus(w), &(bus_transport){c, cluster__send, cluster__in_flight});
  world_set_cluster(w, &(world_cluster){c, cluster__is_local, cluster__turn_end, cluster__report});
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
  /* -1 is libevent refusing a nested run of a loop that runs already (one that keeps no cached time,
   * which rt_open's check cannot see): the wait ends rather than spin, its timer never coming. */
  int refused = 0;
  while (!c->ready && !late && !refused) refused = event_base_loop(c->base, EVLOOP_ONCE) < 0;
  event_free(t);
  if (!c->ready && refused)
    return ag_fail(em, AG_ERR_STATE, "NATS: the world's loop is running: the stream cannot be waited for");
  if (!c->ready)
    return ag_fail(em, AG_ERR_IO, "NATS: the stream %s was not delivered within %ld ms (seq %llu of %llu)", c->stream,
                   timeout_ms, (unsigned long long)c->ord.delivered, (unsigned long long)c->catch_up);
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

void cluster_on_record(cluster *c, void (*fn)(void *ud, const char *chat, const char *title, int64_t created_ms),
                       void *ud) {
  c->on_record = fn;
  c->on_record_ud = ud;
}

void cluster_on_notice(cluster *c, void (*fn)(void *ud, const char *line), void *ud) {
  c->on_notice = fn;
  c->on_notice_ud = ud;
}

const char *cluster_chat(const cluster *c) { return c->chat[0] ? c->chat : NULL; }
size_t cluster_local_count(const cluster *c) { return c->ready ? c->n_local : 0; }

size_t cluster_pending(cluster *c) { return relay_pending(c->r); }

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
  free(c->old.v);
  free(c->dead.v);
  free(c->waiting_note);
  sign_key_free(c->key);
  free(c->held);
  free(c);
}

