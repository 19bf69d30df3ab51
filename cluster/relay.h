/* libnats calls back on its own threads (message delivery, publish acknowledgements) and the control
 * thread (cluster/control.c) works apart from the loop; a relay hands what they produce to the one
 * event loop, in order: a locked queue and a pipe the loop watches. Nothing else crosses threads. */
#ifndef AG_CLUSTER_RELAY_H
#define AG_CLUSTER_RELAY_H

#include <stddef.h>
#include <stdint.h>

struct event_base;

typedef enum relay_kind {
  RELAY_MSG = 1,      /* ptr: a natsMsg from the stream's consumer */
  RELAY_ACK = 2,      /* str: the de-duplication id; a: stream seq; flag: 1 duplicate, -1 failed */
  RELAY_LEASE = 3,    /* str: agent id; flag: 1 owned here now, 0 not */
  RELAY_CONSUMER = 4, /* a: the seq the new consumer starts at; str: its name; flag: -1 failed */
  RELAY_HOSTS = 5,    /* a: live hosts seen */
  RELAY_HOLDERS = 6   /* str: the agents some host holds now, each followed by '\n'; flag -1: unknown */
} relay_kind;

typedef struct relay_item {
  relay_kind kind;
  void *ptr;   /* owned by the item */
  char *str;   /* owned by the item (malloc) */
  uint64_t a;
  int flag;
} relay_item;

typedef struct relay relay;
/* fn(ud, it) runs on the loop for each item, in posting order, and owns what it holds; drop frees an
 * item never delivered. */
typedef void (*relay_fn)(void *ud, relay_item *it);

int relay_new(struct event_base *base, relay_fn fn, relay_fn drop, void *ud, relay **out);
/* On the loop, while other threads may still post: stops delivering, drops what is queued (through
 * drop, here), and from now on drops what is posted at once, on the posting thread. drop must then not
 * use ud (it may be gone). What the items hold is thus freed while the libraries that made them (libnats:
 * a message destroyed after nats_Close crashes) still run. */
void relay_close(relay *r);
/* Closes r if it is not, and frees it. Only once no other thread posts. */
void relay_free(relay *r);
/* From any thread: queues *it (the relay owns its pointers from now on, even on failure). */
int relay_post(relay *r, const relay_item *it);
/* From any thread: the items queued that the loop has not taken yet. */
size_t relay_pending(relay *r);

#endif
