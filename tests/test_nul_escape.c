/* A "\u0000" in a world file or a snapshot would cut the text it is in (cJSON strings are C strings):
 * both loaders refuse it, naming the field (issue 17, minor). The finder, then the built binary. */
#include "common/utf8.h"
#include "support/proc.h"
#include "support/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int find(const char *json, char field[64]) {
  return ag_json_find_nul_escape(json, strlen(json), field, 64);
}

static void finder_names_the_field(void) {
  char f[64];
  CHECK_INT(find("{\"name\": \"ab\\u0000cd\"}", f), 1);
  CHECK_STR(f, "name");
  CHECK_INT(find("{\"a\": {\"b\": 1}, \"replies\": [\"x\", \"y\\u0000\"]}", f), 1);
  CHECK_STR(f, "replies");
  CHECK_INT(find("[\"\\u0000\"]", f), 1);
  CHECK_STR(f, "");
  CHECK_INT(find("{\"name\": \"ab\\\\u0000cd\"}", f), 0);   /* an escaped backslash: text */
  CHECK_INT(find("{\"name\": \"ab\\u0001cd \\\" \\u00000\"}", f), 1); /* after an escaped quote */
  CHECK_INT(find("{\"name\": \"ab\\u00e9\"}", f), 0);
  CHECK_INT(ag_json_find_nul_escape("{\"x\": \"\\u0000\"}", 12, f, 64), 0); /* cut before the escape ends */
  char small[3];
  CHECK_INT(ag_json_find_nul_escape("{\"longname\": \"\\u0000\"}", 22, small, sizeof small), 1);
  CHECK_STR(small, "lo");
}

static void world_file_and_snapshot_refused(void) {
  char *tmp = unit_tmpdir();
  char world[4200], snap[4200], db[4200];
  snprintf(world, sizeof world, "%s/w.json", tmp);
  snprintf(snap, sizeof snap, "%s/s.json", tmp);
  snprintf(db, sizeof db, "%s/db", tmp);
  CHECK_INT(unit_write_file(world, "{\"name\": \"Nul\", \"agents\": [{\"name\": \"ann\", \"system_prompt\": "
                                   "\"be kind\\u0000 and secret\", \"replies\": [\"hi\"]}]}"), 0);
  const char *run[] = {"run", world, "--db", db, NULL};
  proc_result r;
  CHECK_INT(proc_agora(run, NULL, NULL, &r), 0);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "\"system_prompt\"") != NULL);
  CHECK(strstr(r.err, "\\u0000") != NULL);
  proc_result_free(&r);

  CHECK_INT(unit_write_file(snap, "{\"format\": 1, \"chat\": {\"title\": \"ab\\u0000cd\"}}"), 0);
  const char *imp[] = {"chats", "import", snap, "--db", db, NULL};
  CHECK_INT(proc_agora(imp, NULL, NULL, &r), 0);
  CHECK(r.status != 0);
  CHECK(strstr(r.err, "\"title\"") != NULL);
  CHECK(strstr(r.err, "NUL") != NULL);
  proc_result_free(&r);
  unit_rmrf(tmp);
  free(tmp);
}

static const unit_test tests[] = {
  UNIT(finder_names_the_field),
  UNIT(world_file_and_snapshot_refused),
};

int main(int argc, char **argv) { return unit_main(argc, argv, tests, sizeof tests / sizeof *tests); }
