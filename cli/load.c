/* Loading a world file into a running world (see load.h). */
#include "cli/load.h"

#include <event2/event.h>
#include <stdio.h>
#include <string.h>

int cli_world_build(const char *path, const world_spec *spec, struct event_base **base, world **w, ag_errmsg *em) {
  *w = NULL;
  if (!(*base = event_base_new())) return ag_fail(em, AG_ERR_NOMEM, "cannot create the event loop");
  int rc = world_new(*base, spec, w, em);
  if (!rc) return AG_OK;
  ag_errmsg detail = *em;
  event_base_free(*base);
  *base = NULL;
  *w = NULL;
  return ag_fail(em, rc == AG_ERR_NOMEM ? rc : AG_ERR_INVALID, "%s: %s", path, detail.text);
}

void cli_thinking_names(const world *w, char *out, size_t cap) {
  size_t len = 0;
  out[0] = '\0';
  for (size_t i = 0; i < world_agent_count(w); i++) {
    agent *a = world_agent_at(w, i);
    if (agent_is_thinking(a) && len + strlen(agent_id(a)) + 3 < cap)
      len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? ", " : "", agent_id(a));
  }
}
