/* A FIFO of deferred calls run from the event loop. Anything that must not run re-entrantly (bus
 * deliveries, the script provider's replies) goes through one of these, so it runs from the loop in
 * the order it was queued, deterministically. Calls queued while the queue runs wait for the next
 * round, which the loop reaches after checking its other events. */
#ifndef AG_DEFER_H
#define AG_DEFER_H

#include <stddef.h>
#include <stdint.h>

struct event_base;

typedef struct ag_defer ag_defer;
typedef void (*ag_defer_fn)(void *arg);
/* A queued call's place, to cancel it in O(1): the count of calls queued before it, plus one (0 names
 * no call). A world of a million agents has a million script steps queued at once, so cancelling by
 * scanning the queue made each finished call cost O(queue). */
typedef uint64_t ag_defer_ticket;

int ag_defer_new(struct event_base *base, ag_defer **out);
/* Drops pending calls without running them (their args are the caller's to free first). */
void ag_defer_free(ag_defer *d);
/* Queues fn(arg); arg is borrowed until fn runs or ag_defer_cancel removes it. *ticket (may be NULL)
 * names the call for ag_defer_cancel. */
int ag_defer_push(ag_defer *d, ag_defer_fn fn, void *arg, ag_defer_ticket *ticket);
/* Removes the call named by ticket if it is still queued, in O(1); returns 1 if it was, 0 when it has
 * run or was cancelled already, or ticket is 0 (so a stale ticket is harmless). */
int ag_defer_cancel(ag_defer *d, ag_defer_ticket ticket);
/* Calls waiting to run (cancelled ones not counted). O(1). */
size_t ag_defer_pending(const ag_defer *d);

#endif
