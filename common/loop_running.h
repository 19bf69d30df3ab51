/* Whether a libevent loop is running now (the caller is inside one of its callbacks). libevent has no
 * public query: a nested event_base_loop is refused with a "reentrant invocation" warning on stderr, and
 * event_base_get_running_event dereferences NULL outside a callback (2.1.12). What a running loop does
 * have is a cached time: it is set while callbacks run and cleared when the loop stops. */
#ifndef AG_LOOP_RUNNING_H
#define AG_LOOP_RUNNING_H

struct event_base;

/* 1 when base is running its callbacks (the caller is one of them, on base's thread), else 0. Prints
 * nothing and changes nothing. A loop made with EVENT_BASE_FLAG_NO_CACHE_TIME keeps no cached time and
 * always answers 0: a caller keeps its own guard for the -1 of a nested event_base_loop. */
int ag_loop_running(struct event_base *base);

#endif
