/* The session manager's current-chat rules (see session.h): opening a world's session, new chat with
 * reuse, load, delete with fallback, titles by hand. Saving lives in save.c, restoring in restore.c.
 * Transaction callbacks only read and write; what they decide is applied to memory after commit,
 * because LMDB may run them twice (map growth). */
#include "chat/session_int.h"

#include "chat/rules.h"
#include "chat/title.h"
#include "common/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int chat_session__set_title(chat_session *cs, const char *title) {
  char *t = strdup(title);
  if (!t) return AG_ERR_NOMEM;
  free(cs->title);
  cs->title = t;
  return AG_OK;
}

int chat_session__sync_tracks(chat_session *cs) {
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

static void release(chat_session *cs) {
  store_chat_unlock(cs->lock);
  cs->lock = NULL;
}

void chat_session__mark_saved(chat_session *cs, int saved_state) {
  for (size_t i = 0; i < cs->n_tracks; i++) {
    session_track *t = &cs->tracks[i];
    t->saved_mem = agent_memory_total(t->a);
    t->saved_turn = agent_turn_state(t->a);
    t->saved_counter = agent_reply_counter(t->a);
    t->saved_state = saved_state;
    t->saved_ctx = agent_context(t->a)->version;
  }
}

typedef struct open_ctx {
  chat_session *cs;
  char *settings;
} open_ctx;

static int open_txn(store_txn *t, void *arg) {
  open_ctx *oc = arg;
  chat_session *cs = oc->cs;
  store_world old;
  memset(&old, 0, sizeof old);
  int64_t now = chat_session__now(cs);
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
      rc = chat_session__set_title(cs, c.title);
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
  store_world nw = {world_id(cs->w), world_name(cs->w), oc->settings, old.current_chat, old.created_at_ms,
                    chat_session__now(cs), NULL};
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
  ag_buf_init(&cs->pending_steps, CHAT_PENDING_STEPS_MAX);
  cJSON *settings = world_settings_json(w);
  open_ctx oc = {cs, settings ? cJSON_PrintUnformatted(settings) : NULL};
  cJSON_Delete(settings);
  if (!oc.settings) {
    rc = AG_ERR_NOMEM;
    goto fail;
  }
  if ((rc = store_write(st, open_txn, &oc, em))) goto fail;
  if ((rc = chat_session__sync_tracks(cs))) goto fail;
  if ((rc = chat_session__watch(cs))) goto fail;
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

int64_t chat_session__now(const chat_session *cs) { return cs->now ? cs->now(cs->now_ud) : ag_now_ms(); }

void chat_session_set_clock(chat_session *cs, int64_t (*now)(void *ud), void *ud) {
  cs->now = now;
  cs->now_ud = ud;
}

void chat_session_free(chat_session *cs) {
  if (!cs) return;
  chat_session__save_last(cs);
  free(cs->pending);
  ag_buf_free(&cs->pending_steps);
  chat_session__unwatch(cs);
  release(cs);
  free(cs->title);
  free(cs->tracks);
  free(cs);
}

const char *chat_session_current(const chat_session *cs) { return cs->has_current ? cs->current : NULL; }
const char *chat_session_title(const chat_session *cs) { return cs->has_current ? cs->title : NULL; }
size_t chat_session_failures(const chat_session *cs) { return chat_session__unsaved(cs); }
void chat_session_detach(chat_session *cs) {
  chat_session__save_last(cs);
  cs->has_current = 0;
  cs->live = 0;
  release(cs);
}

/* ---- new, load, delete, title ---- */

typedef struct chat_op {
  chat_session *cs;
  const char *id;
  int can_reuse;      /* new: this process may take the current chat (nobody else holds it) */
  int held;           /* new: another process holds the current chat (it stays the world's current) */
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
  if (cs->has_current && op->can_reuse) {
    store_chat c;
    rc = store_chat_get(t, cs->current, &c);
    if (rc == AG_OK) {
      op->reuse = chat_rule_reusable(c.title, c.message_count) && !(cs->fresh_only && c.message_count);
      if (op->reuse) {
        /* Reused: the conversation starts over (memories, turn counts); its messages stay. */
        store_chat nc = {.id = c.id, .world_id = c.world_id, .title = c.title, .message_count = c.message_count,
                         .created_at_ms = c.created_at_ms, .updated_at_ms = op->now, .has_sim = c.has_sim, .sim_ms = c.sim_ms};
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
  store_chat c = {.id = op->id, .world_id = world_id(cs->w), .title = CHAT_TITLE_DEFAULT, .created_at_ms = op->now,
                  .updated_at_ms = op->now};
  if ((rc = store_chat_put(t, &c))) return rc;
  return op->held ? AG_OK : store_world_set_current(t, world_id(cs->w), op->id);
}

/* The locks "new chat" needs: the current chat's when nobody else holds it (it may be reused), and
 * the fresh id's (it may be created). *cur is NULL when the current chat is held elsewhere or when
 * this session already holds it. */
static int new_locks(chat_session *cs, const char *id, chat_op *op, store_lock **cur, store_lock **fresh,
                     ag_errmsg *em) {
  *cur = *fresh = NULL;
  op->can_reuse = op->held = 0;
  int rc;
  if (cs->has_current) {
    if (cs->lock && strcmp(store_lock_chat(cs->lock), cs->current) == 0) {
      op->can_reuse = 1;
    } else {
      rc = store_chat_lock(cs->st, cs->current, cur, NULL, NULL);
      if (rc && rc != AG_ERR_STATE) return ag_fail(em, rc, "cannot lock chat '%s'", cs->current);
      op->can_reuse = rc == AG_OK;
      op->held = rc == AG_ERR_STATE;
    }
  }
  if ((rc = store_chat_lock(cs->st, id, fresh, NULL, em))) {
    store_chat_unlock(*cur);
    *cur = NULL;
  }
  return rc;
}

int chat_session_new(chat_session *cs, ag_errmsg *em) {
  int rc;
  if (cs->has_current && cs->live && (rc = chat_session__save(cs, em))) return rc;
  char id[STORE_ID_MAX];
  store_chat_id_new(id);
  chat_op op = {.cs = cs, .id = id, .now = chat_session__now(cs), .em = em};
  store_lock *cur, *fresh;
  if ((rc = chat_session__sync_tracks(cs)) || (rc = new_locks(cs, id, &op, &cur, &fresh, em))) return rc;
  if ((rc = store_write(cs->st, new_txn, &op, em))) {
    store_chat_unlock(cur);
    store_chat_unlock(fresh);
    return rc;
  }
  /* A chat is held by the process that writes it: the reused one, or the fresh one. */
  if (op.reuse) {
    store_chat_unlock(fresh);
    if (cur) {
      release(cs);
      cs->lock = cur;
    }
  } else {
    store_chat_unlock(cur);
    release(cs);
    cs->lock = fresh;
  }
  if (op.held) snprintf(cs->passed, sizeof cs->passed, "%s", cs->current);
  uint64_t keep_seq = op.reuse ? cs->count : 0;
  world_reset_conversation(cs->w);
  world_set_last_seq(cs->w, keep_seq);
  /* A new chat is a new run of the simulation: its clock starts at the world's start (a reused chat
   * keeps the time it had, being the current one). */
  if (!op.reuse && world_is_virtual(cs->w) && world_now(cs->w) != world_sim_start(cs->w))
    world_time_rebase(cs->w, world_sim_start(cs->w), 0);
  cs->saved_sim = world_now(cs->w);
  chat_session__mark_saved(cs, 0);
  cs->live = 1;
  if (op.reuse) {
    world_emit(cs->w, &(world_event){EV_CHAT_REUSED, .u.chat = {cs->current, NULL}});
  } else {
    snprintf(cs->current, sizeof cs->current, "%s", id);
    cs->has_current = 1;
    cs->count = 0;
    cs->created_at = op.now;
    if ((rc = chat_session__set_title(cs, CHAT_TITLE_DEFAULT))) return rc;
    world_emit(cs->w, &(world_event){EV_NEW_CHAT_CREATED, .u.chat = {id, NULL}});
  }
  return AG_OK;
}

static int set_current_txn(store_txn *t, void *arg) {
  chat_op *op = arg;
  return store_world_set_current(t, world_id(op->cs->w), op->id);
}

int chat_session_load(chat_session *cs, const char *chat_id, ag_errmsg *em) {
  int rc;
  if (cs->has_current && cs->live && (rc = chat_session__save(cs, em))) return rc;
  if ((rc = chat_session__restore(cs, chat_id, em))) return rc;
  chat_op op = {.cs = cs, .id = cs->current, .now = chat_session__now(cs), .em = em};
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
  if (cs->has_current && cs->live && strcmp(cs->current, chat_id) != 0 && (rc = chat_session__save(cs, em))) return rc;
  char id[STORE_ID_MAX];
  snprintf(id, sizeof id, "%s", chat_id);
  /* A chat another process holds is never deleted under it. */
  store_lock *held = NULL;
  int ours = cs->lock && strcmp(store_lock_chat(cs->lock), id) == 0;
  long pid = 0;
  if (!ours && (rc = store_chat_lock(cs->st, id, &held, &pid, em))) {
    if (rc != AG_ERR_STATE) return rc;
    return ag_fail(em, rc, "cannot delete chat '%s': it is in use by another agora process (pid %ld)", id, pid);
  }
  chat_op op = {.cs = cs, .id = id, .now = chat_session__now(cs), .em = em};
  rc = store_write(cs->st, delete_txn, &op, em);
  store_chat_unlock(held);
  if (rc) return rc;
  /* The session changes only when it was on the deleted chat (another process may have made another
   * chat the world's current one meanwhile). */
  if (cs->has_current && strcmp(cs->current, id) == 0) {
    chat_session__drop_pending(cs); /* they belonged to the chat just deleted */
    cs->has_current = 0;
    cs->live = 0;
    world_reset_conversation(cs->w);
    if (ours) release(cs);
    /* The fallback becomes current in the store; this process takes it only if nobody holds it. */
    if (op.fallback[0] && (rc = chat_session__restore(cs, op.fallback, em)) && rc != AG_ERR_STATE) return rc;
  }
  world_emit(cs->w, &(world_event){EV_CHAT_DELETED, .u.chat = {id, cs->has_current ? cs->current : NULL}});
  return AG_OK;
}

static int title_txn(store_txn *t, void *arg) {
  chat_op *op = arg;
  chat_session *cs = op->cs;
  store_chat c;
  int rc = store_chat_get(t, cs->current, &c);
  if (rc) return rc;
  store_chat nc = {.id = c.id, .world_id = c.world_id, .title = op->title, .message_count = c.message_count,
                   .created_at_ms = c.created_at_ms, .updated_at_ms = op->now, .has_sim = c.has_sim, .sim_ms = c.sim_ms};
  rc = store_chat_put(t, &nc);
  store_chat_free(&c);
  return rc;
}

int chat_session_set_title(chat_session *cs, const char *title, ag_errmsg *em) {
  if (!cs->has_current) return ag_fail(em, AG_ERR_STATE, "no current chat");
  if (!title[0]) return ag_fail(em, AG_ERR_INVALID, "the title is empty");
  chat_op op = {.cs = cs, .id = cs->current, .title = title, .now = chat_session__now(cs), .em = em};
  int rc = store_write(cs->st, title_txn, &op, em);
  if (rc) return rc;
  if ((rc = chat_session__set_title(cs, title))) return rc;
  world_emit(cs->w, &(world_event){EV_TITLE_UPDATED, .u.title = {title}});
  return AG_OK;
}

/* ---- one agent's memory ---- */

typedef struct clear_op {
  chat_session *cs;
  const char *agent_id;
  const char *summary_step; /* summary mode: the empty summary's thread step, or NULL */
} clear_op;

static int clear_txn(store_txn *t, void *arg) {
  clear_op *op = arg;
  int rc = store_memory_clear(t, op->cs->current, op->agent_id);
  if (!rc) rc = store_agent_state_clear(t, op->cs->current, op->agent_id);
  if (!rc) rc = store_context_clear(t, op->cs->current, op->agent_id);
  /* A restore takes the thread's last summary of the agent (restore.c): from here on, none. */
  if (!rc && op->summary_step) rc = store_thread_append(t, op->cs->current, op->summary_step);
  return rc;
}

/* The thread step of an empty summary for agent a after message seq (caller frees), or NULL. */
static char *empty_summary_step(agent *a, uint64_t seq) {
  if (agent_settings_of(a)->memory.mode != MEM_MODE_SUMMARY) return NULL;
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "agent", agent_id(a));
  cJSON_AddNumberToObject(j, "upto", 0);
  cJSON_AddStringToObject(j, "summary", "");
  cJSON_AddStringToObject(j, "type", ev_kind_name(EV_SUMMARY));
  cJSON_AddNumberToObject(j, "after_seq", (double)seq);
  char *text = j ? cJSON_PrintUnformatted(j) : NULL;
  cJSON_Delete(j);
  return text;
}

int chat_session_clear_agent(chat_session *cs, const char *name, ag_errmsg *em) {
  agent *a = world_agent_find(cs->w, name);
  if (!a) return ag_fail(em, AG_ERR_NOT_FOUND, "no agent '%s' in this world", name);
  int rc;
  if (cs->has_current && cs->live && (rc = chat_session__save(cs, em))) return rc;
  clear_op op = {.cs = cs, .agent_id = agent_id(a), .summary_step = empty_summary_step(a, cs->last_delivered)};
  rc = cs->has_current ? store_write(cs->st, clear_txn, &op, em) : AG_OK;
  free((char *)op.summary_step);
  if (rc) return rc;
  agent_reset(a);
  if ((rc = chat_session__sync_tracks(cs))) return rc;
  for (size_t i = 0; i < cs->n_tracks; i++) {
    session_track *t = &cs->tracks[i];
    if (t->a != a) continue;
    t->saved_mem = agent_memory_total(a);
    t->saved_turn = agent_turn_state(a);
    t->saved_counter = agent_reply_counter(a);
    t->saved_state = 0;
    t->saved_ctx = agent_context(a)->version;
  }
  world_event e = {EV_MEMORY_CLEARED, .u.cleared = {agent_id(a)}};
  world_emit(cs->w, &e);
  return AG_OK;
}
