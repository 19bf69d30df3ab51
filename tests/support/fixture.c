/* Shared end-to-end scaffolding (see fixture.h). */
#include "support/fixture.h"
#include "support/suite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/proc.h"

static const char fixture_world[] =
  "{\"name\": \"Counter\", \"defaults\": {\"provider\": \"script\"},"
  " \"agents\": [{\"name\": \"a\", \"replies\": [\"one\", \"two\", \"three\"]}],"
  " \"script\": [{\"from\": \"human\", \"text\": \"@a count with me\"}]}";

void fixture_find_id(const char *text, const char *key, char *out, size_t cap) {
  char needle[64];
  snprintf(needle, sizeof needle, "\"%s\":\"", key);
  const char *p = text ? strstr(text, needle) : NULL;
  out[0] = '\0';
  if (p) snprintf(out, cap, "%.*s", (int)strcspn(p + strlen(needle), "\""), p + strlen(needle));
}

int fixture_open(fixture *fx, int runs) {
  memset(fx, 0, sizeof *fx);
  fx->dir = unit_tmpdir();
  if (!fx->dir) return -1;
  snprintf(fx->world, sizeof fx->world, "%s/w.json", fx->dir);
  snprintf(fx->db, sizeof fx->db, "%s/db", fx->dir);
  int bad = unit_write_file(fx->world, fixture_world);
  for (int i = 0; !bad && i < runs; i++) {
    const char *args[] = {"run", fx->world, "--db", fx->db, "--json", NULL};
    proc_result r;
    if (proc_agora(args, NULL, NULL, &r)) return -1;
    bad = r.status != 0;
    fixture_find_id(r.out, "chat", fx->chat, sizeof fx->chat);
    proc_result_free(&r);
  }
  if (bad || !fx->chat[0]) unit_fail_(__FILE__, __LINE__, "cannot make the fixture's saved chats");
  return bad || !fx->chat[0] ? -1 : 0;
}

void fixture_close(fixture *fx) {
  if (fx->dir) unit_rmrf(fx->dir);
  free(fx->dir);
  fx->dir = NULL;
}

int fixture_main_with_server(int argc, char **argv, const unit_test *tests, size_t n, llm_server **srv, char **tmp) {
  return suite_main(argc, argv, &(suite){.tests = tests, .n = n, .tmp = tmp, .srv = srv});
}
