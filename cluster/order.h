/* The stream's order as a process reads it (docs/distributed.md "Order without gaps"): which delivery
 * comes next, which is a copy already handled, which shows that records were lost on the way (a new
 * consumer is asked for), and which shows that the stream itself no longer holds some seqs (a message
 * deleted or a chat purged: a consumer made from the first of them went past them, so the gap is
 * skipped and named). Pure: no
 * I/O, so every case is tested directly (tests/test_cluster_wire.c). */
#ifndef AG_CLUSTER_ORDER_H
#define AG_CLUSTER_ORDER_H

#include <stdint.h>

#define ORDER_NAME_MAX 64

typedef struct order {
  uint64_t delivered;                /* the last stream seq handled */
  char made[ORDER_NAME_MAX];         /* the consumer made last ("" before one is known) */
  uint64_t made_from;                /* the stream seq it was asked to start at */
  char last[ORDER_NAME_MAX];         /* the consumer of the last delivery handled */
  uint64_t last_cseq;                /* its consumer seq */
} order;

typedef enum order_verdict {
  ORDER_AGAIN = 1, /* seq already handled: skip it */
  ORDER_NEXT,      /* the next seq: handle it */
  ORDER_GAP,       /* the first of a consumer made from the next seq, later than it: the stream has
                    * nothing in between: handle it */
  ORDER_LOST,      /* later than the next, and something may have been lost: ask for a new consumer */
  ORDER_WAIT       /* later than the next, from a consumer not known yet: wait until it is */
} order_verdict;

/* What to do with a delivery of stream seq seq by consumer (its name, may be NULL) at consumer seq
 * cseq. asking: a new consumer was asked for and has not been made yet. */
order_verdict order_judge(const order *o, uint64_t seq, const char *consumer, uint64_t cseq, int asking);
/* Seq was handled (ORDER_NEXT or ORDER_GAP). */
void order_take(order *o, uint64_t seq, const char *consumer, uint64_t cseq);
/* A consumer (name copied) was made delivering from stream seq from on. */
void order_made(order *o, const char *name, uint64_t from);

#endif
