/* The core's own copy set up for serve (see core_process.h). */
#include "cli/core_process.h"

#include "llm/llm.h"
#include "runtime/process.h"
#include "storage/store_lock.h"

#include <stdio.h>
#include <string.h>

int cli_core_command(const char *cmd) { return !strcmp(cmd, "serve"); }

static void print_warning(const char *message) { fprintf(stderr, "agora: warning: %s\n", message); }

int cli_core_begin(const char *cmd) {
  if (rt_process_begin()) {
    fputs("agora: cannot start the HTTP client library\n", stderr);
    return 1;
  }
  llm_set_warning_sink(print_warning);
  store_lock_set_owner(cmd); /* a chat this process holds names it: "in use by pid N (serve)" */
  return 0;
}

void cli_core_end(void) { rt_process_end(); }
