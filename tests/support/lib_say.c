/* One exchange with a world through libagora's public API (see lib_say.h). */
#include "support/lib_say.h"

#include "support/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *lib_say(agora_world *w, const char *text) {
  char *lines = NULL;
  size_t len = 0;
  CHECK_INT(agora_events_buffer(w, 1 << 20), AGORA_OK);
  CHECK_INT(agora_publish(w, "human", text), AGORA_OK);
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  CHECK_INT(agora_events_take(w, &lines, &len), AGORA_OK);
  return lines ? lines : strdup("");
}

void lib_say_numbered(agora_world *w, const char *prefix, int n) {
  for (int i = 1; i <= n; i++) {
    char text[256];
    snprintf(text, sizeof text, "%s %d", prefix, i);
    free(lib_say(w, text));
  }
}
