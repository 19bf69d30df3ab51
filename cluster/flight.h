/* Records sent to the stream and not yet back ("in flight"), in sending order: each keeps what it
 * needs to be sent again with the same de-duplication id (JetStream keeps one copy). The world is not
 * quiet while anything is in flight. Loop thread only. */
#ifndef AG_CLUSTER_FLIGHT_H
#define AG_CLUSTER_FLIGHT_H

#include <nats/nats.h>
#include <stddef.h>
#include <stdint.h>


typedef struct flight {
  char *id, *subject, *data;
  char *sig;        /* its signature (cluster/sign.h), sent as a header with every copy; NULL: unsigned */
  size_t len;
  int acked;
  uint64_t ack_seq; /* the stream seq the server gave it (or the copy it kept) */
  int64_t sent_ms;
} flight;

typedef struct flights {
  flight **v;
  size_t n, cap;
} flights;

/* Publishes data (taken: freed with the flight) on subject with de-duplication id id (copied) and
 * signature sig (copied; NULL: none) and keeps it in flight. A publish refused now is sent again by
 * flights_retry. */
int flights_add(flights *f, jsCtx *js, const char *id, const char *subject, char *data, size_t len, const char *sig);
flight *flights_find(const flights *f, const char *id);
void flights_remove(flights *f, flight *x);
/* The server's answer for id: flag 0 stored at seq, 1 a duplicate of seq, -1 failed (sent again soon). */
void flights_ack(flights *f, const char *id, uint64_t seq, int flag);
/* Forgets acknowledged records whose seq has been delivered (a duplicate comes back only once). */
void flights_settle(flights *f, uint64_t delivered);
/* Sends again, in order, what has waited for its acknowledgement longer than after_ms. */
void flights_retry(flights *f, jsCtx *js, int64_t now, int64_t after_ms);
size_t flights_count(const flights *f);
void flights_free(flights *f);

#endif
