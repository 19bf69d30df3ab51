/* Stored chats printed the way run printed them, and snapshot files read (see transcript.h). */
#include "cli/transcript.h"

#include "agora.h"
#include "common/buf.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void pace(long ms) {
  if (ms <= 0) return;
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

void cli_transcript_print(const cli_event_print *p, const cJSON *entries, long delay_ms) {
  const cJSON *e;
  int seen = 0; /* a message was printed: the next one waits */
  cJSON_ArrayForEach(e, entries) {
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "type"));
    if (type && !strcmp(type, "message")) {
      if (seen) pace(delay_ms);
      seen = 1;
    }
    cli_event_print_entry(p, e);
  }
}

int cli_snapshot_read(const char *path, char **text, ag_errmsg *em) {
  size_t len = 0;
  *text = NULL;
  int rc = ag_file_read(path, AGORA_SNAPSHOT_MAX, text, &len, em);
  if (rc == AG_ERR_NOT_FOUND || rc == AG_ERR_IO) rc = AG_ERR_INVALID; /* a bad argument: exit 2 */
  if (!rc && memchr(*text, '\0', len)) rc = ag_fail(em, AG_ERR_INVALID, "%s: malformed JSON", path);
  if (rc) free(*text), *text = NULL;
  return rc;
}
