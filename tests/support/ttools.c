/* Helpers for the tests of tools and approvals (see ttools.h), moved from test_tools.c when it was
 * split. */
#include "support/ttools.h"

#include <stdio.h>
#include <string.h>

int ttools_count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p++) n++;
  return n;
}

void ttools_grab_results(void *ud, bus_topic topic, void *payload) {
  ttools_result_grab *g = ud;
  if (topic != BUS_EVENT || ((bus_event *)payload)->ev.kind != EV_TOOL_RESULT || g->n >= 8) return;
  const char *s = ((bus_event *)payload)->ev.u.tool.json;
  snprintf(g->results[g->n++], sizeof g->results[0], "%s", s ? s : "");
}
