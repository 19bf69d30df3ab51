/* Helpers for the end-to-end tests of agora serve (see tserve.h), moved from test_serve.c when it was
 * split. */
#include "support/tserve.h"

#include "support/suite.h"
#include "support/unit.h"

#include <stdio.h>
#include <string.h>

char *tserve_tmp;

const char tserve_counter_world[] =
  "{\"name\": \"Counter\", \"defaults\": {\"provider\": \"script\"},"
  " \"agents\": [{\"name\": \"a\", \"replies\": [\"one\", \"two\", \"three\", \"four\", \"five\", \"six\"]}]}";

/* A file in the scratch directory (name unique per test); returns its path (static buffer). */
const char *tserve_scratch(const char *name, const char *text) { return suite_file(tserve_tmp, name, text); }

/* Starts serve on world file text with database db_name (in the scratch directory). */
int tserve_start(const char *name, const char *world, serve_proc *sp, const char *const *env) {
  char file[64], db[1024];
  snprintf(file, sizeof file, "%s.json", name);
  const char *wpath = tserve_scratch(file, world);
  char w[1024];
  snprintf(w, sizeof w, "%s", wpath);
  snprintf(db, sizeof db, "%s/db-%s", tserve_tmp, name);
  const char *args[] = {w, "--db", db, NULL};
  return SERVE_START(tserve_tmp, args, env, sp);
}

/* The error code of an error reply, or NULL when it is not {"error":{"code","message"}}. */
static const char *err_code(const cJSON *j) {
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
  return tjson_str(e, "message") ? tjson_str(e, "code") : NULL;
}

/* Expects status and, for an error, the JSON error shape with code. */
void tserve_expect(const serve_proc *sp, const char *method, const char *path, const char *body, long want,
                   const char *code) {
  long st;
  cJSON *j = serve_call_json(sp, method, path, body, &st);
  if (st != want) unit_fail_(__FILE__, __LINE__, "%s %s: status %ld, expected %ld", method, path, st, want);
  if (code && (!err_code(j) || strcmp(err_code(j), code)))
    unit_fail_(__FILE__, __LINE__, "%s %s: error code %s, expected %s", method, path, err_code(j) ? err_code(j) : "(none)", code);
  cJSON_Delete(j);
}

