/* Commands not built yet: they say so and fail cleanly. */
#include "cli/cli.h"

#include "common/error.h"

int cli_console(int argc, char **argv) {
  (void)argc;
  (void)argv;
  return cli_error(AG_ERR_STATE, "console: not available yet");
}
