/* The chat session manager (see session.h). Saving is continuous: each message delivered on the bus
 * is written, with everything the agents changed while deciding about it, in one write transaction.
 * Transaction callbacks only compute and write; what they decide is applied to memory after commit,
 * because LMDB may run them twice (map growth). */
#include "chat/session.h"
#include "common/clock.h"

#include "chat/title.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What the store knows of one agent in the current chat, to write only what changed. */
typedef struct session_track {
  agent *a;
  size_t saved_mem;   /* memory entries already stored */
  turn_state saved_turn;
  size_t saved_counter;
  int saved_state;    /* a state record exists */
  uint64_t saved_ctx; /* context version stored */
  /* Pending values computed in a transaction, applied after commit. */
  size_t pend_mem;
  int pend_state;
} session_track;

struct chat_session {
  store *st;
  world *w;
  unsigned sub;
  int has_current;
  char current[STORE_ID_MAX];
  char *title;
  int64_t created_at;
  uint64_t count;
  session_track *tracks;
  size_t n_tracks;
  size_t failures;
  /* Messages delivered since the last commit (references). They are committed together when the bus
   * has drained — group commit: one transaction, one fsync, for all the replies that arrived at once. */
  ag_msg **pending;
  size_t n_pending, cap_pending;
  /* Tool steps delivered since the last commit, as thread event JSON (owned), saved with them. */
  char **pending_ev;
  size_t n_pending_ev, cap_pending_ev;
  uint64_t last_delivered; /* seq of the last message delivered, to anchor thread events */
  /* The agents hold the current chat's state (it was restored or started here). Until then their
   * in-memory state is not the chat's, and must not be written over it. */
  int live;
};


static int set_title(chat_session *cs, const char *title) {
  char *t = strdup(title);
  if (!t) return AG_ERR_NOMEM;
  free(cs->title);
  cs->title = t;
  return AG_OK;
}

/* Keeps tracks[] parallel to the world's agents; agents added or removed since are re-matched. */
static int sync_tracks(chat_session *cs) {
  size_t n = world_agent_count(cs->w);
  int same = n == cs->n_tracks;
  for (size_t i = 0; same && i < n; i++) same = cs->tracks[i].a == world_agent_at(cs->w, i);
  if (same) return AG_OK;
  session_track *t = calloc(n ? n : 1, sizeof *t);
  if (!t) return AG_ERR_NOMEM;
  for (size_t i = 0; i < n; i++) {
    t[i].a = world_agent_at(cs->w, i);
    for (size_t j = 0; j < cs->n_tracks; j++)
      if (cs->tracks[j].a == t[i].a) t[i] = cs->tracks[j];
  }
  free(cs->tracks);
  cs->tracks = t;
  cs->n_tracks = n;
  return AG_OK;
}

/* Marks every agent's current memory and state as what the store holds (after a restore or reset). */
static void tracks_mark_saved(chat_session *cs, int saved_state) {
  for (size_t i = 0; i < cs->n_tracks; i++) {
    session_track *t = &cs->tracks[i];
    t->saved_mem = agent_memory_total(t->a);
    t->saved_turn = agent_turn_state(t->a);
    t->saved_counter = agent_reply_counter(t->a);
    t->saved_state = saved_state;
    t->saved_ctx = agent_context(t->a)->version;
  }
}

static void emit(chat_session *cs, const char *type, cJSON *f) { world_emit(cs->w, type, f); }

/* ---- saving ---- */

typedef struct save_ctx {
  chat_session *cs;
  uint64_t upto;       /* memory entries up to this seq are stored */
  char *new_title;     /* set when one of the messages titles the chat */
  int64_t now;
} save_ctx;

static int save_agents(store_txn *t, save_ctx *sc) {
  chat_session *cs = sc->cs;
  for (size_t i = 0; i < cs->n_tracks; i++) {
    session_track *tr = &cs->tracks[i];
    size_t n;
    ag_msg *const *mem = agent_memory(tr->a, &n);
    size_t base = agent_memory_total(tr->a) - n; /* absolute index of mem[0] */
    size_t k = tr->saved_mem > base ? tr->saved_mem : base;
    int rc;
    /* Replies join their author's memory when published, before they are stored: only entries whose
     * message is stored by now are written; the rest go with their own message. */
    for (; k < base + n && mem[k - base]->seq <= sc->upto; k++)
      if ((rc = store_memory_append(t, cs->current, agent_id(tr->a), mem[k - base]->seq))) return rc;
    tr->pend_mem = k;
    turn_state ts = agent_turn_state(tr->a);
    size_t counter = agent_reply_counter(tr->a);
    const context_state *cx = agent_context(tr->a);
    if (cx->version != tr->saved_ctx) {
      char *data = cJSON_PrintUnformatted(cx->data);
      if (!data) return AG_ERR_NOMEM;
      store_context c = {cx->version, cx->updated_at_ms, data, NULL};
      rc = store_context_put(t, cs->current, agent_id(tr->a), &c);
      free(data);
      if (rc) return rc;
    }
    tr->pend_state = 0;
    if (!tr->saved_state || ts.count != tr->saved_turn.count || ts.notice_sent != tr->saved_turn.notice_sent ||
        counter != tr->saved_counter) {
      store_agent_state st = {ts.count, (uint8_t)ts.notice_sent, counter};
      if ((rc = store_agent_state_put(t, cs->current, agent_id(tr->a), &st))) return rc;
      tr->pend_state = 1;
    }
  }
  return AG_OK;
}

static int save_txn(store_txn *t, void *arg) {
  save_ctx *sc = arg;
  chat_session *cs = sc->cs;
  int rc;
  free(sc->new_title);
  sc->new_title = NULL;
  uint64_t count = cs->count;
  for (size_t i = 0; i < cs->n_pending; i++) {
    const ag_msg *m = cs->pending[i];
    store_message sm = {m->seq, m->ts_ms, (uint8_t)m->kind, m->sender, m->text, 0, NULL};
    if ((rc = store_message_put(t, cs->current, &sm))) return rc;
    if (m->seq > count) count = m->seq;
    if (!sc->new_title && m->kind == AG_KIND_HUMAN && cs->title && strcmp(cs->title, CHAT_TITLE_DEFAULT) == 0) {
      if ((rc = chat_title_make(m->text, &sc->new_title))) return rc;
    }
  }
  for (size_t i = 0; i < cs->n_pending_ev; i++)
    if ((rc = store_thread_append(t, cs->current, cs->pending_ev[i]))) return rc;
  if ((rc = save_agents(t, sc))) return rc;
  if (!cs->n_pending) return AG_OK; /* a flush of memories and states does not make the chat newer */
  store_chat c = {cs->current, world_id(cs->w), sc->new_title ? sc->new_title : cs->title, count,
                  cs->created_at, sc->now, NULL};
  return store_chat_put(t, &c);
}

static void apply_saved(chat_session *cs) {
  for (size_t i = 0; i < cs->n_tracks; i++) {
    session_track *tr = &cs->tracks[i];
    tr->saved_mem = tr->pend_mem;
    tr->saved_ctx = agent_context(tr->a)->version;
    if (tr->pend_state) {
      tr->saved_turn = agent_turn_state(tr->a);
      tr->saved_counter = agent_reply_counter(tr->a);
      tr->saved_state = 1;
    }
  }
}

static void drop_pending(chat_session *cs) {
  for (size_t i = 0; i < cs->n_pending; i++) ag_msg_unref(cs->pending[i]);
  cs->n_pending = 0;
  for (size_t i = 0; i < cs->n_pending_ev; i++) free(cs->pending_ev[i]);
  cs->n_pending_ev = 0;
}

/* Commits the pending messages with everything the agents changed, in one transaction. Without
 * pending messages it stores memories and turn states only. */
static int session_save(chat_session *cs, ag_errmsg *em) {
  int rc = sync_tracks(cs);
  if (rc) return rc;
  uint64_t upto = cs->count;
  for (size_t i = 0; i < cs->n_pending; i++)
    if (cs->pending[i]->seq > upto) upto = cs->pending[i]->seq;
  save_ctx sc = {cs, upto, NULL, ag_now_ms()};
  rc = store_write(cs->st, save_txn, &sc, em);
  size_t n = cs->n_pending;
  drop_pending(cs);
  if (rc) {
    free(sc.new_title);
    cs->failures += n ? n : 1;
    return rc;
  }
  apply_saved(cs);
  if (upto > cs->count) cs->count = upto;
  if (sc.new_title) {
    set_title(cs, sc.new_title);
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "title", sc.new_title);
    emit(cs, "title-updated", f);
    free(sc.new_title);
  }
  if (n) {
    cJSON *f = cJSON_CreateObject();
    cJSON_AddNumberToObject(f, "seq", (double)upto);
    cJSON_AddNumberToObject(f, "messages", (double)n);
    emit(cs, "state-saved", f);
  }
  return AG_OK;
}

/* A tool step joins the thread, anchored after the last message delivered before it. */
static void on_tool_event(chat_session *cs, const bus_event *e) {
  cJSON *j = cJSON_Duplicate(e->fields, 1);
  if (!j) return;
  cJSON_AddStringToObject(j, "type", e->type);
  cJSON_AddNumberToObject(j, "after_seq", (double)cs->last_delivered);
  char *text = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  if (!text) return;
  if (cs->n_pending_ev == cs->cap_pending_ev) {
    size_t ncap = cs->cap_pending_ev ? cs->cap_pending_ev * 2 : 8;
    char **p = realloc(cs->pending_ev, ncap * sizeof *p);
    if (!p) {
      free(text);
      cs->failures++;
      return;
    }
    cs->pending_ev = p;
    cs->cap_pending_ev = ncap;
  }
  cs->pending_ev[cs->n_pending_ev++] = text;
}

static void on_bus(void *ud, bus_topic topic, void *payload) {
  chat_session *cs = ud;
  if (!cs->has_current) return;
  if (topic == BUS_EVENT) {
    const bus_event *e = payload;
    /* The chat's event thread: tool steps and failed calls, beside the messages. */
    if (!strcmp(e->type, "tool-call") || !strcmp(e->type, "tool-result") || !strcmp(e->type, "llm-error"))
      on_tool_event(cs, e);
    return;
  }
  cs->last_delivered = ((ag_msg *)payload)->seq;
  if (cs->n_pending == cs->cap_pending) {
    size_t ncap = cs->cap_pending ? cs->cap_pending * 2 : 16;
    ag_msg **p = realloc(cs->pending, ncap * sizeof *p);
    if (!p) {
      cs->failures++;
      return;
    }
    cs->pending = p;
    cs->cap_pending = ncap;
  }
  cs->pending[cs->n_pending++] = ag_msg_ref(payload);
}

static void on_idle(void *ud) {
  chat_session *cs = ud;
  if ((!cs->n_pending && !cs->n_pending_ev) || !cs->has_current) return;
  ag_errmsg em = {""};
  int rc = session_save(cs, &em);
  if (rc) {
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "error", em.text[0] ? em.text : ag_strerror(rc));
    emit(cs, "storage-error", f);
  }
}

/* ---- opening ---- */

typedef struct open_ctx {
  chat_session *cs;
  char *settings;
} open_ctx;

static int open_txn(store_txn *t, void *arg) {
  open_ctx *oc = arg;
  chat_session *cs = oc->cs;
  store_world old;
  memset(&old, 0, sizeof old);
  int64_t now = ag_now_ms();
  int rc = store_world_get(t, world_id(cs->w), &old);
  if (rc && rc != AG_ERR_NOT_FOUND) return rc;
  cs->has_current = 0;
  if (rc == AG_OK && old.current_chat && old.current_chat[0]) {
    store_chat c;
    rc = store_chat_get(t, old.current_chat, &c);
    if (rc == AG_OK) {
      snprintf(cs->current, sizeof cs->current, "%s", c.id);
      cs->has_current = 1;
      cs->count = c.message_count;
      cs->created_at = c.created_at_ms;
      rc = set_title(cs, c.title);
      store_chat_free(&c);
      if (rc) goto done;
    } else if (rc != AG_ERR_NOT_FOUND) {
      goto done;
    }
  }
  if (!old.id || strcmp(old.settings_json, oc->settings) != 0 || strcmp(old.name, world_name(cs->w)) != 0) {
    store_world nw = {world_id(cs->w), world_name(cs->w), oc->settings, cs->has_current ? cs->current : "",
                      old.id ? old.created_at_ms : now, now, NULL};
    rc = store_world_put(t, &nw);
  } else {
    rc = AG_OK;
  }
done:
  store_world_free(&old);
  return rc;
}

static int save_world_txn(store_txn *t, void *arg) {
  open_ctx *oc = arg;
  chat_session *cs = oc->cs;
  store_world old;
  int rc = store_world_get(t, world_id(cs->w), &old);
  if (rc) return rc;
  store_world nw = {world_id(cs->w), world_name(cs->w), oc->settings, old.current_chat, old.created_at_ms, ag_now_ms(), NULL};
  rc = store_world_put(t, &nw);
  store_world_free(&old);
  return rc;
}

int chat_session_open(store *st, world *w, chat_session **out, ag_errmsg *em) {
  int rc = AG_OK;
  chat_session *cs = calloc(1, sizeof *cs);
  if (!cs) return AG_ERR_NOMEM;
  cs->st = st;
  cs->w = w;
  cJSON *settings = world_settings_json(w);
  open_ctx oc = {cs, settings ? cJSON_PrintUnformatted(settings) : NULL};
  cJSON_Delete(settings);
  if (!oc.settings) {
    rc = AG_ERR_NOMEM;
    goto fail;
  }
  if ((rc = store_write(st, open_txn, &oc, em))) goto fail;
  if ((rc = sync_tracks(cs))) goto fail;
  if ((rc = bus_subscribe(world_bus(w), BUS_MESSAGE | BUS_EVENT, BUS_PHASE_STORE, on_bus, cs, &cs->sub))) goto fail;
  if ((rc = bus_on_idle(world_bus(w), on_idle, cs))) {
    bus_unsubscribe(world_bus(w), cs->sub);
    goto fail;
  }
  free(oc.settings);
  *out = cs;
  return AG_OK;
fail:
  free(oc.settings);
  free(cs->title);
  free(cs);
  return rc;
}

int chat_session_save_world(chat_session *cs, ag_errmsg *em) {
  cJSON *settings = world_settings_json(cs->w);
  open_ctx oc = {cs, settings ? cJSON_PrintUnformatted(settings) : NULL};
  cJSON_Delete(settings);
  if (!oc.settings) return AG_ERR_NOMEM;
  int rc = store_write(cs->st, save_world_txn, &oc, em);
  free(oc.settings);
  return rc;
}

void chat_session_free(chat_session *cs) {
  if (!cs) return;
  if ((cs->n_pending || cs->n_pending_ev) && cs->has_current) session_save(cs, NULL);
  drop_pending(cs);
  free(cs->pending);
  free(cs->pending_ev);
  bus_unsubscribe(world_bus(cs->w), cs->sub);
  bus_off_idle(world_bus(cs->w), on_idle, cs);
  free(cs->title);
  free(cs->tracks);
  free(cs);
}

const char *chat_session_current(const chat_session *cs) { return cs->has_current ? cs->current : NULL; }
const char *chat_session_title(const chat_session *cs) { return cs->has_current ? cs->title : NULL; }
size_t chat_session_failures(const chat_session *cs) { return cs->failures; }
void chat_session_detach(chat_session *cs) {
  if (cs->has_current && cs->n_pending) session_save(cs, NULL);
  drop_pending(cs);
  cs->has_current = 0;
  cs->live = 0;
}

/* ---- restoring ---- */

/* Messages of one chat by seq, loaded once and shared by every agent's memory. */
typedef struct msg_cache {
  uint64_t *keys;
  ag_msg **vals;
  size_t cap, n;
} msg_cache;

static ag_msg **cache_slot(msg_cache *c, uint64_t seq) {
  size_t i = (size_t)(seq * 0x9E3779B97F4A7C15ull) & (c->cap - 1);
  while (c->keys[i] && c->keys[i] != seq) i = (i + 1) & (c->cap - 1);
  c->keys[i] = seq;
  return &c->vals[i];
}

static int cache_grow(msg_cache *c) {
  if (c->n * 2 < c->cap) return AG_OK;
  msg_cache nc = {0};
  nc.cap = c->cap ? c->cap * 2 : 256;
  nc.keys = calloc(nc.cap, sizeof *nc.keys);
  nc.vals = calloc(nc.cap, sizeof *nc.vals);
  if (!nc.keys || !nc.vals) {
    free(nc.keys);
    free(nc.vals);
    return AG_ERR_NOMEM;
  }
  for (size_t i = 0; i < c->cap; i++)
    if (c->keys[i]) *cache_slot(&nc, c->keys[i]) = c->vals[i];
  nc.n = c->n;
  free(c->keys);
  free(c->vals);
  *c = nc;
  return AG_OK;
}

static void cache_free(msg_cache *c) {
  for (size_t i = 0; i < c->cap; i++)
    if (c->keys[i]) ag_msg_unref(c->vals[i]);
  free(c->keys);
  free(c->vals);
}

typedef struct restore_ctx {
  chat_session *cs;
  const char *chat_id;
  store_txn *t;
  msg_cache cache;
  /* Per agent: its memory as messages, and its state. */
  ag_msg ***mems;
  size_t *n_mems;
  store_agent_state *states;
  int *has_state;
  context_state *ctxs;
  size_t cur; /* agent being read */
  store_chat chat;
  uint64_t last_seq;
  ag_errmsg *em;
} restore_ctx;

static int restore_mem_cb(uint64_t seq, void *arg) {
  restore_ctx *rc = arg;
  int r = cache_grow(&rc->cache);
  if (r) return r;
  ag_msg **slot = cache_slot(&rc->cache, seq);
  if (!*slot) {
    store_message sm;
    if ((r = store_message_get(rc->t, rc->chat_id, seq, &sm))) return r;
    *slot = ag_msg_new(sm.sender, sm.text, (ag_kind)sm.kind);
    if (*slot) {
      (*slot)->seq = sm.seq;
      (*slot)->ts_ms = sm.ts_ms;
    }
    store_message_free(&sm);
    if (!*slot) return AG_ERR_NOMEM;
    rc->cache.n++;
  }
  size_t i = rc->cur;
  ag_msg **p = realloc(rc->mems[i], (rc->n_mems[i] + 1) * sizeof *p);
  if (!p) return AG_ERR_NOMEM;
  rc->mems[i] = p;
  p[rc->n_mems[i]++] = *slot;
  return 0;
}

static void restore_reset(restore_ctx *rc) {
  size_t n = rc->cs->n_tracks;
  for (size_t i = 0; i < n; i++) {
    free(rc->mems[i]);
    rc->mems[i] = NULL;
    rc->n_mems[i] = 0;
    rc->has_state[i] = 0;
  }
  cache_free(&rc->cache);
  memset(&rc->cache, 0, sizeof rc->cache);
  store_chat_free(&rc->chat);
}

static int restore_txn(store_txn *t, void *arg) {
  restore_ctx *rc = arg;
  chat_session *cs = rc->cs;
  rc->t = t;
  int r = store_chat_get(t, rc->chat_id, &rc->chat);
  if (r == AG_ERR_NOT_FOUND || (r == AG_OK && strcmp(rc->chat.world_id, world_id(cs->w)) != 0)) {
    return ag_fail(rc->em, AG_ERR_NOT_FOUND, "no chat '%s' in world '%s'", rc->chat_id, world_id(cs->w));
  }
  if (r) return r;
  if ((r = store_message_last_seq(t, rc->chat_id, &rc->last_seq))) return r;
  for (size_t i = 0; i < cs->n_tracks; i++) {
    rc->cur = i;
    const char *id = agent_id(cs->tracks[i].a);
    if ((r = store_memory_scan(t, rc->chat_id, id, restore_mem_cb, rc))) return r;
    r = store_agent_state_get(t, rc->chat_id, id, &rc->states[i]);
    if (r == AG_OK) rc->has_state[i] = 1;
    else if (r != AG_ERR_NOT_FOUND) return r;
    store_context c;
    r = store_context_get(t, rc->chat_id, id, &c);
    if (r == AG_OK) {
      context_free(&rc->ctxs[i]);
      rc->ctxs[i].version = c.version;
      rc->ctxs[i].updated_at_ms = c.updated_at_ms;
      rc->ctxs[i].data = cJSON_Parse(c.data_json);
      store_context_free(&c);
      if (!rc->ctxs[i].data) return ag_fail(rc->em, AG_ERR_STORAGE, "context of %s is not JSON", id);
    } else if (r != AG_ERR_NOT_FOUND) {
      return r;
    }
  }
  return AG_OK;
}

/* Replaces the agents' conversation with chat_id's and makes it the session's current chat (in
 * memory; the caller records it in the world). */
static int session_restore(chat_session *cs, const char *chat_id, ag_errmsg *em) {
  int r = sync_tracks(cs);
  if (r) return r;
  size_t n = cs->n_tracks ? cs->n_tracks : 1;
  restore_ctx rc;
  memset(&rc, 0, sizeof rc);
  rc.cs = cs;
  rc.chat_id = chat_id;
  rc.em = em;
  rc.mems = calloc(n, sizeof *rc.mems);
  rc.n_mems = calloc(n, sizeof *rc.n_mems);
  rc.states = calloc(n, sizeof *rc.states);
  rc.has_state = calloc(n, sizeof *rc.has_state);
  rc.ctxs = calloc(n, sizeof *rc.ctxs);
  for (size_t i = 0; rc.ctxs && i < cs->n_tracks; i++) context_init(&rc.ctxs[i]);
  if (!rc.mems || !rc.n_mems || !rc.states || !rc.has_state || !rc.ctxs) {
    r = AG_ERR_NOMEM;
    goto done;
  }
  if ((r = store_read(cs->st, restore_txn, &rc, em))) goto done;
  world_reset_conversation(cs->w);
  world_set_last_seq(cs->w, rc.last_seq > rc.chat.message_count ? rc.last_seq : rc.chat.message_count);
  for (size_t i = 0; i < cs->n_tracks; i++) {
    agent *a = cs->tracks[i].a;
    for (size_t k = 0; k < rc.n_mems[i]; k++)
      if ((r = agent_memory_push(a, rc.mems[i][k]))) goto done;
    if (rc.has_state[i]) {
      agent_set_turn_state(a, (turn_state){rc.states[i].turn_count, rc.states[i].notice_sent});
      agent_set_reply_counter(a, (size_t)rc.states[i].counter);
    }
    if ((r = agent_set_context(a, &rc.ctxs[i]))) goto done;
  }
  tracks_mark_saved(cs, 0);
  for (size_t i = 0; i < cs->n_tracks; i++) cs->tracks[i].saved_state = rc.has_state[i];
  snprintf(cs->current, sizeof cs->current, "%s", rc.chat.id);
  cs->has_current = 1;
  cs->count = rc.chat.message_count;
  cs->created_at = rc.chat.created_at_ms;
  cs->live = 1;
  r = set_title(cs, rc.chat.title);
done:
  if (rc.mems) restore_reset(&rc);
  else store_chat_free(&rc.chat);
  free(rc.mems);
  free(rc.n_mems);
  free(rc.states);
  free(rc.has_state);
  for (size_t i = 0; rc.ctxs && i < cs->n_tracks; i++) context_free(&rc.ctxs[i]);
  free(rc.ctxs);
  return r;
}

int chat_session_resume(chat_session *cs, ag_errmsg *em) {
  if (!cs->has_current) return AG_OK;
  char id[STORE_ID_MAX];
  snprintf(id, sizeof id, "%s", cs->current);
  return session_restore(cs, id, em);
}

/* ---- new, load, delete, title ---- */

typedef struct chat_op {
  chat_session *cs;
  const char *id;
  int reuse;          /* new: the current chat is reused */
  int was_current;    /* delete */
  char fallback[STORE_ID_MAX];
  const char *title;
  int64_t now;
  ag_errmsg *em;
} chat_op;

static int new_txn(store_txn *t, void *arg) {
  chat_op *op = arg;
  chat_session *cs = op->cs;
  int rc;
  op->reuse = 0;
  if (cs->has_current) {
    store_chat c;
    rc = store_chat_get(t, cs->current, &c);
    if (rc == AG_OK) {
      op->reuse = strcmp(c.title, CHAT_TITLE_DEFAULT) == 0 || c.message_count == 0;
      if (op->reuse) {
        /* Reused: the conversation starts over (memories, turn counts); its messages stay. */
        store_chat nc = {c.id, c.world_id, c.title, c.message_count, c.created_at_ms, op->now, NULL};
        rc = store_memory_clear(t, c.id, NULL);
        if (!rc) rc = store_agent_state_clear(t, c.id, NULL);
        if (!rc) rc = store_context_clear(t, c.id, NULL);
        if (!rc) rc = store_chat_put(t, &nc);
      }
      store_chat_free(&c);
      if (rc || op->reuse) return rc;
    } else if (rc != AG_ERR_NOT_FOUND) {
      return rc;
    }
  }
  store_chat c = {op->id, world_id(cs->w), CHAT_TITLE_DEFAULT, 0, op->now, op->now, NULL};
  if ((rc = store_chat_put(t, &c))) return rc;
  return store_world_set_current(t, world_id(cs->w), op->id);
}

int chat_session_new(chat_session *cs, ag_errmsg *em) {
  int rc;
  if (cs->has_current && cs->live && (rc = session_save(cs, em))) return rc;
  char id[STORE_ID_MAX];
  store_chat_id_new(id);
  chat_op op = {cs, id, 0, 0, "", NULL, ag_now_ms(), em};
  if ((rc = sync_tracks(cs)) || (rc = store_write(cs->st, new_txn, &op, em))) return rc;
  uint64_t keep_seq = op.reuse ? cs->count : 0;
  world_reset_conversation(cs->w);
  world_set_last_seq(cs->w, keep_seq);
  tracks_mark_saved(cs, 0);
  cs->live = 1;
  cJSON *f = cJSON_CreateObject();
  if (op.reuse) {
    cJSON_AddStringToObject(f, "id", cs->current);
    emit(cs, "chat-reused", f);
  } else {
    snprintf(cs->current, sizeof cs->current, "%s", id);
    cs->has_current = 1;
    cs->count = 0;
    cs->created_at = op.now;
    if ((rc = set_title(cs, CHAT_TITLE_DEFAULT))) {
      cJSON_Delete(f);
      return rc;
    }
    cJSON_AddStringToObject(f, "id", id);
    emit(cs, "new-chat-created", f);
  }
  return AG_OK;
}

static int set_current_txn(store_txn *t, void *arg) {
  chat_op *op = arg;
  return store_world_set_current(t, world_id(op->cs->w), op->id);
}

int chat_session_load(chat_session *cs, const char *chat_id, ag_errmsg *em) {
  int rc;
  if (cs->has_current && cs->live && (rc = session_save(cs, em))) return rc;
  if ((rc = session_restore(cs, chat_id, em))) return rc;
  chat_op op = {cs, cs->current, 0, 0, "", NULL, ag_now_ms(), em};
  return store_write(cs->st, set_current_txn, &op, em);
}

static int delete_txn(store_txn *t, void *arg) {
  chat_op *op = arg;
  chat_session *cs = op->cs;
  store_chat c;
  int rc = store_chat_get(t, op->id, &c);
  if (rc == AG_ERR_NOT_FOUND || (rc == AG_OK && strcmp(c.world_id, world_id(cs->w)) != 0)) {
    if (rc == AG_OK) store_chat_free(&c);
    return ag_fail(op->em, AG_ERR_NOT_FOUND, "no chat '%s' in world '%s'", op->id, world_id(cs->w));
  }
  if (rc) return rc;
  store_chat_free(&c);
  store_world w;
  if ((rc = store_world_get(t, world_id(cs->w), &w))) return rc;
  op->was_current = w.current_chat && strcmp(w.current_chat, op->id) == 0;
  store_world_free(&w);
  if ((rc = store_chat_delete(t, op->id))) return rc;
  op->fallback[0] = '\0';
  if (!op->was_current) return AG_OK;
  store_chat latest;
  rc = store_chat_latest(t, world_id(cs->w), &latest);
  if (rc == AG_ERR_NOT_FOUND) return store_world_set_current(t, world_id(cs->w), NULL);
  if (rc) return rc;
  snprintf(op->fallback, sizeof op->fallback, "%s", latest.id);
  store_chat_free(&latest);
  return store_world_set_current(t, world_id(cs->w), op->fallback);
}

int chat_session_delete(chat_session *cs, const char *chat_id, ag_errmsg *em) {
  int rc;
  if (cs->has_current && cs->live && strcmp(cs->current, chat_id) != 0 && (rc = session_save(cs, em))) return rc;
  char id[STORE_ID_MAX];
  snprintf(id, sizeof id, "%s", chat_id);
  chat_op op = {cs, id, 0, 0, "", NULL, ag_now_ms(), em};
  if ((rc = store_write(cs->st, delete_txn, &op, em))) return rc;
  if (op.was_current) {
    drop_pending(cs); /* they belonged to the chat just deleted */
    cs->has_current = 0;
    cs->live = 0;
    world_reset_conversation(cs->w);
    if (op.fallback[0] && (rc = session_restore(cs, op.fallback, em))) return rc;
  }
  cJSON *f = cJSON_CreateObject();
  cJSON_AddStringToObject(f, "id", id);
  if (cs->has_current) cJSON_AddStringToObject(f, "current", cs->current);
  else cJSON_AddNullToObject(f, "current");
  emit(cs, "chat-deleted", f);
  return AG_OK;
}

static int title_txn(store_txn *t, void *arg) {
  chat_op *op = arg;
  chat_session *cs = op->cs;
  store_chat c;
  int rc = store_chat_get(t, cs->current, &c);
  if (rc) return rc;
  store_chat nc = {c.id, c.world_id, op->title, c.message_count, c.created_at_ms, op->now, NULL};
  rc = store_chat_put(t, &nc);
  store_chat_free(&c);
  return rc;
}

int chat_session_set_title(chat_session *cs, const char *title, ag_errmsg *em) {
  if (!cs->has_current) return ag_fail(em, AG_ERR_STATE, "no current chat");
  if (!title[0]) return ag_fail(em, AG_ERR_INVALID, "the title is empty");
  chat_op op = {cs, cs->current, 0, 0, "", title, ag_now_ms(), em};
  int rc = store_write(cs->st, title_txn, &op, em);
  if (rc) return rc;
  if ((rc = set_title(cs, title))) return rc;
  cJSON *f = cJSON_CreateObject();
  cJSON_AddStringToObject(f, "title", title);
  emit(cs, "title-updated", f);
  return AG_OK;
}
