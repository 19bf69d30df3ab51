/* The control thread of a process in a world spread over NATS: a second connection on libnats' own
 * threads for what libnats only does by blocking request and reply (JetStream management, key-value),
 * so the loop never waits. It keeps the agents' leases (docs/distributed.md "Ownership") and makes the
 * stream's consumer when the loop asks; results reach the loop through the relay. */
#ifndef AG_CLUSTER_CONTROL_H
#define AG_CLUSTER_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "cluster/link.h"
#include "cluster/relay.h"

typedef struct control control;

/* Where control_open says what it is waiting for: one line, without "agora: " (borrowed for the call). */
typedef struct control_notice {
  void (*fn)(void *ud, const char *line);
  void *ud;
} control_notice;

/* Connects (o borrowed for the call), makes sure of the stream (its last seq in *last) and, when hosting,
 * of the lease buckets. ids: the agents this process may own (copied; n may be 0). Posts to r (borrowed
 * for the control's life). Does not start the thread yet. While JetStream cannot answer (a cluster whose
 * servers are starting has no leader yet) it asks again for a while, and says so through notice at the
 * first refusal, so that the person does not wait in silence. */
int control_open(const cluster_opts *o, const char *world_id, const char *stream, const char *subjects,
                 const char *const *ids, size_t n, relay *r, uint64_t *last, control_notice notice, control **out,
                 ag_errmsg *em);
/* Starts the thread (leases, consumer requests). */
int control_start(control *c, ag_errmsg *em);
/* Asks for a new consumer delivering to deliver from seq on (replacing the old one). */
void control_want_consumer(control *c, const char *deliver, uint64_t seq);
/* Purges the records of a deleted chat from the stream: its messages, turn ends and events, and its
 * chat records but the last (the tombstone a process joining later honours). subject_prefix:
 * "agora.<world>.<chat>" (copied). */
void control_purge(control *c, const char *subject_prefix);
/* Asks which agents some host holds a lease on now: posted as RELAY_HOLDERS (str: their ids, each
 * followed by '\n'; flag -1 when the question failed). */
void control_want_holders(control *c);
/* Stops the thread, gives this process's leases back (so others take its agents at once), closes. */
void control_free(control *c);
/* This process's host id (for the lease values). */
const char *control_host_id(const control *c);

#endif
