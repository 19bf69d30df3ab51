/* Group-commit saving (behaviour.md §6 "Saving"): every message delivered on the bus at the store phase
 * waits, with the tool steps beside it, until the bus has drained; then all of them are written with
 * everything the agents changed while deciding about them (memories, turn counts, contexts) in one write
 * transaction. The callback only writes; what it decides is applied to memory after commit, because
 * LMDB may run it twice (map growth). */
#include "chat/session_int.h"

#include "chat/rules.h"
#include "common/clock.h"

#include <stdlib.h>
#include <string.h>

typedef struct save_ctx {
  chat_session *cs;
  uint64_t upto;       /* memory entries up to this seq are stored */
  const char *title;   /* the chat's title after this save (borrowed) */
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
  uint64_t count = cs->count;
  for (size_t i = 0; i < cs->n_pending; i++) {
    const ag_msg *m = cs->pending[i];
    store_message sm = {m->seq, m->ts_ms, (uint8_t)m->kind, m->sender, m->text, 0, NULL, m->has_sim, m->sim_ms};
    if ((rc = store_message_put(t, cs->current, &sm))) return rc;
    if (m->seq > count) count = m->seq;
  }
  for (size_t i = 0; i < cs->n_pending_ev; i++)
    if ((rc = store_thread_append(t, cs->current, cs->pending_ev[i]))) return rc;
  if ((rc = save_agents(t, sc))) return rc;
  if (!cs->n_pending) return AG_OK; /* a flush of memories and states does not make the chat newer */
  store_chat c = {cs->current, world_id(cs->w), sc->title, count,
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

void chat_session__drop_pending(chat_session *cs) {
  for (size_t i = 0; i < cs->n_pending; i++) ag_msg_unref(cs->pending[i]);
  cs->n_pending = 0;
  for (size_t i = 0; i < cs->n_pending_ev; i++) free(cs->pending_ev[i]);
  cs->n_pending_ev = 0;
}

int chat_session__save(chat_session *cs, ag_errmsg *em) {
  char *new_title = NULL;
  int rc = chat_session__sync_tracks(cs);
  if (!rc) rc = chat_rule_title(cs->title, cs->pending, cs->n_pending, &new_title);
  uint64_t upto = cs->count;
  for (size_t i = 0; i < cs->n_pending; i++)
    if (cs->pending[i]->seq > upto) upto = cs->pending[i]->seq;
  save_ctx sc = {cs, upto, new_title ? new_title : cs->title, ag_now_ms()};
  if (!rc) rc = store_write(cs->st, save_txn, &sc, em);
  size_t n = cs->n_pending;
  chat_session__drop_pending(cs);
  if (rc) {
    free(new_title);
    cs->failures += n ? n : 1;
    return rc;
  }
  apply_saved(cs);
  if (upto > cs->count) cs->count = upto;
  if (new_title) {
    chat_session__set_title(cs, new_title);
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "title", new_title);
    world_emit(cs->w, "title-updated", f);
    free(new_title);
  }
  if (n) {
    cJSON *f = cJSON_CreateObject();
    cJSON_AddNumberToObject(f, "seq", (double)upto);
    cJSON_AddNumberToObject(f, "messages", (double)n);
    world_emit(cs->w, "state-saved", f);
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
  int rc = chat_session__save(cs, &em);
  if (rc) {
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "error", em.text[0] ? em.text : ag_strerror(rc));
    world_emit(cs->w, "storage-error", f);
  }
}

int chat_session__watch(chat_session *cs) {
  bus *b = world_bus(cs->w);
  int rc = bus_subscribe(b, BUS_MESSAGE | BUS_EVENT, BUS_PHASE_STORE, on_bus, cs, &cs->sub);
  if (rc) return rc;
  if ((rc = bus_on_idle(b, on_idle, cs))) bus_unsubscribe(b, cs->sub);
  return rc;
}

void chat_session__unwatch(chat_session *cs) {
  bus_unsubscribe(world_bus(cs->w), cs->sub);
  bus_off_idle(world_bus(cs->w), on_idle, cs);
}
