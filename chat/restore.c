/* Restoring (docs/behaviour.md §6 "Restore / load"): a stored chat back into the agents — memories as
 * shared message references (each message read once), turn counts, reply counters and contexts — in
 * one read transaction; the agents change only after it succeeded. */
#include "chat/session_int.h"

#include "chat/inflight.h"
#include "common/jsonnum.h"
#include "llm/budget.h"

#include <cjson/cJSON.h>

#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  int64_t sim_ms; /* the chat's simulated time (chat_time) */
  chat_inflight inflight; /* the turns in flight when the chat was last left */
  llm_spend spent;        /* its llm-done steps summed: the budget's spend goes on from there */
  cJSON *summaries;       /* agent id → its last summary step (summary mode's model summaries) */
  cJSON *notes;           /* the remember tool's stored results: the memory stream's notes (docs/memory.md) */
  ag_errmsg *em;
} restore_ctx;

/* Message seq of the chat, read once into the cache (*out borrowed from it). */
static int cache_load(restore_ctx *rc, uint64_t seq, ag_msg **out) {
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
      (*slot)->has_sim = sm.has_sim;
      (*slot)->sim_ms = sm.sim_ms;
    }
    store_message_free(&sm);
    if (!*slot) return AG_ERR_NOMEM;
    rc->cache.n++;
  }
  *out = *slot;
  return AG_OK;
}

static int restore_mem_cb(uint64_t seq, void *arg) {
  restore_ctx *rc = arg;
  ag_msg *m = NULL;
  int r = cache_load(rc, seq, &m);
  if (r) return r;
  size_t i = rc->cur;
  ag_msg **p = realloc(rc->mems[i], (rc->n_mems[i] + 1) * sizeof *p);
  if (!p) return AG_ERR_NOMEM;
  rc->mems[i] = p;
  p[rc->n_mems[i]++] = m;
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
  chat_inflight_free(&rc->inflight);
  cJSON_Delete(rc->summaries);
  rc->summaries = NULL;
}

/* An llm-done step adds its tokens and dollars to the chat's spend. Only those steps are parsed twice. */
static int restore_spend(llm_spend *s, const char *json, size_t len) {
  if (!memmem(json, len, "\"llm-done\"", 10)) return AG_OK;
  cJSON *j = cJSON_ParseWithLength(json, len);
  if (!j) return AG_OK; /* a damaged step costs nothing rather than failing the chat */
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(j, "type");
  /* A reply from the response cache cost nothing. */
  if (cJSON_IsString(type) && !strcmp(type->valuestring, "llm-done") &&
      !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "cached"))) {
    int64_t in = 0, out = 0;
    ag_json_int_member(j, "input_tokens", 0, AG_JSON_INT_MAX, &in);
    ag_json_int_member(j, "output_tokens", 0, AG_JSON_INT_MAX, &out);
    const cJSON *usd = cJSON_GetObjectItemCaseSensitive(j, "usd");
    s->tokens += in + out;
    if (cJSON_IsNumber(usd) && usd->valuedouble > 0) s->usd += usd->valuedouble;
  }
  cJSON_Delete(j);
  return AG_OK;
}

/* A summary step replaces the agent's summary: the last one is the agent's when the chat was left. */
static int restore_summary(restore_ctx *rc, const char *json, size_t len) {
  if (!memmem(json, len, "\"summary\"", 9)) return AG_OK;
  cJSON *j = cJSON_ParseWithLength(json, len);
  const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "type"));
  const char *agent = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "agent"));
  if (!type || strcmp(type, "summary") || !agent) { /* another kind, or damaged: no summary */
    cJSON_Delete(j);
    return AG_OK;
  }
  if (!rc->summaries && !(rc->summaries = cJSON_CreateObject())) {
    cJSON_Delete(j);
    return AG_ERR_NOMEM;
  }
  cJSON_DeleteItemFromObjectCaseSensitive(rc->summaries, agent);
  cJSON_AddItemToObject(rc->summaries, agent, j);
  return AG_OK;
}

/* The agent's stored summary, if any, once its memory is back (the entries after it fold again). */
static int restore_agent_summary(const restore_ctx *rc, agent *a) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(rc->summaries, agent_id(a));
  int64_t upto = 0;
  const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "summary"));
  if (!text || ag_json_int_member(s, "upto", 0, AG_JSON_INT_MAX, &upto)) return AG_OK;
  return agent_set_summary(a, text, (size_t)upto);
}

/* A successful remember call's result and a reflection join the notes, in thread order. Only steps that
 * name one are parsed. */
static int restore_note(restore_ctx *rc, const char *json, size_t len) {
  if (!memmem(json, len, "\"remember\"", 10) && !memmem(json, len, "\"reflection\"", 12) &&
      !memmem(json, len, "\"memory-rated\"", 14))
    return AG_OK;
  cJSON *j = cJSON_ParseWithLength(json, len);
  const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "type"));
  const char *tool = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "tool"));
  const cJSON *result = cJSON_GetObjectItemCaseSensitive(j, "result");
  int note = type && tool && !strcmp(type, "tool-result") && !strcmp(tool, "remember") &&
             !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "error")) &&
             cJSON_IsString(cJSON_GetObjectItemCaseSensitive(result, "remembered"));
  int reflection = type && !strcmp(type, "reflection") && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "insights"));
  reflection |= type && !strcmp(type, "memory-rated") && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "ratings"));
  if ((note || reflection) && (rc->notes || (rc->notes = cJSON_CreateArray()))) {
    cJSON_AddItemToArray(rc->notes, j);
    return AG_OK;
  }
  cJSON_Delete(j);
  return AG_OK;
}

/* Whether step (a note or a reflection, not a rating) is agent a's; its after_seq into *after. */
static int note_of(const cJSON *step, const agent *a, uint64_t *after) {
  const char *who = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(step, "agent"));
  const cJSON *seq = cJSON_GetObjectItemCaseSensitive(step, "after_seq");
  if (!who || strcmp(who, agent_id(a)) || cJSON_GetObjectItemCaseSensitive(step, "ratings")) return 0;
  *after = cJSON_IsNumber(seq) && seq->valuedouble >= 0 ? (uint64_t)seq->valuedouble : UINT64_MAX; /* none: last */
  return 1;
}

/* One stored note or reflection of a back into its stream (an agent no longer in mode stream has none). */
static int restore_one_note(agent *a, const cJSON *step) {
  const cJSON *r = cJSON_GetObjectItemCaseSensitive(step, "result");
  int64_t at = 0;
  int e = AG_OK;
  if (!r) {
    ag_json_int_member(step, "at_ms", INT64_MIN, INT64_MAX, &at);
    e = agent_settings_of(a)->memory.mode == MEM_MODE_STREAM
            ? agent_memory_reflection(a, cJSON_GetObjectItemCaseSensitive(step, "insights"), at) : AG_OK;
  } else {
    double importance = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "importance"));
    ag_json_int_member(r, "at_ms", INT64_MIN, INT64_MAX, &at);
    e = agent_memory_note(a, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "remembered")),
                          isfinite(importance) ? importance : 3, at);
  }
  return e == AG_ERR_STATE ? AG_OK : e;
}

/* Agent a's stored memory (mems, n, borrowed: a takes its own references) with its notes and reflections where
 * they were live: a step made after message S (its after_seq) goes before a's first entry past S, since a
 * turn's message joins memory before the turn's steps and its reply after them. Then a's ratings, and the
 * count toward the next reflection: what joined the stream after the last one's insights, notes included,
 * as live. A stream rebuilt so equals the live one, in order (docs/memory.md "Where memories live"). */
static int restore_stream(restore_ctx *rc, agent *a, ag_msg **mems, size_t n) {
  const cJSON *step = rc->notes ? rc->notes->child : NULL;
  size_t reflected = 0; /* the stream's length after the last reflection, plus one; 0: none */
  uint64_t after;
  int e = AG_OK;
  for (size_t k = 0; k <= n && !e; k++) {
    for (; step && !e; step = step->next) {
      if (!note_of(step, a, &after)) continue;
      if (k < n && (!mems[k]->seq || after >= mems[k]->seq)) break;
      e = restore_one_note(a, step);
      if (!e && !cJSON_GetObjectItemCaseSensitive(step, "result")) reflected = agent_memory_stream(a)->n + 1;
    }
    if (k < n && !e) e = agent_memory_push(a, mems[k]);
  }
  for (step = rc->notes ? rc->notes->child : NULL; step && !e; step = step->next) {
    const char *who = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(step, "agent"));
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(step, "ratings");
    for (p = p && who && !strcmp(who, agent_id(a)) ? p->child : NULL; p; p = p->next)
      agent_memory_rate(a, (uint64_t)cJSON_GetNumberValue(cJSON_GetArrayItem(p, 0)),
                        cJSON_GetNumberValue(cJSON_GetArrayItem(p, 1)));
  }
  if (!e && reflected) agent_memory_recount(a, reflected - 1);
  return e;
}

static int restore_step_cb(const char *json, size_t len, void *arg) {
  restore_ctx *rc = arg;
  restore_spend(&rc->spent, json, len);
  int r = restore_summary(rc, json, len);
  if (!r) r = restore_note(rc, json, len);
  if (r) return r;
  return chat_inflight_step(&rc->inflight, json, len);
}

/* The messages of the turns left open, read with the rest (a turn still in an inbox is in no memory). */
static int restore_turn_msgs(restore_ctx *rc) {
  for (size_t i = 0; i < rc->inflight.n; i++) {
    ag_msg *m;
    int r = cache_load(rc, rc->inflight.turns[i].seq, &m);
    if (r == AG_ERR_NOT_FOUND) rc->inflight.turns[i].seq = 0; /* not stored: nothing to answer */
    else if (r) return r;
  }
  return AG_OK;
}

/* Appends agent to the ", "-separated names (cap bytes, *len used), once, ending with ", ..." when
 * they no longer fit. */
static void resumed_name(char *names, size_t cap, size_t *len, const char *agent) {
  char *at = strstr(names, agent);
  size_t n = strlen(agent);
  if (at && (at == names || at[-1] == ' ') && (at[n] == ',' || at[n] == '\0')) return; /* two turns of one agent */
  if (*len >= 3 && !strcmp(names + *len - 3, "...")) return; /* full already */
  if (*len + n + 2 + 5 < cap) *len += (size_t)snprintf(names + *len, cap - *len, "%s%s", *len ? ", " : "", agent);
  else *len += (size_t)snprintf(names + *len, cap - *len, "%s...", *len ? ", " : "");
}

/* The turns open when the chat was last left are run again, once, in the order they were decided
 * (docs/time.md "Resume after a crash"): a turn that was itself a re-run is given up with an llm-error,
 * not re-run forever. */
static void restore_rerun(chat_session *cs, restore_ctx *rc) {
  size_t n = 0, len = 0;
  char names[256] = "";
  for (size_t i = 0; i < rc->inflight.n; i++) {
    const chat_turn *t = &rc->inflight.turns[i];
    ag_msg *m = t->seq ? *cache_slot(&rc->cache, t->seq) : NULL;
    if (!t->rerun && m && world_rerun(cs->w, t->agent, m) == AG_OK) {
      n++;
      resumed_name(names, sizeof names, &len, t->agent);
      continue;
    }
    const char *why = t->rerun ? "interrupted again after it was re-run: not re-run twice"
                               : "its message or the agent is gone: not re-run";
    world_emit(cs->w, &(world_event){EV_LLM_ERROR, .u.llm_error = {t->agent, why, 0, 0, 0, ""}});
    world_emit(cs->w, &(world_event){EV_TURN_END, .u.turn_end = {t->agent, t->seq, 0, 0}});
  }
  /* One event for the whole resume, which every door prints (issue 23 item 6). */
  if (n) world_emit(cs->w, &(world_event){EV_TURNS_RESUMED, .u.resumed = {.replies = n, .agents = names}});
}

/* Where the chat's simulated time stands: stored with the chat, else (a chat written before that, a
 * branch, an import) its last message's, else the clock's start. */
static int chat_time(store_txn *t, restore_ctx *rc) {
  rc->sim_ms = world_sim_start(rc->cs->w);
  if (rc->chat.has_sim) {
    rc->sim_ms = rc->chat.sim_ms;
    return AG_OK;
  }
  if (!rc->last_seq) return AG_OK;
  store_message m;
  int r = store_message_get(t, rc->chat_id, rc->last_seq, &m);
  if (r == AG_ERR_NOT_FOUND) return AG_OK;
  if (r) return r;
  if (m.has_sim) rc->sim_ms = m.sim_ms;
  store_message_free(&m);
  return AG_OK;
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
  if ((r = chat_time(t, rc))) return r;
  chat_inflight_free(&rc->inflight); /* a read is not run twice, but stay restartable */
  cJSON_Delete(rc->notes);
  rc->notes = NULL;
  rc->spent = (llm_spend){0};
  cJSON_Delete(rc->summaries);
  rc->summaries = NULL;
  if ((r = store_thread_scan(t, rc->chat_id, restore_step_cb, rc))) return r;
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
  return restore_turn_msgs(rc);
}

int chat_session__restore(chat_session *cs, const char *chat_id, ag_errmsg *em) {
  int r = chat_session__sync_tracks(cs);
  if (r) return r;
  /* The chat is held before it is read (docs/decisions.md "One process per chat"). */
  store_lock *lock = NULL;
  if (!(cs->lock && strcmp(store_lock_chat(cs->lock), chat_id) == 0) &&
      (r = store_chat_lock(cs->st, chat_id, &lock, NULL, em)))
    return r;
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
  llm_client_set_spent(world_llm(cs->w), rc.spent);
  world_set_last_seq(cs->w, rc.last_seq > rc.chat.message_count ? rc.last_seq : rc.chat.message_count);
  if (world_is_virtual(cs->w)) world_time_rebase(cs->w, rc.sim_ms, rc.last_seq > 0); /* the clock is the chat's */
  cs->saved_sim = world_now(cs->w);
  for (size_t i = 0; i < cs->n_tracks; i++) {
    agent *a = cs->tracks[i].a;
    /* The summary first: entries after it that leave RAM while memory is pushed are folded into it. */
    if ((r = restore_agent_summary(&rc, a))) goto done;
    if ((r = restore_stream(&rc, a, rc.mems[i], rc.n_mems[i]))) goto done;
    if (rc.has_state[i]) {
      agent_set_turn_state(a, (turn_state){rc.states[i].turn_count, rc.states[i].notice_sent});
      agent_set_reply_counter(a, (size_t)rc.states[i].counter);
    }
    if ((r = agent_set_context(a, &rc.ctxs[i]))) goto done;
  }
  chat_session__mark_saved(cs, 0);
  for (size_t i = 0; i < cs->n_tracks; i++) cs->tracks[i].saved_state = rc.has_state[i];
  snprintf(cs->current, sizeof cs->current, "%s", rc.chat.id);
  cs->has_current = 1;
  cs->count = rc.chat.message_count;
  cs->created_at = rc.chat.created_at_ms;
  cs->live = 1;
  if (lock) {
    store_chat_unlock(cs->lock);
    cs->lock = lock;
    lock = NULL;
  }
  r = chat_session__set_title(cs, rc.chat.title);
  if (cs->rerun_turns) restore_rerun(cs, &rc);
done:
  store_chat_unlock(lock);
  if (rc.mems) restore_reset(&rc);
  else store_chat_free(&rc.chat);
  free(rc.mems);
  free(rc.n_mems);
  free(rc.states);
  free(rc.has_state);
  for (size_t i = 0; rc.ctxs && i < cs->n_tracks; i++) context_free(&rc.ctxs[i]);
  free(rc.ctxs);
  cJSON_Delete(rc.notes);
  return r;
}

void chat_session_rerun_turns(chat_session *cs, int on) { cs->rerun_turns = on; }

void chat_session_fresh_only(chat_session *cs, int on) { cs->fresh_only = on; }

int chat_session_resume(chat_session *cs, ag_errmsg *em) {
  if (!cs->has_current) return AG_OK;
  char id[STORE_ID_MAX];
  snprintf(id, sizeof id, "%s", cs->current);
  int rc = chat_session__restore(cs, id, em);
  if (rc != AG_ERR_STATE) return rc;
  /* Held by another process: this one takes a new chat rather than write into it. */
  if (em) *em = (ag_errmsg){""}; /* the holder is the door's to name (chat_session_passed_over) */
  return chat_session_new(cs, em);
}

const char *chat_session_passed_over(const chat_session *cs) { return cs->passed[0] ? cs->passed : NULL; }
