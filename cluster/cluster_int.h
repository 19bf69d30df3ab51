/* The inside of a world on NATS (cluster.h), shared by its files: cluster.c delivers what the stream
 * brings, cluster_send.c publishes. Nothing outside cluster/ includes this. */
#ifndef AG_CLUSTER_INT_H
#define AG_CLUSTER_INT_H

#include "cluster/cluster.h"
#include "cluster/control.h"
#include "cluster/flight.h"
#include "cluster/order.h"
#include "cluster/sign.h"
#include "cluster/wire.h"
#include "common/ring.h"
#include "storage/store.h"

#include <event2/event.h>

typedef struct idset {
  char (*v)[WIRE_ID_MAX];
  size_t n;
} idset;

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
  order ord;          /* the last stream seq handled (ord.delivered) and the consumers that bring them */
  uint64_t catch_up;  /* the stream's last seq when we joined */
  int ready;          /* caught up: agents may answer here */
  int asking;         /* a new consumer was asked for and has not come */
  int64_t heard_ms;   /* when the consumer last said anything (message or heartbeat) */
  int64_t record_ms;  /* when the last record was delivered */
  struct event *tick;
  char chat[WIRE_ID_MAX];
  uint64_t count;     /* messages of the chat delivered: the next one's seq is count + 1 */
  idset old;          /* chats left behind: their late records are ignored everywhere */
  idset dead;         /* chats deleted (a tombstone in the stream): no record brings them back */
  held *held;         /* sorted by id */
  size_t n_held, n_local;
  flights fl;
  ag_ring backlog;    /* of natsMsg *: deliveries waiting for the bus to drain before a chat switch */
  void (*on_chat)(void *ud, const char *chat);
  void *on_chat_ud;
  void (*on_record)(void *ud, const char *chat, const char *title, int64_t created_ms);
  void *on_record_ud;
  void (*on_notice)(void *ud, const char *line);
  void *on_notice_ud;
  uint64_t n_sent, n_events, n_refused;
  char nonce[STORE_ID_MAX];
  sign_key *key;      /* AGORA_NATS_SIGNING_KEY: records are signed and checked; NULL: neither */
  int64_t progress_ms; /* when a record last took effect (the holders are asked about after a silence) */
  int64_t holders_ms;  /* when they were last asked about */
  char *waiting_note;  /* the agents last said to have no host */
  int held_changed;    /* a host says which agents it holds when that changes */
};

/* 1 when id is in s; adds id to s (0 out of memory). */
int cluster__idset_has(const idset *s, const char *id);
int cluster__idset_add(idset *s, const char *id);
/* A line for the person running this process (stderr unless cluster_on_notice says otherwise, or nowhere
 * with cluster_opts.quiet). */
void cluster__notice(cluster *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cluster__held_cmp(const void *a, const void *b);
held *cluster__held_find(const cluster *c, const char *id);
/* The world's hooks (world_cluster, bus_transport): see world.h and bus.h. */
int cluster__is_local(void *ctx, const char *id);
int cluster__send(void *ctx, ag_msg *m, const char *key);
size_t cluster__in_flight(void *ctx);
int cluster__turn_end(void *ctx, const char *agent_id, uint64_t trigger, size_t counter);
void cluster__report(void *ctx, const world_event *ev);
/* Publishes rec on its subject with de-duplication key (NULL: one of this process's own), signed when
 * the world has a key. */
int cluster__send_record(cluster *c, const wire_record *rec, const char *key);

#endif
