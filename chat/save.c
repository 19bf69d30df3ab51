/* Group-commit saving (docs/behaviour.md §6 "Saving"): every message delivered on the bus at the store phase
 * waits, with the tool steps beside it, until the bus has drained; then all of them are written with
 * everything the agents changed while deciding about them (memories, turn counts, contexts) in one write
 * transaction. The callback only writes; what it decides is applied to memory after commit, because
 * LMDB may run it twice (map growth). */
#include "chat/session_int.h"

#include "chat/event_json.h"
#include "chat/rules.h"
#include "common/clock.h"
#include "common/defer.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct save_ctx {
  chat_session *cs;
  uint64_t upto;       /* memory entries up to this seq are stored */
  const char *title;   /* the chat's title after this save (borrowed) */
  int64_t now;
  /* Found in the transaction: how far the pending messages move because the chat already holds
   * their seqs (another writer got there first; see docs/decisions.md "One process per chat"). */
  uint64_t shift;
} save_ctx;

/* The agent's memory entries not stored yet, appended in runs (one seek for the end of its memory each). */
static int save_memory(store_txn *t, save_ctx *sc, session_track *tr) {
  chat_session *cs = sc->cs;
  size_t n, n_seqs = 0;
  ag_msg *const *mem = agent_memory(tr->a, &n);
  size_t base = agent_memory_total(tr->a) - n; /* absolute index of mem[0] */
  size_t k = tr->saved_mem > base ? tr->saved_mem : base;
  uint64_t seqs[64];
  int rc = AG_OK;
  /* Replies join their author's memory when published, before they are stored: only entries whose
   * message is stored by now are written; the rest go with their own message. */
  for (; !rc && k < base + n && mem[k - base]->seq <= sc->upto; k++) {
    uint64_t seq = mem[k - base]->seq;
    seqs[n_seqs++] = seq > cs->count ? seq + sc->shift : seq; /* a pending message: stored where it moved */
    if (n_seqs == sizeof seqs / sizeof *seqs) {
      rc = store_memory_append_all(t, cs->current, agent_id(tr->a), seqs, n_seqs);
      n_seqs = 0;
    }
  }
  if (!rc && n_seqs) rc = store_memory_append_all(t, cs->current, agent_id(tr->a), seqs, n_seqs);
  tr->pend_mem = k;
  return rc;
}

static int save_agents(store_txn *t, save_ctx *sc) {
  chat_session *cs = sc->cs;
  for (size_t i = 0; i < cs->n_tracks; i++) {
    session_track *tr = &cs->tracks[i];
    int rc = save_memory(t, sc, tr);
    if (rc) return rc;
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
  uint64_t count = cs->count, last;
  /* Seqs are checked here, inside the write: a message is never rejected for a seq someone else took. */
  int rc = store_message_last_seq(t, cs->current, &last);
  if (rc) return rc;
  sc->shift = !cs->seqs_fixed && cs->n_pending && last >= cs->pending[0]->seq ? last - cs->pending[0]->seq + 1 : 0;
  for (size_t i = 0; i < cs->n_pending; i++) {
    const ag_msg *m = cs->pending[i];
    store_message sm = {m->seq + sc->shift, m->ts_ms, (uint8_t)m->kind, m->sender, m->text, 0, NULL, m->has_sim, m->sim_ms};
    /* A followed chat's message delivered again is already stored, as it was: nothing to write. */
    if ((rc = store_message_put(t, cs->current, &sm)) && !(cs->seqs_fixed && rc == AG_ERR_EXISTS)) return rc;
    if (sm.seq > count) count = sm.seq;
  }
  if ((rc = store_thread_append_all(t, cs->current, ag_buf_str(&cs->pending_steps), cs->n_pending_steps))) return rc;
  if ((rc = save_agents(t, sc))) return rc;
  /* A flush of memories and states does not make the chat newer; a clock that moved does (its time is
   * the chat's, docs/time.md). */
  if (!cs->n_pending && !cs->sim_moved) return AG_OK;
  store_chat c = {.id = cs->current, .world_id = world_id(cs->w), .title = sc->title, .message_count = count,
                  .created_at_ms = cs->created_at, .updated_at_ms = sc->now, .has_sim = world_is_virtual(cs->w),
                  .sim_ms = world_now(cs->w)};
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

/* The pending messages were stored shift places later: they (shared with the agents' memories) and
 * the world's numbering follow, so later messages come after them. */
static void move_pending(chat_session *cs, uint64_t shift) {
  for (size_t i = 0; i < cs->n_pending; i++) cs->pending[i]->seq += shift;
  world_set_last_seq(cs->w, world_last_seq(cs->w) + shift);
  world_event e = {EV_SEQS_MOVED, .u.seqs_moved = {shift, cs->n_pending}};
  world_emit(cs->w, &e);
}

/* The virtual clock moved since the chat's time was last stored (a wait, an advance). */
static int time_moved(chat_session *cs) {
  if (world_is_virtual(cs->w) && world_now(cs->w) != cs->saved_sim) cs->sim_moved = 1;
  return cs->sim_moved;
}

void chat_session__save_last(chat_session *cs) {
  if (cs->has_current && (cs->n_pending || cs->n_pending_steps || time_moved(cs)) && chat_session__save(cs, NULL))
    cs->failures += cs->n_pending ? cs->n_pending : 1;
  chat_session__drop_pending(cs);
}

size_t chat_session__unsaved(const chat_session *cs) {
  return cs->failures + (cs->save_failed ? (cs->n_pending ? cs->n_pending : 1) : 0);
}

void chat_session__drop_pending(chat_session *cs) {
  for (size_t i = 0; i < cs->n_pending; i++) ag_msg_unref(cs->pending[i]);
  cs->n_pending = 0;
  /* a batch that grew large (saves failed for a while) gives its memory back */
  if (cs->pending_steps.alloc > ((size_t)4 << 20)) ag_buf_free(&cs->pending_steps);
  ag_buf_reset(&cs->pending_steps);
  cs->n_pending_steps = 0;
  cs->save_failed = 0;
}

/* "Saved" is said only of what is on disk: with a store syncing in the background the event waits for
 * the sync (at once otherwise). */
static void report_saved(chat_session *cs, uint64_t upto, size_t n) {
  if (cs->unsynced_n && strcmp(cs->unsynced_chat, cs->current)) cs->unsynced_n = 0;
  snprintf(cs->unsynced_chat, sizeof cs->unsynced_chat, "%s", cs->current);
  cs->unsynced_commit = store_commits(cs->st);
  cs->unsynced_upto = upto;
  cs->unsynced_n += n;
  chat_session_synced(cs);
}

int chat_session__save(chat_session *cs, ag_errmsg *em) {
  char *new_title = NULL;
  time_moved(cs);
  int rc = chat_session__sync_tracks(cs);
  if (!rc) rc = chat_rule_title(cs->title, cs->pending, cs->n_pending, &new_title);
  uint64_t upto = cs->count;
  for (size_t i = 0; i < cs->n_pending; i++)
    if (cs->pending[i]->seq > upto) upto = cs->pending[i]->seq;
  save_ctx sc = {cs, upto, new_title ? new_title : cs->title, chat_session__now(cs), 0};
  if (!rc) rc = store_write(cs->st, save_txn, &sc, em);
  if (rc) {
    /* The batch is kept, not dropped: a later message's memory entries and the next commit's chat
     * record refer to these seqs, so dropping them would fail every later save of the chat. The next
     * save (next idle, chat switch or close) writes them with whatever arrived since. */
    free(new_title);
    cs->save_failed = 1;
    cs->failed_batch = cs->n_pending + cs->n_pending_steps;
    return rc;
  }
  if (sc.shift) move_pending(cs, sc.shift);
  upto += sc.shift;
  size_t n = cs->n_pending;
  chat_session__drop_pending(cs);
  cs->sim_moved = 0;
  cs->saved_sim = world_now(cs->w);
  apply_saved(cs);
  if (upto > cs->count) cs->count = upto;
  if (new_title) {
    chat_session__set_title(cs, new_title);
    world_emit(cs->w, &(world_event){EV_TITLE_UPDATED, .u.title = {new_title}});
    free(new_title);
  }
  if (n) report_saved(cs, upto, n);
  return AG_OK;
}

void chat_session_synced(chat_session *cs) {
  if (!cs->unsynced_n || store_synced(cs->st) < cs->unsynced_commit) return;
  size_t n = cs->unsynced_n;
  cs->unsynced_n = 0;
  if (!cs->has_current || strcmp(cs->current, cs->unsynced_chat)) return; /* the chat was left meanwhile */
  world_emit(cs->w, &(world_event){EV_STATE_SAVED, .u.saved = {cs->unsynced_upto, n}});
}

/* Where a copy of another process's memory step (world_receive_memory) stands: where it stood there,
 * since the stream may have brought a message between the two (docs/distributed.md "Memory across
 * hosts"); 0 for this process's own steps, which stand after the last message delivered before them. */
static uint64_t step_copied_after(const world_event *e) {
  return e->kind == EV_TOOL_RESULT ? e->u.tool.after_seq
         : e->kind == EV_REFLECTION ? e->u.reflection.after_seq
         : e->kind == EV_SUMMARY    ? e->u.summary.after_seq
         : e->kind == EV_MEMORY_RATED ? e->u.rated.after_seq
                                    : 0;
}

typedef struct step_find {
  const char *text;
  int found;
} step_find;

static int step_find_cb(const char *json, size_t len, void *arg) {
  step_find *f = arg;
  f->found |= len == strlen(f->text) && !memcmp(json, f->text, len);
  return 0;
}

static int step_find_txn(store_txn *t, void *arg) {
  const void *const *a = arg;
  return store_thread_scan(t, a[0], step_find_cb, (void *)a[1]);
}

/* Whether a followed chat's copy holds another process's memory step (text, anchored after message
 * after) from before it began to follow it: a step before the last message it held was stored with the
 * messages after it (group commit, in the stream's order); one after that last message may have been. */
static int step_stored(chat_session *cs, uint64_t after, const char *text) {
  if (!cs->seqs_fixed || after > cs->followed_upto) return 0;
  if (after < cs->followed_upto) return 1;
  step_find f = {text, 0};
  const void *arg[2] = {cs->current, &f};
  return store_read(cs->st, step_find_txn, arg, NULL) == AG_OK && f.found;
}

/* A tool step joins the thread, anchored after the last message delivered before it (a copied memory
 * step: where it stood in its own process). It is written straight after the batch's other steps, not
 * through a cJSON tree: the tree, its allocations and its number printing were the largest cost of a
 * reply replayed from the cache (bench/README.md). */
static void on_thread_step(chat_session *cs, const world_event *e) {
  ag_buf *b = &cs->pending_steps;
  size_t start = b->len;
  uint64_t copied = step_copied_after(e), after = copied ? copied : cs->last_delivered;
  ag_json_members m = {.b = b, .rc = ag_buf_append(b, "{", 1)};
  chat_event_put_fields(&m, e); /* each add does nothing once one has failed */
  ag_json_member_string(&m, "type", ev_kind_name(e->kind));
  ag_json_member_int(&m, "after_seq", (int64_t)after);
  if (e->kind == EV_LLM_START) { /* what a resume needs (chat/inflight.h); not in the output */
    ag_json_member_int(&m, "seq", (int64_t)e->u.llm_start.seq);
    if (e->u.llm_start.rerun) ag_json_member_bool(&m, "rerun", 1);
  }
  int rc = m.rc ? m.rc : ag_buf_append(b, "}", 2); /* with the NUL that ends the step */
  if (rc || (copied && step_stored(cs, after, b->data + start))) { /* nothing half-written or twice stays */
    b->len = start;
    if (b->data) b->data[start] = '\0';
    if (rc) cs->failures++;
    return;
  }
  cs->n_pending_steps++;
}

static void on_bus(void *ud, bus_topic topic, void *payload) {
  chat_session *cs = ud;
  if (!cs->has_current) return;
  if (topic == BUS_EVENT) {
    const world_event *e = &((const bus_event *)payload)->ev;
    /* The chat's event thread: tool steps, failed calls and the token usage of calls that report it,
     * beside the messages; and when turns start and end, so a resume finds those in flight. */
    if (e->kind == EV_TOOL_CALL || e->kind == EV_TOOL_RESULT || e->kind == EV_LLM_ERROR ||
        e->kind == EV_LLM_START || e->kind == EV_TURN_QUEUED || e->kind == EV_TURN_END ||
        e->kind == EV_BUDGET_EXHAUSTED || e->kind == EV_SUMMARY || e->kind == EV_REFLECTION ||
        e->kind == EV_MEMORY_RATED ||
        (e->kind == EV_LLM_DONE && (e->u.llm_done.input_tokens > 0 || e->u.llm_done.output_tokens > 0)))
      on_thread_step(cs, e);
    if (e->kind == EV_CLOCK_ADVANCED) cs->sim_moved = 1; /* the chat's time is stored with it */
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

/* Rounds of a long fan-out a commit waits for at most (64 replies each): what a crash can lose stays
 * bounded, and the store's batch stays a few thousand messages. */
#define SAVE_HOLD_ROUNDS 64

static void on_idle(void *ud) {
  chat_session *cs = ud;
  if ((!cs->n_pending && !cs->n_pending_steps && !cs->sim_moved) || !cs->has_current) return;
  /* A failed batch is retried when something new arrives, not at once: its storage-error event makes
   * the bus idle again, and retrying then would spin while the disk stays full. */
  if (cs->save_failed && cs->n_pending + cs->n_pending_steps == cs->failed_batch) return;
  /* A fan-out's replies come in rounds of AG_DEFER_BATCH: committed per round, a 10,000-reply replay
   * was 156 transactions and half as fast (bench_llm_scale); held, it is one. The loop looks again
   * even if the rest of the run publishes nothing. */
  if (ag_defer_batching() && cs->held < SAVE_HOLD_ROUNDS && cs->recheck) {
    cs->held++;
    event_active(cs->recheck, EV_TIMEOUT, 0);
    return;
  }
  cs->held = 0;
  ag_errmsg em = {""};
  int rc = chat_session__save(cs, &em);
  if (rc) {
    world_emit(cs->w, &(world_event){EV_STORAGE_ERROR, .u.storage = {em.text[0] ? em.text : ag_strerror(rc)}});
  }
}

static void on_recheck(evutil_socket_t fd, short what, void *ud) {
  (void)fd;
  (void)what;
  on_idle(ud);
}

int chat_session__watch(chat_session *cs) {
  bus *b = world_bus(cs->w);
  if (!(cs->recheck = event_new(world_base(cs->w), -1, 0, on_recheck, cs))) return AG_ERR_NOMEM;
  int rc = bus_subscribe(b, BUS_MESSAGE | BUS_EVENT, BUS_PHASE_STORE, on_bus, cs, &cs->sub);
  if (!rc && (rc = bus_on_idle(b, BUS_IDLE_STORE, on_idle, cs))) bus_unsubscribe(b, cs->sub);
  if (rc) {
    event_free(cs->recheck);
    cs->recheck = NULL;
  }
  return rc;
}

void chat_session__unwatch(chat_session *cs) {
  bus_unsubscribe(world_bus(cs->w), cs->sub);
  bus_off_idle(world_bus(cs->w), on_idle, cs);
  if (cs->recheck) event_free(cs->recheck);
  cs->recheck = NULL;
}
