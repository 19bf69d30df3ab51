/* The control thread (see control.h). Leases: every agent has a key in the bucket agora-<world>-agents
 * whose value is its owner's host id; the bucket's TTL is the lease time, so a key not renewed in time
 * disappears and the next host to create it owns the agent. Hosts announce themselves in
 * agora-<world>-hosts the same way; each takes ceil(agents / hosts) and gives back what is above. */
#include "cluster/control.h"

#include "cluster/lease.h"
#include "common/buf.h"
#include "common/clock.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct control {
  natsConnection *nc;
  jsCtx *js;
  kvStore *agents, *hosts;
  relay *r;
  char host_id[40];
  char stream[128];
  char hosts_stream[300]; /* the hosts bucket's stream: KV_<bucket> */
  leases *leases;
  size_t n;
  long tick_ms, lease_ms;
  int hosting, listed;
  uint64_t hosts_seen;
  pthread_t th;
  int started;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop, ended; /* asked to end; the thread has ended */
  char *want_deliver; /* a consumer request, or NULL */
  uint64_t want_seq;
  char consumer[64];  /* the current consumer, deleted when replaced */
  char **purges;      /* subject prefixes of deleted chats to purge */
  size_t n_purges;
  int want_holders;
};

static int open_kv(control *c, const char *name, int replicas, long ttl_ms, kvStore **out, ag_errmsg *em) {
  kvConfig cfg;
  kvConfig_Init(&cfg);
  cfg.Bucket = name;
  cfg.History = 1;
  cfg.TTL = (int64_t)ttl_ms * 1000000; /* ns, like the stream's MaxAge it becomes */
  cfg.Replicas = replicas;
  char why[256];
  natsStatus s = js_CreateKeyValue(out, c->js, &cfg);
  if (s != NATS_OK) {
    link_error(s, why, sizeof why);
    if (js_KeyValue(out, c->js, name) == NATS_OK) return AG_OK; /* made by another host meanwhile */
    return ag_fail(em, AG_ERR_INVALID, "lease bucket %s: %s", name, why);
  }
  return AG_OK;
}

static void post_lease(void *ud, const char *id, int owned);

static void host_id_make(char *out, size_t cap) {
  unsigned char b[8] = {0};
  FILE *f = fopen("/dev/urandom", "rb");
  if (!f || fread(b, 1, sizeof b, f) != sizeof b) {
    unsigned long x = (unsigned long)time(NULL) ^ ((unsigned long)clock() << 16);
    memcpy(b, &x, sizeof b < sizeof x ? sizeof b : sizeof x);
  }
  if (f) fclose(f);
  snprintf(out, cap, "h%02x%02x%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]);
}

int control_open(const cluster_opts *o, const char *world_id, const char *stream, const char *subjects,
                 const char *const *ids, size_t n, relay *r, uint64_t *last, control_notice notice, control **out,
                 ag_errmsg *em) {
  control *c = calloc(1, sizeof *c);
  if (!c) return AG_ERR_NOMEM;
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  c->r = r;
  c->hosting = o->hosting;
  c->listed = o->agents != NULL;
  c->tick_ms = o->lease_ms / 3 > 50 ? o->lease_ms / 3 : 50;
  c->lease_ms = o->lease_ms;
  snprintf(c->stream, sizeof c->stream, "%s", stream);
  host_id_make(c->host_id, sizeof c->host_id);
  char name[256];
  int rc = AG_ERR_NOMEM;
  snprintf(name, sizeof name, "agora-%s-agents", world_id);
  if (leases_new(name, ids, n, post_lease, c, &c->leases)) goto fail;
  c->n = n;
  snprintf(name, sizeof name, "agora %s control", world_id);
  if ((rc = link_connect(o, name, &c->nc, em))) goto fail;
  jsOptions jo;
  jsOptions_Init(&jo);
  leases_js_options(c->leases, &jo);
  if (natsConnection_JetStream(&c->js, c->nc, &jo) != NATS_OK) {
    rc = AG_ERR_NOMEM;
    goto fail;
  }
  /* A cluster that has just started elects its JetStream leader for a few seconds: connected, the
   * stream and buckets are asked for again, 41 times 250 ms apart (this is set-up; the loop is not
   * running). Each refusal takes as long as the server does to give it: with one node of three up, about
   * 1 s, so 40 s in all, which a person once spent looking at nothing. So the first question waits 1 s,
   * not 5, and its refusal is said at once. */
  for (int tries = 0;; tries++) {
    rc = link_stream(c->js, stream, subjects, o->replicas, tries ? 0 : 1000, last, em);
    snprintf(name, sizeof name, "agora-%s-agents", world_id);
    if (!rc && c->hosting && !c->agents) rc = open_kv(c, name, o->replicas, o->lease_ms, &c->agents, em);
    snprintf(name, sizeof name, "agora-%s-hosts", world_id);
    snprintf(c->hosts_stream, sizeof c->hosts_stream, "KV_%s", name);
    if (!rc && c->hosting && !c->hosts) rc = open_kv(c, name, o->replicas, o->lease_ms, &c->hosts, em);
    if (!rc || tries == 40) break;
    if (!tries) {
      char line[sizeof em->text + 512];
      snprintf(line, sizeof line, "waiting for JetStream at %s (its servers may be starting): %s", o->url,
               em ? em->text : "no answer");
      if (notice.fn) notice.fn(notice.ud, line);
    }
    nats_Sleep(250);
  }
  if (rc) goto fail;
  leases_attach(c->leases, c->js, c->agents);
  *out = c;
  return AG_OK;
fail:
  control_free(c);
  return rc;
}

const char *control_host_id(const control *c) { return c->host_id; }

static void post_lease(void *ud, const char *id, int owned) {
  control *c = ud;
  char *s = strdup(id);
  if (s) relay_post(c->r, &(relay_item){RELAY_LEASE, NULL, s, 0, owned});
}

/* How many hosts that take a share are alive (each heartbeats its key); at least 1 (this one). The keys
 * are the subjects of the bucket's stream that hold a message: one request, where listing the keys
 * would make a consumer. A host with --agents has no key: counted, it shrank the shares, and agents
 * that only the others may take were left with no host (a hang) when it held fewer than a share. */
static uint64_t hosts_alive(control *c) {
  kvStore_PutString(NULL, c->hosts, c->host_id, "1");
  uint64_t n = c->hosts_seen ? c->hosts_seen : 1;
  jsStreamInfo *si = NULL;
  if (js_GetStreamInfo(&si, c->js, c->hosts_stream, NULL, NULL) == NATS_OK)
    n = si->State.NumSubjects > 0 ? (uint64_t)si->State.NumSubjects : 1;
  jsStreamInfo_Destroy(si);
  if (n != c->hosts_seen) relay_post(c->r, &(relay_item){RELAY_HOSTS, NULL, NULL, n, 0});
  c->hosts_seen = n;
  return n;
}

/* 1 once control_free asked the thread to end: a round stops between requests. With the servers gone
 * each request waits for its timeout, and a round of a hundred kept a stopping host for many minutes. */
static int stopping(control *c) {
  pthread_mutex_lock(&c->mu);
  int stop = c->stop;
  pthread_mutex_unlock(&c->mu);
  return stop;
}

static int stopping_ud(void *ud) { return stopping(ud); }

/* One round: renew what is ours, give back what is above the share, take free agents up to it. The
 * search starts at a place of its own per host so that hosts starting together rarely collide. */
static void lease_round(control *c) {
  if (!c->n) return;
  size_t share = c->n;
  if (!c->listed) {
    uint64_t hosts = hosts_alive(c);
    share = (size_t)((c->n + hosts - 1) / hosts);
  }
  size_t start = (size_t)strtoull(c->host_id + 1 + 8, NULL, 16) % c->n;
  leases_round(c->leases, c->host_id, share, start, c->lease_ms / 2, stopping_ud, c);
}

static void consumer_round(control *c, char *deliver, uint64_t seq) {
  ag_errmsg em = {""};
  char name[64] = "";
  if (c->consumer[0]) js_DeleteConsumer(c->js, c->stream, c->consumer, NULL, NULL);
  c->consumer[0] = '\0';
  int rc = link_consumer(c->js, c->stream, deliver, seq, c->tick_ms * 3 > 1000 ? 1000 : c->tick_ms * 3, name,
                         sizeof name, &em);
  if (!rc) snprintf(c->consumer, sizeof c->consumer, "%s", name);
  relay_post(c->r, &(relay_item){RELAY_CONSUMER, NULL, rc ? NULL : strdup(name), seq, rc ? -1 : 0});
  free(deliver);
}

/* A deleted chat's records leave the stream, so that a process joining later neither replays nor
 * stores them; the last chat record stays: the tombstone (published before the purge is asked for). */
static void purge_round(control *c, char *prefix, long wait_ms) {
  static const char *const tokens[] = {"msg", "turn", "evt", "rec"};
  char filter[256];
  for (size_t i = 0; i < sizeof tokens / sizeof *tokens; i++) {
    jsOptions o;
    jsOptions_Init(&o);
    snprintf(filter, sizeof filter, "%s.%s", prefix, tokens[i]);
    o.Stream.Purge.Subject = filter;
    o.Stream.Purge.Keep = !strcmp(tokens[i], "rec");
    o.Wait = wait_ms; /* 0: the context's */
    js_PurgeStream(c->js, c->stream, &o, NULL); /* one that fails leaves records a late joiner skips */
  }
  free(prefix);
}

typedef struct holders {
  ag_buf list; /* "id\n" per agent */
  int full;    /* an id did not fit: the answer is unknown */
} holders;

static void holder_add(void *ud, const char *id) {
  holders *h = ud;
  h->full |= ag_buf_printf(&h->list, "%s\n", id) != 0;
}

/* The agents with a key in the lease bucket (leases_list_keys). */
static void holders_round(control *c) {
  holders h = {.full = 0};
  ag_buf_init(&h.list, 16u << 20);
  jsErrCode jerr = 0;
  natsStatus s = leases_list_keys(c->leases, holder_add, &h, &jerr);
  char *list = h.full ? NULL : ag_buf_take(&h.list);
  ag_buf_free(&h.list);
  /* No bucket: no host has ever held an agent of this world. */
  int known = s == NATS_OK || s == NATS_NOT_FOUND || jerr == JSStreamNotFoundErr;
  relay_post(c->r, &(relay_item){RELAY_HOLDERS, NULL, list, 0, known && list ? 0 : -1});
}

static void *control_main(void *arg) {
  control *c = arg;
  pthread_mutex_lock(&c->mu);
  while (!c->stop) {
    char *deliver = c->want_deliver, *purge = c->n_purges ? c->purges[--c->n_purges] : NULL;
    uint64_t seq = c->want_seq;
    int holders = c->want_holders;
    c->want_deliver = NULL;
    c->want_holders = 0;
    pthread_mutex_unlock(&c->mu);
    if (deliver) consumer_round(c, deliver, seq);
    if (purge) purge_round(c, purge, 0);
    if (holders) holders_round(c);
    if (c->hosting) lease_round(c);
    pthread_mutex_lock(&c->mu);
    if (c->stop || c->want_deliver || c->n_purges || c->want_holders) continue;
    struct timespec ts;
    ag_deadline_in(c->tick_ms, &ts);
    pthread_cond_timedwait(&c->cv, &c->mu, &ts);
  }
  c->ended = 1;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

int control_start(control *c, ag_errmsg *em) {
  if (pthread_create(&c->th, NULL, control_main, c)) return ag_fail(em, AG_ERR_NOMEM, "cannot start a thread");
  c->started = 1;
  return AG_OK;
}

void control_want_consumer(control *c, const char *deliver, uint64_t seq) {
  char *d = strdup(deliver);
  if (!d) return;
  pthread_mutex_lock(&c->mu);
  free(c->want_deliver);
  c->want_deliver = d;
  c->want_seq = seq;
  pthread_cond_signal(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

void control_purge(control *c, const char *subject_prefix) {
  char *p = strdup(subject_prefix);
  pthread_mutex_lock(&c->mu);
  char **v = p ? realloc(c->purges, (c->n_purges + 1) * sizeof *v) : NULL;
  if (v) c->purges = v, v[c->n_purges++] = p, p = NULL;
  pthread_cond_signal(&c->cv);
  pthread_mutex_unlock(&c->mu);
  free(p); /* out of memory: the chat's records stay (late joiners skip them) */
}

void control_want_holders(control *c) {
  pthread_mutex_lock(&c->mu);
  c->want_holders = 1;
  pthread_cond_signal(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

/* Ends the thread, waiting at most wait_ms for it to finish what it does. A request it still waits on
 * then (the server unresponsive) is given up by closing the connection, which libnats answers at once
 * with NATS_CONNECTION_CLOSED: a join would wait for libnats' own timeout, 5 s per request. */
static void control_stop(control *c, long wait_ms) {
  struct timespec until;
  ag_deadline_in(wait_ms, &until);
  pthread_mutex_lock(&c->mu);
  c->stop = 1;
  pthread_cond_broadcast(&c->cv);
  while (!c->ended && pthread_cond_timedwait(&c->cv, &c->mu, &until) == 0) {}
  int ended = c->ended;
  pthread_mutex_unlock(&c->mu);
  if (!ended) natsConnection_Close(c->nc);
  pthread_join(c->th, NULL);
}

void control_free(control *c) {
  if (!c) return;
  /* The leaving runs on the world's loop (cluster_free): with the server gone, the connection closes
   * first, so that the thread's request and the leaving ones below fail at once rather than each
   * waiting for libnats' timeout (5 s); with it there, each waits at most half the lease time, as the
   * keys' give-back does. */
  long leave_ms = c->lease_ms / 2 > 0 ? c->lease_ms / 2 : 1;
  if (c->nc && natsConnection_Status(c->nc) != NATS_CONN_STATUS_CONNECTED) natsConnection_Close(c->nc);
  if (c->started) control_stop(c, c->lease_ms); /* a step of a round ends within it; then keys expire anyway */
  /* A chat deleted just before leaving is still purged (its tombstone is in the stream already). */
  while (c->n_purges && c->js) purge_round(c, c->purges[--c->n_purges], leave_ms);
  /* The keys go back together; with the server away they expire by themselves, and so does the host's. */
  int away = leases_free(c->leases, leave_ms);
  if (c->hosts && !away) kvStore_Delete(c->hosts, c->host_id);
  jsOptions o;
  jsOptions_Init(&o);
  o.Wait = leave_ms; /* not deleted: the server deletes an ephemeral consumer nobody reads */
  if (c->consumer[0] && c->js) js_DeleteConsumer(c->js, c->stream, c->consumer, &o, NULL);
  free(c->want_deliver);
  for (size_t i = 0; i < c->n_purges; i++) free(c->purges[i]);
  free(c->purges);
  kvStore_Destroy(c->agents);
  kvStore_Destroy(c->hosts);
  jsCtx_Destroy(c->js);
  if (c->nc) natsConnection_Close(c->nc);
  natsConnection_Destroy(c->nc);
  pthread_cond_destroy(&c->cv);
  pthread_mutex_destroy(&c->mu);
  free(c);
}
