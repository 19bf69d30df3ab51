/* Test worlds from inline JSON, and a bus recorder (see tworld.h). */
#include "support/tworld.h"

#include "support/unit.h"

#include <stdio.h>
#include <string.h>

world *tworld_make(struct event_base *base, const char *json) {
  world_spec spec;
  ag_errmsg em = {""};
  if (world_spec_parse(json, strlen(json), "test", &spec, &em)) {
    unit_fail_(__FILE__, __LINE__, "%s", em.text);
    return NULL;
  }
  world *w = NULL;
  if (world_new(base, &spec, &w, &em)) unit_fail_(__FILE__, __LINE__, "%s", em.text);
  world_spec_free(&spec);
  return w;
}

void tworld_record(void *ud, bus_topic topic, void *payload) {
  tworld_log *l = ud;
  char line[512];
  if (topic == BUS_MESSAGE) {
    ag_msg *m = payload;
    snprintf(line, sizeof line, "%llu %s: %s\n", (unsigned long long)m->seq, m->sender, m->text);
  } else {
    snprintf(line, sizeof line, "-- %s\n", ev_kind_name(((bus_event *)payload)->ev.kind));
  }
  strncat(l->text, line, sizeof l->text - strlen(l->text) - 1);
}
