/* A chat's transcript in order (see transcript.h). The thread is read first — it is small beside the
 * messages — then each message is handed over followed by the events anchored after it. */
#include "chat/transcript.h"

#include "chat/inflight.h"
#include "chat/snapshot.h"
#include "common/clock.h"
#include "common/jsonnum.h"
#include "storage/store.h"

#include <stdlib.h>

typedef struct walk {
  chat_entry_fn fn;
  void *arg;
  const cJSON *next; /* the next thread step to hand over */
  int stopped;       /* fn said CHAT_STOP */
} walk;

/* Hands fn the thread steps anchored at or before seq, from w->next on (steps are in anchor order). */
static int steps_upto(walk *w, uint64_t seq) {
  while (w->next && !w->stopped) {
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(w->next, "type");
    chat_entry e = {NULL, EV_KIND_COUNT, NULL};
    if (!cJSON_IsString(type) || ev_kind_parse(type->valuestring, &e.kind) ||
        chat_thread_bookkeeping(type->valuestring)) {
      /* not a kind this version writes (snapshots are checked), or bookkeeping: nothing to show */
      w->next = w->next->next;
      continue;
    }
    const cJSON *after = cJSON_GetObjectItemCaseSensitive(w->next, "after_seq");
    int64_t a;
    if (!ag_json_int(after, 0, AG_JSON_INT_MAX, &a) && (uint64_t)a > seq) return AG_OK;
    cJSON *fields = cJSON_Duplicate(w->next, 1);
    if (!fields) return AG_ERR_NOMEM;
    cJSON_DeleteItemFromObjectCaseSensitive(fields, "type");
    cJSON_DeleteItemFromObjectCaseSensitive(fields, "after_seq");
    e.fields = fields;
    int rc = w->fn(&e, w->arg);
    cJSON_Delete(fields);
    w->next = w->next->next;
    if (rc == CHAT_STOP) w->stopped = 1;
    else if (rc) return rc;
  }
  return AG_OK;
}

/* Hands fn one message, then the steps anchored after it. */
static int message(walk *w, const ag_msg *m) {
  chat_entry e = {m, EV_KIND_COUNT, NULL};
  int rc = w->fn(&e, w->arg);
  if (rc == CHAT_STOP) w->stopped = 1;
  else if (rc) return rc;
  return steps_upto(w, m->seq);
}

/* ---- from the database ---- */

typedef struct stored {
  const char *chat_id;
  walk w;
  cJSON *thread;
  ag_errmsg *em;
} stored;

static int thread_row(const char *json, size_t len, void *arg) {
  cJSON *e = cJSON_ParseWithLength(json, len);
  if (e) cJSON_AddItemToArray((cJSON *)arg, e);
  return 0;
}

static int message_row(const store_message *m, void *arg) {
  walk *w = arg;
  ag_msg msg = {.refs = 1, .seq = m->seq, .sender = (char *)m->sender, .text = (char *)m->text,
                .kind = (ag_kind)m->kind, .ts_ms = m->ts_ms,
                .has_sim = m->has_sim, .sim_ms = m->sim_ms};
  int rc = message(w, &msg);
  return rc ? rc : w->stopped ? STORE_STOP : 0;
}

static int transcript_txn(store_txn *t, void *arg) {
  stored *s = arg;
  store_chat c;
  int rc = store_chat_get(t, s->chat_id, &c);
  if (rc == AG_ERR_NOT_FOUND) return ag_fail(s->em, rc, "no chat '%s' in the database", s->chat_id);
  if (rc) return rc;
  store_chat_free(&c);
  cJSON_Delete(s->thread); /* a read is not run twice, but stay restartable */
  if (!(s->thread = cJSON_CreateArray())) return AG_ERR_NOMEM;
  if ((rc = store_thread_scan(t, s->chat_id, thread_row, s->thread))) return rc;
  s->w.next = s->thread->child;
  s->w.stopped = 0;
  if ((rc = steps_upto(&s->w, 0)) || s->w.stopped) return rc;
  if ((rc = store_message_scan(t, s->chat_id, 1, message_row, &s->w)) || s->w.stopped) return rc;
  return steps_upto(&s->w, UINT64_MAX);
}

int chat_transcript_each(store *st, const char *chat_id, chat_entry_fn fn, void *arg, ag_errmsg *em) {
  stored s = {chat_id, {fn, arg, NULL, 0}, NULL, em};
  int rc = store_read(st, transcript_txn, &s, em);
  cJSON_Delete(s.thread);
  return rc;
}

typedef struct recent {
  const char *chat_id;
  uint64_t from_seq;
  walk w;
} recent;

static int messages_txn(store_txn *t, void *arg) {
  recent *r = arg;
  r->w.stopped = 0;
  return store_message_scan(t, r->chat_id, r->from_seq, message_row, &r->w);
}

int chat_messages_each(store *st, const char *chat_id, uint64_t from_seq, chat_entry_fn fn, void *arg,
                       ag_errmsg *em) {
  recent r = {chat_id, from_seq, {fn, arg, NULL, 0}}; /* no thread: next stays NULL */
  return store_read(st, messages_txn, &r, em);
}

typedef struct ranged {
  stored s;
  uint64_t from_seq;
} ranged;

static int ranged_txn(store_txn *t, void *arg) {
  ranged *r = arg;
  cJSON_Delete(r->s.thread); /* stay restartable */
  if (!(r->s.thread = cJSON_CreateArray())) return AG_ERR_NOMEM;
  int rc = store_thread_scan(t, r->s.chat_id, thread_row, r->s.thread);
  if (rc) return rc;
  /* the steps anchored before the first message asked for belong to the pages before it */
  const cJSON *e = r->s.thread->child;
  for (int64_t a; e && r->from_seq > 1; e = e->next)
    if (ag_json_int(cJSON_GetObjectItemCaseSensitive(e, "after_seq"), 0, AG_JSON_INT_MAX, &a) ||
        (uint64_t)a >= r->from_seq)
      break;
  r->s.w.next = e;
  r->s.w.stopped = 0;
  if (r->from_seq <= 1 && ((rc = steps_upto(&r->s.w, 0)) || r->s.w.stopped)) return rc;
  if ((rc = store_message_scan(t, r->s.chat_id, r->from_seq, message_row, &r->s.w)) || r->s.w.stopped) return rc;
  return steps_upto(&r->s.w, UINT64_MAX);
}

int chat_transcript_from(store *st, const char *chat_id, uint64_t from_seq, chat_entry_fn fn, void *arg,
                         ag_errmsg *em) {
  ranged r = {.s = {.chat_id = chat_id, .w = {fn, arg, NULL, 0}, .em = em}, .from_seq = from_seq};
  int rc = store_read(st, ranged_txn, &r, em);
  cJSON_Delete(r.s.thread);
  return rc;
}

/* ---- from a snapshot ---- */

int chat_snapshot_each(const cJSON *snap, chat_entry_fn fn, void *arg) {
  const cJSON *thread = cJSON_GetObjectItemCaseSensitive(snap, "thread");
  walk w = {fn, arg, cJSON_IsArray(thread) ? thread->child : NULL, 0};
  int rc = steps_upto(&w, 0);
  const cJSON *m;
  cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(snap, "messages")) {
    if (rc || w.stopped) return rc;
    ag_msg msg = {.refs = 1,
                  .seq = (uint64_t)cJSON_GetObjectItem(m, "seq")->valuedouble,
                  .sender = cJSON_GetObjectItem(m, "sender")->valuestring,
                  .text = cJSON_GetObjectItem(m, "text")->valuestring,
                  .kind = (ag_kind)ag_kind_parse(cJSON_GetObjectItem(m, "kind")->valuestring),
                  .ts_ms = ag_time_parse(cJSON_GetObjectItem(m, "ts")->valuestring)};
    rc = message(&w, &msg);
  }
  if (rc || w.stopped) return rc;
  return steps_upto(&w, UINT64_MAX);
}
