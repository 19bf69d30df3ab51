/* Commands that need storage or a terminal and are not built yet: they say so and fail cleanly. */
#include "cli/cli.h"

#include "common/error.h"

int cli_replay(int argc, char **argv) {
  (void)argc;
  (void)argv;
  return cli_error(AG_ERR_STATE, "replay: not available yet (needs chat storage)");
}

int cli_chats(int argc, char **argv) {
  (void)argc;
  (void)argv;
  return cli_error(AG_ERR_STATE, "chats: not available yet (needs chat storage)");
}

int cli_worlds(int argc, char **argv) {
  (void)argc;
  (void)argv;
  return cli_error(AG_ERR_STATE, "worlds: not available yet (needs chat storage)");
}

int cli_console(int argc, char **argv) {
  (void)argc;
  (void)argv;
  return cli_error(AG_ERR_STATE, "console: not available yet");
}
