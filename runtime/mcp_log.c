/* Starting a world's MCP servers with a log file of this run (see mcp_log.h). */
#include "runtime/mcp_log.h"

#include "chat/archive.h"
#include "world/world_mcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int rt_mcp_start(world *w, const char *db, int no_save, ag_errmsg *em) {
  char dir[4096], path[4400];
  const char *log = NULL;
  if (!world_time_spec(w)->n_mcp) return AG_OK;
  if (no_save) { /* nothing goes to the data directory: the log is a temporary file */
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s", tmp && tmp[0] ? tmp : "/tmp");
    db = dir;
  }
  if (db || !chat_store_default_dir(dir, sizeof dir)) {
    snprintf(path, sizeof path, "%s/%s", db ? db : dir, no_save ? "." : "logs");
    mkdir(db ? db : dir, 0700);
    if (!mkdir(path, 0700) || access(path, W_OK) == 0) {
      char stamp[32];
      time_t now = time(NULL);
      strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", gmtime(&now));
      size_t n = strlen(path);
      snprintf(path + n, sizeof path - n, "/%smcp-%s-%ld.log", no_save ? "agora-" : "", stamp, (long)getpid());
      log = path;
    }
  }
  world_mcp_opts o = {log, AGORA_VERSION, 0};
  return world_mcp_start(w, &o, em);
}
