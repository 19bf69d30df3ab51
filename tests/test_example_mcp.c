/* examples/mcp-library.json through the built binary, with the reference filesystem server from npm
 * (AGORA_PEERS, as a user has it on PATH after `npm install -g @modelcontextprotocol/server-filesystem`):
 * the server starts on the library/ folder shipped with the example, the librarian's tool calls read
 * the real files, and the answer published is the one the file supports. */
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int has(const char *s, const char *want) {
  if (s && strstr(s, want)) return 1;
  fprintf(stderr, "  missing: %s\n", want);
  return 0;
}

static void library_answers_from_the_file(void) {
  const char *peers = getenv("AGORA_PEERS");
  char path_env[8192];
  snprintf(path_env, sizeof path_env, "PATH=%s/node_modules/.bin:%s", peers ? peers : "build/peers",
           getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
  const char *env[] = {path_env, NULL};
  const char *args[] = {"run", unit_src_path("examples/mcp-library.json"), "--json", "--no-save", NULL};
  proc_result r;
  PROC_OK(args, NULL, env, &r);
  if (r.status) fprintf(stderr, "  stderr: %s\n", r.err);
  /* The listing and the file come from the shipped folder, through the server. */
  CHECK(has(r.out, "\"tool\":\"list_directory\",\"call_id\":\"call_1\",\"result\":\"[FILE] opening-hours.txt\\n[FILE] rules.txt"));
  CHECK(has(r.out, "\"tool\":\"read_text_file\",\"call_id\":\"call_1\",\"result\":\"Opening hours of the Millbrook library"));
  CHECK(has(r.out, "Monday to Saturday: 09:00 to 18:00\\nSunday: closed"));
  CHECK(!strstr(r.out, "\"error\":true"));
  char *msgs = proc_messages(r.out);
  CHECK_STR(msgs,
            "human|human|@Librarian when is the library open?\n"
            "librarian|agent|We open at 09:00 and close at 18:00 from Monday to Saturday; on Sunday we are closed.\n");
  free(msgs);
  proc_result_free(&r);
}

SUITE_RUN((UNIT(library_answers_from_the_file)))
