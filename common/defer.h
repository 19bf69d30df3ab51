/* A FIFO of deferred calls run from the event loop. Anything that must not run re-entrantly (bus
 * deliveries, the script provider's replies) goes through one of these, so it runs from the loop in
 * the order it was queued, deterministically. Calls queued while the queue runs wait for the next
 * round, which the loop reaches after checking its other events.
 *
 * A round runs at most AG_DEFER_BATCH calls, then lets the loop run the other events that are ready
 * (another queue's round, I/O) before the next batch. A world of a million scripted agents queues a
 * million replies at once: run in one round, each reply's message and events waited on the bus behind
 * all the others (~360 MiB, cold again by the time they were delivered); in batches, each batch's
 * replies are delivered and freed while they are still in the caches, and the next batch reuses that
 * memory (bench_million: 2.4 -> 1.8 µs a reply at a million agents, docs/decisions.md). */
#ifndef AG_DEFER_H
#define AG_DEFER_H

#include <stddef.h>
#include <stdint.h>

struct event_base;

/* Calls run per round at most (see above): big enough that the loop's own cost per round is noise,
 * small enough that what a batch of replies allocates stays in the caches. */
#define AG_DEFER_BATCH 64

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
/* 1 while a queue of the calling thread is part-way through a long run: its last round stopped at
 * AG_DEFER_BATCH with calls left, which the next rounds run. A saver asks it before committing: what
 * those rounds bring (a fan-out's replies) can join one commit instead of one commit a batch. */
int ag_defer_batching(void);

#endif
