/* The stream's order as read (see order.h). A consumer without acks delivers, in order, the records the
 * stream holds from its start seq on, numbering them 1, 2, ... (its consumer seq). So when the first
 * delivery of a consumer made from the next seq wanted is a later seq, the seqs skipped do not exist any
 * more: waiting for them locked late joiners out for ever (one deleted message of 36: "seq 31 of 36",
 * then exit). Any other jump may be a record lost between the server and here, which a new consumer
 * delivers again; so is a jump between consecutive deliveries of one consumer, since nats-server moves
 * a live consumer's cursor past the stream's last seq when a subject of the stream is purged (seen
 * here: a tombstone stored just before the purge of its chat was never delivered to a live host). */
#include "cluster/order.h"

#include <stdio.h>
#include <string.h>

order_verdict order_judge(const order *o, uint64_t seq, const char *consumer, uint64_t cseq, int asking) {
  if (seq <= o->delivered) return ORDER_AGAIN;
  if (seq == o->delivered + 1) return ORDER_NEXT;
  if (consumer && o->made[0] && !strcmp(consumer, o->made) && cseq == 1 && o->made_from == o->delivered + 1)
    return ORDER_GAP;
  /* A first delivery of a consumer whose making has not been reported yet: known in a moment. */
  if (asking && cseq == 1) return ORDER_WAIT;
  return ORDER_LOST;
}

void order_take(order *o, uint64_t seq, const char *consumer, uint64_t cseq) {
  o->delivered = seq;
  snprintf(o->last, sizeof o->last, "%s", consumer ? consumer : "");
  o->last_cseq = cseq;
}

void order_made(order *o, const char *name, uint64_t from) {
  snprintf(o->made, sizeof o->made, "%s", name ? name : "");
  o->made_from = from;
}
