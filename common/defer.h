/* A FIFO of deferred calls run from the event loop. Anything that must not run re-entrantly (bus
 * deliveries, the script provider's replies) goes through one of these, so it runs from the loop in
 * the order it was queued, deterministically. Calls queued while the queue runs wait for the next
 * round, which the loop reaches after checking its other events. */
#ifndef AG_DEFER_H
#define AG_DEFER_H

#include <stddef.h>

struct event_base;

typedef struct ag_defer ag_defer;
typedef void (*ag_defer_fn)(void *arg);

int ag_defer_new(struct event_base *base, ag_defer **out);
/* Drops pending calls without running them (their args are the caller's to free first). */
void ag_defer_free(ag_defer *d);
/* Queues fn(arg); arg is borrowed until fn runs or ag_defer_cancel removes it. */
int ag_defer_push(ag_defer *d, ag_defer_fn fn, void *arg);
/* Removes every pending call whose arg is arg (e.g. a cancelled call); returns how many. */
size_t ag_defer_cancel(ag_defer *d, void *arg);
/* Calls waiting to run. */
size_t ag_defer_pending(const ag_defer *d);

#endif
