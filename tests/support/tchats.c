/* Helpers for the end-to-end tests of the chat commands (see tchats.h), moved from test_chats_cli.c
 * when it was split. */
#include "support/tchats.h"

#include "support/unit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tchats_env_open(tchats_env *e) {
  e->dir = unit_tmpdir();
  if (!e->dir) unit_fail_(__FILE__, __LINE__, "cannot make a temporary directory");
  snprintf(e->db, sizeof e->db, "%s/db", e->dir ? e->dir : "/nonexistent");
}

void tchats_env_close(tchats_env *e) {
  unit_rmrf(e->dir);
  free(e->dir);
  e->dir = NULL;
}

/* Writes text to DIR/name and puts the path in out. */
void tchats_env_file(const tchats_env *e, const char *name, const char *text, char out[4096]) {
  snprintf(out, 4096, "%s/%s", e->dir, name);
  if (unit_write_file(out, text)) unit_fail_(__FILE__, __LINE__, "cannot write %s", out);
}

/* Runs agora with the NULL-terminated arguments, then "--db DB" when db is not NULL, with extra_env. */
static void agv(proc_result *r, const char *const *extra_env, const char *db, va_list ap) {
  const char *args[40];
  size_t n = 0;
  const char *a;
  while ((a = va_arg(ap, const char *)) != NULL && n < 36) args[n++] = a;
  if (db) {
    args[n++] = "--db";
    args[n++] = db;
  }
  args[n] = NULL;
  if (proc_agora(args, NULL, extra_env, r)) {
    unit_fail_(__FILE__, __LINE__, "cannot run agora");
    r->status = -1;
    r->out = strdup("");
    r->err = strdup("");
  }
}

void tchats_ag(proc_result *r, const char *db, ...) {
  va_list ap;
  va_start(ap, db);
  agv(r, NULL, db, ap);
  va_end(ap);
}

void tchats_ag_env(proc_result *r, const char *const *extra_env, const char *db, ...) {
  va_list ap;
  va_start(ap, db);
  agv(r, extra_env, db, ap);
  va_end(ap);
}

void tchats_refused_(const char *file, int line, const char *db, const char *want, ...) {
  proc_result r;
  va_list ap;
  va_start(ap, want);
  agv(&r, NULL, db, ap);
  va_end(ap);
  if (r.status != 2) unit_fail_(file, line, "exit status %d, expected 2: %s", r.status, r.err ? r.err : "");
  else if (!r.err || !strstr(r.err, want)) unit_fail_(file, line, "stderr lacks '%s': %s", want, r.err ? r.err : "");
  else if (r.out && r.out[0]) unit_fail_(file, line, "stdout not empty: %s", r.out);
  proc_result_free(&r);
}

/* stdout without its trailing newlines, in out. */
void tchats_out_trim(const proc_result *r, char *out, size_t cap) {
  snprintf(out, cap, "%s", r->out);
  size_t n = strlen(out);
  while (n && out[n - 1] == '\n') out[--n] = '\0';
}

/* `chats list --json` (optionally --world) as a JSON array of the line objects (caller deletes). */
cJSON *tchats_list_chats(const char *db, const char *world) {
  proc_result r;
  if (world) tchats_ag(&r, db, "chats", "list", "--json", "--world", world, NULL);
  else tchats_ag(&r, db, "chats", "list", "--json", NULL);
  CHECK_INT(r.status, 0);
  cJSON *arr = cJSON_CreateArray();
  for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
    cJSON *j = cJSON_Parse(line);
    if (!j) unit_fail_(__FILE__, __LINE__, "not JSON: %s", line);
    else cJSON_AddItemToArray(arr, j);
  }
  proc_result_free(&r);
  return arr;
}

/* The raw stdout of `chats list --json`, to compare before and after (caller frees). */
char *tchats_list_raw(const char *db) {
  proc_result r;
  tchats_ag(&r, db, "chats", "list", "--json", NULL);
  CHECK_INT(r.status, 0);
  free(r.err);
  return r.out;
}

/* The chat object of the list with this id, or NULL. */
const cJSON *tchats_find_chat(const cJSON *list, const char *id) {
  const cJSON *c;
  cJSON_ArrayForEach(c, list) if (tjson_str(c, "id") && !strcmp(tjson_str(c, "id"), id)) return c;
  return NULL;
}

/* The id of the current chat in the list (into out, "" when none). */
void tchats_current_id(const cJSON *list, char *out, size_t cap) {
  out[0] = '\0';
  const cJSON *c;
  cJSON_ArrayForEach(c, list) if (cJSON_IsTrue(cJSON_GetObjectItem(c, "current"))) snprintf(out, cap, "%s", tjson_str(c, "id"));
}

/* The lines of out with "type":"message", joined with '\n' (caller frees). */
char *tchats_message_lines(const char *out) {
  size_t cap = strlen(out) + 1, len = 0;
  char *res = malloc(cap);
  res[0] = '\0';
  const char *line = out;
  while (line && *line) {
    const char *nl = strchr(line, '\n');
    size_t n = nl ? (size_t)(nl - line) + 1 : strlen(line);
    if (strncmp(line, "{\"type\":\"message\"", 17) == 0) {
      memcpy(res + len, line, n);
      len += n;
      res[len] = '\0';
    }
    line = nl ? nl + 1 : NULL;
  }
  return res;
}

/* Runs `run WORLD --json` on db; the chat id of its messages into id, the compact transcript returned. */
char *tchats_run_saved(const char *db, const char *world, char *id, size_t cap) {
  proc_result r;
  tchats_ag(&r, db, "run", world, "--json", NULL);
  CHECK_INT(r.status, 0);
  if (r.status) fprintf(stderr, "  stderr: %s\n", r.err);
  if (id) {
    id[0] = '\0';
    char *first = strstr(r.out, "{\"type\":\"message\"");
    cJSON *j = first ? cJSON_ParseWithLength(first, strcspn(first, "\n")) : NULL;
    if (tjson_str(j, "chat")) snprintf(id, cap, "%s", tjson_str(j, "chat"));
    cJSON_Delete(j);
  }
  char *msgs = proc_messages(r.out);
  proc_result_free(&r);
  return msgs;
}

/* A chat's snapshot (via `chats export` to stdout), parsed; caller deletes. */
cJSON *tchats_export_chat(const char *db, const char *id) {
  proc_result r;
  tchats_ag(&r, db, "chats", "export", id, NULL);
  CHECK_INT(r.status, 0);
  cJSON *j = cJSON_Parse(r.out);
  CHECK(j != NULL);
  proc_result_free(&r);
  return j;
}

/* Worlds used by the chat tests. */
const char tchats_trip_world[] =
  "{\"name\": \"Trip Planner\", \"defaults\": {\"provider\": \"script\"},"
  " \"agents\": [{\"name\": \"planner\", \"replies\": [\"Sure, Lisbon in May.\"]}],"
  " \"script\": [{\"from\": \"world\", \"text\": \"The office is quiet; nobody calls @planner yet.\"},"
  "  {\"from\": \"human\", \"text\": \"Hello, can you help me plan a trip to **Lisbon**\"}]}";

const char tchats_counter_world[] =
  "{\"name\": \"Counter\", \"defaults\": {\"provider\": \"script\"},"
  " \"agents\": [{\"name\": \"a\", \"replies\": [\"one\", \"two\", \"three\"]}],"
  " \"script\": [{\"from\": \"human\", \"text\": \"@a count with me\"}]}";
