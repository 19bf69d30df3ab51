/* Helpers for the tests of tools and approvals (test_tools, test_tool_approval): the tool results a
 * world publishes, caught off its bus, and a count of a string's occurrences. */
#ifndef AG_TEST_TTOOLS_H
#define AG_TEST_TTOOLS_H

#include "world/world.h"

/* How many times needle occurs in hay (overlapping occurrences included). */
int ttools_count(const char *hay, const char *needle);

/* The first 8 tool results (their JSON, cut to 255 bytes) a world published. */
typedef struct ttools_result_grab {
  char results[8][256];
  int n;
} ttools_result_grab;

/* A bus handler (BUS_EVENT, any phase) filling the ttools_result_grab at ud. */
void ttools_grab_results(void *ud, bus_topic topic, void *payload);

#endif
