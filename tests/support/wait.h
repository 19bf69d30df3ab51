/* The tests' one clock and their waits on observed progress: a case that waits polls what it waits for
 * (a line printed, a count reached, a file grown) against a deadline, never sleeps a guessed time. The
 * deadlines stretch on slow builds (sanitizers) so that a slow machine is never a failure. */
#ifndef AG_TEST_WAIT_H
#define AG_TEST_WAIT_H

#include <stddef.h>

/* Monotonic time: milliseconds and seconds. */
long long now_ms(void);
double now_s(void);

/* How many times longer than a plain build this one runs its waits: AGORA_TEST_BUDGET (a number from 1
 * to 100) when set, else 4 under AddressSanitizer, 8 under ThreadSanitizer, 1 otherwise. */
int wait_budget_factor(void);
/* ms times wait_budget_factor(): the deadline a poll loop gives itself. */
long wait_budget_ms(long ms);

/* Sleeps ms (resumed after a signal): the pause between two polls of a wait, never the wait itself. */
void wait_nap_ms(long ms);

/* Polls done(arg) every few milliseconds until it returns non-zero (then 1) or wait_budget_ms(ms) has
 * passed (then 0). */
int wait_until(int (*done)(void *arg), void *arg, long ms);
/* The same, polling every every_ms: for a done() that is costly (a process run, an HTTP request). */
int wait_until_every(int (*done)(void *arg), void *arg, long ms, long every_ms);
/* wait_until for a number to grow: until count(obj) is at least n. */
int wait_count(size_t (*count)(void *obj), void *obj, size_t n, long ms);

#endif
