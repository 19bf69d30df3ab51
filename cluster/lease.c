/* The leases of one host, renewed and taken in batches (see lease.h). */
#include "cluster/lease.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"

typedef struct lease {
  char *id;
  uint64_t rev;  /* 0: not ours */
  natsMsg *sent; /* a publish for it still without an answer (identity only: libnats owns it) */
  uint64_t got;  /* the answer: the key's new revision; 0: refused (another host's, or gone) */
  int in_round;  /* sent in the round now waiting */
} lease;

struct leases {
  lease *v;
  size_t n, owned;
  char prefix[300]; /* "$KV.<bucket>.": a key's subject is the prefix and the agent id */
  char stream[300]; /* KV_<bucket> */
  char filter[300]; /* "$KV.<bucket>.>" */
  jsCtx *js;
  kvStore *kv;
  lease_change_fn fn;
  void *ud;
  pthread_mutex_t mu; /* guards sent, got, in_round and answered: the answers come on libnats' thread */
  pthread_cond_t cv;
  size_t answered;
  size_t *pick; /* a round's scratch, n each: the leases of one batch */
  char *listed; /* and which keys hold a message (take) */
};

enum batch_kind { BATCH_RENEW, BATCH_CREATE, BATCH_GIVE_BACK };

static int lease_cmp(const void *a, const void *b) { return strcmp(((const lease *)a)->id, ((const lease *)b)->id); }

int leases_new(const char *bucket, const char *const *ids, size_t n, lease_change_fn fn, void *ud, leases **out) {
  leases *t = calloc(1, sizeof *t);
  if (!t) return -1;
  pthread_mutex_init(&t->mu, NULL);
  pthread_cond_init(&t->cv, NULL);
  t->fn = fn;
  t->ud = ud;
  snprintf(t->prefix, sizeof t->prefix, "$KV.%s.", bucket);
  snprintf(t->stream, sizeof t->stream, "KV_%s", bucket);
  snprintf(t->filter, sizeof t->filter, "$KV.%s.>", bucket);
  if (n && !(t->v = calloc(n, sizeof *t->v))) goto fail;
  if (n && (!(t->pick = calloc(n, sizeof *t->pick)) || !(t->listed = calloc(n, 1)))) goto fail;
  for (; t->n < n; t->n++)
    if (!(t->v[t->n].id = strdup(ids[t->n]))) goto fail;
  if (n) qsort(t->v, n, sizeof *t->v, lease_cmp); /* the answers find their key by bsearch */
  *out = t;
  return 0;
fail:
  leases_free(t, 0);
  return -1;
}

/* libnats' thread: an answer to one of the table's publishes. An answer that comes after its round
 * gave up on it only clears sent (the key was dropped then). */
static void on_answer(jsCtx *js, natsMsg *m, jsPubAck *pa, jsPubAckErr *pae, void *closure) {
  (void)js;
  leases *t = closure;
  const char *subject = natsMsg_GetSubject(m);
  size_t plen = strlen(t->prefix);
  lease key = {.id = (char *)(subject && strlen(subject) > plen ? subject + plen : "")};
  lease *l = t->n ? bsearch(&key, t->v, t->n, sizeof key, lease_cmp) : NULL;
  pthread_mutex_lock(&t->mu);
  if (l && l->sent == m) {
    l->sent = NULL;
    l->got = pa && !pae ? pa->Sequence : 0;
    if (l->in_round) t->answered++;
    pthread_cond_signal(&t->cv);
  }
  pthread_mutex_unlock(&t->mu);
  natsMsg_Destroy(m);
}

void leases_js_options(leases *t, jsOptions *o) {
  o->PublishAsync.AckHandler = on_answer;
  o->PublishAsync.AckHandlerClosure = t;
}

void leases_attach(leases *t, jsCtx *js, kvStore *kv) {
  t->js = js;
  t->kv = kv;
}

size_t leases_owned(const leases *t) { return t ? t->owned : 0; }

static void lease_set(leases *t, lease *l, uint64_t rev) {
  int was = l->rev != 0;
  l->rev = rev;
  if (was == (rev != 0)) return;
  t->owned += rev ? 1 : (size_t)-1;
  if (t->fn) t->fn(t->ud, l->id, rev != 0);
}

static int lease_publish(leases *t, lease *l, enum batch_kind kind, const char *host_id, long wait_ms) {
  char subject[600];
  snprintf(subject, sizeof subject, "%s%s", t->prefix, l->id);
  natsMsg *m = NULL;
  const char *data = kind == BATCH_GIVE_BACK ? NULL : host_id;
  if (natsMsg_Create(&m, subject, NULL, data, data ? (int)strlen(data) : 0) != NATS_OK) return -1;
  if (kind == BATCH_GIVE_BACK) natsMsgHeader_Set(m, "KV-Operation", "DEL"); /* what kvStore_Delete writes */
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = wait_ms; /* no answer by then: the handler is told so, and frees the message */
  if (kind == BATCH_CREATE) po.ExpectNoMessage = true;
  else po.ExpectLastSubjectSeq = l->rev; /* only our own revision is renewed or given back */
  pthread_mutex_lock(&t->mu);
  l->sent = m;
  l->in_round = 1;
  l->got = 0;
  pthread_mutex_unlock(&t->mu);
  natsMsg *own = m;
  if (js_PublishMsgAsync(t->js, &own, &po) == NATS_OK) return 0;
  pthread_mutex_lock(&t->mu);
  l->sent = NULL; /* refused at once: not the library's, no answer will come */
  l->in_round = 0;
  pthread_mutex_unlock(&t->mu);
  natsMsg_Destroy(own);
  return -1;
}

/* Publishes for the k leases in pick together, and waits up to wait_ms for all the answers. Each
 * lease's got is then its answer, 0 for a refusal or none. */
static void batch(leases *t, const size_t *pick, size_t k, enum batch_kind kind, const char *host_id, long wait_ms) {
  size_t sent = 0;
  pthread_mutex_lock(&t->mu);
  t->answered = 0;
  pthread_mutex_unlock(&t->mu);
  for (size_t i = 0; i < k; i++) sent += lease_publish(t, &t->v[pick[i]], kind, host_id, wait_ms) == 0;
  struct timespec until;
  ag_deadline_in(wait_ms, &until);
  pthread_mutex_lock(&t->mu);
  while (t->answered < sent && pthread_cond_timedwait(&t->cv, &t->mu, &until) == 0) {}
  for (size_t i = 0; i < k; i++) {
    lease *l = &t->v[pick[i]];
    if (l->sent) l->got = 0; /* no answer in time: the key is not ours to count on */
    l->in_round = 0;
  }
  pthread_mutex_unlock(&t->mu);
}

natsStatus leases_list_keys(leases *t, void (*each)(void *ud, const char *id), void *ud, jsErrCode *jerr) {
  jsOptions o;
  jsOptions_Init(&o);
  o.Stream.Info.SubjectsFilter = t->filter;
  jsStreamInfo *si = NULL;
  natsStatus s = js_GetStreamInfo(&si, t->js, t->stream, &o, jerr);
  const jsStreamStateSubjects *subs = s == NATS_OK ? si->State.Subjects : NULL;
  size_t plen = strlen(t->prefix);
  for (int i = 0; subs && i < subs->Count; i++)
    if (strlen(subs->List[i].Subject) > plen) each(ud, subs->List[i].Subject + plen);
  jsStreamInfo_Destroy(si);
  return s;
}

static void key_listed(void *ud, const char *id) {
  leases *t = ud;
  lease key = {.id = (char *)id};
  lease *l = bsearch(&key, t->v, t->n, sizeof key, lease_cmp);
  if (l) t->listed[l - t->v] = 1;
}

/* Takes free keys up to share: first, together, those with no message at all; then, one request each
 * and while the round has time, those with one (a delete marker is free: kvStore_Create knows). */
static void take(leases *t, const char *host_id, size_t share, size_t start, long wait_ms) {
  size_t *pick = t->pick;
  char *listed = t->listed;
  memset(listed, 0, t->n);
  if (leases_list_keys(t, key_listed, t, NULL) != NATS_OK) memset(listed, 1, t->n); /* every key may be held */
  size_t k = 0;
  for (size_t j = 0; j < t->n && t->owned + k < share; j++) {
    size_t i = (start + j) % t->n;
    if (!t->v[i].rev && !t->v[i].sent && !listed[i]) pick[k++] = i;
  }
  batch(t, pick, k, BATCH_CREATE, host_id, wait_ms);
  for (size_t i = 0; i < k; i++)
    if (t->v[pick[i]].got) lease_set(t, &t->v[pick[i]], t->v[pick[i]].got);
  int64_t until = ag_now_ms() + wait_ms;
  for (size_t j = 0; j < t->n && t->owned < share && ag_now_ms() < until; j++) {
    lease *l = &t->v[(start + j) % t->n];
    uint64_t rev = 0;
    if (!l->rev && !l->sent && listed[l - t->v] && kvStore_CreateString(&rev, t->kv, l->id, host_id) == NATS_OK)
      lease_set(t, l, rev);
  }
}

void leases_round(leases *t, const char *host_id, size_t share, size_t start, long wait_ms, int (*stop)(void *),
                  void *ud) {
  size_t *pick = t->pick, k = 0;
  if (!t->n) return;
  for (size_t i = 0; i < t->n; i++)
    if (t->v[i].rev) pick[k++] = i;
  batch(t, pick, k, BATCH_RENEW, host_id, wait_ms);
  for (size_t i = 0; i < k; i++) lease_set(t, &t->v[pick[i]], t->v[pick[i]].got);
  if (stop && stop(ud)) return;
  k = 0;
  for (size_t i = t->n; i-- > 0 && t->owned - k > share;)
    if (t->v[i].rev) pick[k++] = i;
  if (k) batch(t, pick, k, BATCH_GIVE_BACK, host_id, wait_ms);
  for (size_t i = 0; i < k; i++) lease_set(t, &t->v[pick[i]], 0); /* given back or not, no longer ours */
  if (t->owned < share && !(stop && stop(ud))) take(t, host_id, share, start % t->n, wait_ms);
}

int leases_free(leases *t, long wait_ms) {
  int away = 0;
  if (!t) return away;
  t->fn = NULL; /* leaving: nobody is told */
  size_t *pick = t->pick, k = 0;
  for (size_t i = 0; t->js && i < t->n; i++)
    if (t->v[i].rev) pick[k++] = i;
  if (k) batch(t, pick, k, BATCH_GIVE_BACK, "", wait_ms);
  for (size_t i = 0; i < k; i++) {
    away |= t->v[pick[i]].sent != NULL;
    lease_set(t, &t->v[pick[i]], 0);
  }
  /* Answers still due (MaxWait ends each) must not find the table gone. */
  int64_t until = ag_now_ms() + 2 * wait_ms + 1000;
  int due = 1;
  while (due && ag_now_ms() < until) {
    pthread_mutex_lock(&t->mu);
    due = 0;
    for (size_t i = 0; i < t->n; i++) due |= t->v[i].sent != NULL;
    if (due) {
      struct timespec ts;
      ag_deadline_in(50, &ts);
      pthread_cond_timedwait(&t->cv, &t->mu, &ts);
    }
    pthread_mutex_unlock(&t->mu);
  }
  if (due) return 1; /* libnats still owes an answer: the table stays, a small leak rather than a crash */
  for (size_t i = 0; i < t->n; i++) free(t->v[i].id);
  free(t->v);
  free(t->pick);
  free(t->listed);
  pthread_cond_destroy(&t->cv);
  pthread_mutex_destroy(&t->mu);
  free(t);
  return away;
}
