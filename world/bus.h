/* The world's publish/subscribe bus. Publishing never calls a subscriber re-entrantly: every delivery
 * is queued and dispatched from the event loop, in publish order. Subscribers sit in phases, so that
 * for each item the agents decide first, storage saves what they changed, and output shows it last. */
#ifndef AG_BUS_H
#define AG_BUS_H

#include <stddef.h>

#include "agents/msg.h"
#include "world/events.h"

struct event_base;

typedef enum bus_topic {
  BUS_MESSAGE = 1, /* payload: ag_msg * */
  BUS_EVENT = 2    /* payload: bus_event * */
} bus_topic;

typedef enum bus_phase {
  BUS_PHASE_AGENTS = 0,
  BUS_PHASE_STORE = 1,
  BUS_PHASE_OUTPUT = 2,
  BUS_PHASES = 3
} bus_phase;

/* A system event (docs/behaviour.md §7) on its way through the bus: its strings live in the same block. */
typedef struct bus_event {
  int refs;
  world_event ev;
} bus_event;

/* A new event with one reference: a copy of ev and of all it points to (one allocation; ev borrowed).
 * An llm-chunk's text ends at its first NUL. NULL when out of memory. */
bus_event *bus_event_new(const world_event *ev);
bus_event *bus_event_ref(bus_event *e);
void bus_event_unref(bus_event *e);

typedef struct bus bus;
/* payload is borrowed for the call; take a reference to keep it. */
typedef void (*bus_handler)(void *ud, bus_topic topic, void *payload);

int bus_new(struct event_base *base, bus **out);
/* Drops undelivered items. */
void bus_free(bus *b);
/* topics is a mask of bus_topic. ud is borrowed until bus_unsubscribe. *id identifies the subscription. */
int bus_subscribe(bus *b, int topics, bus_phase phase, bus_handler fn, void *ud, unsigned *id);
/* Safe from inside a handler: the subscriber gets nothing more. */
void bus_unsubscribe(bus *b, unsigned id);
/* Queue for delivery; the bus takes its own reference (the caller keeps its). */
int bus_publish_message(bus *b, ag_msg *m);
int bus_publish_event(bus *b, bus_event *e);
/* Items queued and not yet delivered, plus what the transport has in flight. */
size_t bus_pending(const bus *b);
/* Delivers what is queued now rather than on the loop's next pass (a no-op from inside a delivery or
 * an idle hook). For a check made between two loop callbacks: an item queued by a callback that ran
 * just before, in the same pass, is not "in flight". */
void bus_flush(bus *b);

/* Where published messages go. Without a transport (the default, the fast path) a message is queued
 * here and delivered in publish order. With one, bus_publish_keyed hands it to the transport, which
 * brings it back, in the transport's total order, through bus_deliver (docs/distributed.md). Events
 * stay in-process. ctx and the functions are borrowed until the transport is removed. */
typedef struct bus_transport {
  void *ctx;
  /* Sends m (borrowed: take a reference to keep it). key: a de-duplication id (NULL: none). */
  int (*send)(void *ctx, ag_msg *m, const char *key);
  /* Messages sent and not yet brought back. */
  size_t (*in_flight)(void *ctx);
} bus_transport;
/* t is copied; NULL returns to in-process delivery. */
void bus_set_transport(bus *b, const bus_transport *t);
int bus_has_transport(const bus *b);
/* Publishes m with de-duplication id key (ignored in-process; borrowed). */
int bus_publish_keyed(bus *b, ag_msg *m, const char *key);
/* Queues m for local delivery, bypassing the transport (the transport's way back). */
int bus_deliver(bus *b, ag_msg *m);

/* Called each time the queue has been drained empty: the place to finish work batched over the items
 * just delivered (the session commits them in one transaction). ud is borrowed until bus_off_idle.
 * Hooks run in the order of their slot, whatever the order they were registered in: frames go to
 * viewers first (they never wait for the disk), then records to the stream, then the commit. One hook
 * per slot at most (AG_ERR_STATE for a second one). */
typedef enum bus_idle_slot {
  BUS_IDLE_OUTPUT,  /* the output's batch (serve's event-stream frames) */
  BUS_IDLE_CLUSTER, /* records published to NATS */
  BUS_IDLE_STORE,   /* the session's group commit */
  BUS_IDLE_SLOTS
} bus_idle_slot;
typedef void (*bus_idle_fn)(void *ud);
int bus_on_idle(bus *b, bus_idle_slot slot, bus_idle_fn fn, void *ud);
void bus_off_idle(bus *b, bus_idle_fn fn, void *ud);

#endif
