/* The FIFO ring of common/ring.h: order across growth and wrap-around, in-place edits, popping into
 * nothing, reuse after free. */
#include <stdint.h>

#include "common/error.h"
#include "common/ring.h"
#include "support/suite.h"
#include "support/unit.h"

static void fifo_order_across_growth_and_wrap(void) {
  ag_ring r;
  ag_ring_init(&r, sizeof(int), 3); /* rounded up to 4 */
  CHECK_INT(ag_ring_len(&r), 0);
  CHECK(ag_ring_at(&r, 0) == NULL);
  int v, next_in = 0, next_out = 0;
  /* Push three, pop two, repeatedly: the head walks round the slots while the ring grows. */
  for (int round = 0; round < 50; round++) {
    for (int k = 0; k < 3; k++, next_in++) CHECK_INT(ag_ring_push(&r, &next_in), AG_OK);
    for (int k = 0; k < 2; k++) {
      CHECK_INT(ag_ring_pop(&r, &v), 1);
      CHECK_INT(v, next_out);
      next_out++;
    }
  }
  CHECK_INT(ag_ring_len(&r), 50);
  CHECK(r.cap >= 50 && (r.cap & (r.cap - 1)) == 0);
  for (size_t i = 0; i < ag_ring_len(&r); i++) CHECK_INT(*(int *)ag_ring_at(&r, i), next_out + (int)i);
  CHECK(ag_ring_at(&r, 50) == NULL);
  while (ag_ring_pop(&r, &v)) CHECK_INT(v, next_out++);
  CHECK_INT(next_out, next_in);
  CHECK_INT(ag_ring_pop(&r, &v), 0);
  ag_ring_free(&r);
}

/* Growth while the queued items wrap past the end of the slots keeps their order. */
static void grow_when_wrapped(void) {
  ag_ring r;
  ag_ring_init(&r, sizeof(uint64_t), 4);
  uint64_t v;
  for (uint64_t i = 0; i < 4; i++) CHECK_INT(ag_ring_push(&r, &i), AG_OK);
  CHECK_INT(ag_ring_pop(&r, &v), 1);
  CHECK_INT(ag_ring_pop(&r, &v), 1);
  for (uint64_t i = 4; i < 7; i++) CHECK_INT(ag_ring_push(&r, &i), AG_OK); /* 2 wrap, the 3rd grows */
  CHECK_INT(r.cap, 8);
  for (uint64_t want = 2; want < 7; want++) {
    CHECK_INT(ag_ring_pop(&r, &v), 1);
    CHECK_INT(v, want);
  }
  ag_ring_free(&r);
}

typedef struct item {
  void (*fn)(void);
  void *arg;
} item;

static void edits_in_place_and_pop_into_nothing(void) {
  ag_ring r;
  ag_ring_init(&r, sizeof(item), 0);
  int a, b;
  item x = {edits_in_place_and_pop_into_nothing, &a}, y = {edits_in_place_and_pop_into_nothing, &b}, out;
  CHECK_INT(ag_ring_push(&r, &x), AG_OK);
  CHECK_INT(ag_ring_push(&r, &y), AG_OK);
  CHECK_INT(ag_ring_push(&r, &x), AG_OK);
  ((item *)ag_ring_at(&r, 1))->fn = NULL; /* what defer does to a cancelled call */
  CHECK_INT(ag_ring_pop(&r, NULL), 1);
  CHECK_INT(ag_ring_pop(&r, &out), 1);
  CHECK(out.fn == NULL && out.arg == &b);
  CHECK_INT(ag_ring_pop(&r, &out), 1);
  CHECK(out.fn != NULL && out.arg == &a);
  ag_ring_free(&r);
  /* Reusable after free: the first push allocates again. */
  CHECK_INT(ag_ring_push(&r, &y), AG_OK);
  CHECK_INT(ag_ring_len(&r), 1);
  ag_ring_free(&r);
  CHECK_INT(ag_ring_len(&r), 0);
}

SUITE_RUN((UNIT(fifo_order_across_growth_and_wrap), UNIT(grow_when_wrapped), UNIT(edits_in_place_and_pop_into_nothing)))
