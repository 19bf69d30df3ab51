/* Helpers for the end-to-end tests of the chat commands through the built binary (test_chats_cli,
 * test_chats_show_delete, test_chats_snapshot): a scratch directory with its database, agora run with
 * arguments and "--db", the chat list and snapshots parsed, and two small worlds. */
#ifndef AG_TEST_TCHATS_H
#define AG_TEST_TCHATS_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "support/proc.h"
#include "support/tjson.h"

/* One test's scratch directory; the database is DIR/db. */
typedef struct tchats_env {
  char *dir;
  char db[4096];
} tchats_env;

/* Makes the scratch directory (the running test fails when it cannot); tchats_env_close removes it. */
void tchats_env_open(tchats_env *e);
void tchats_env_close(tchats_env *e);
/* Writes text to DIR/name and puts the path in out. */
void tchats_env_file(const tchats_env *e, const char *name, const char *text, char out[4096]);

/* Runs agora with the NULL-terminated arguments, then "--db DB" when db is not NULL (with extra_env:
 * "NAME=value" strings, NULL-terminated). A run that cannot start fails the test, r is filled anyway. */
void tchats_ag(proc_result *r, const char *db, ...);
void tchats_ag_env(proc_result *r, const char *const *extra_env, const char *db, ...);
/* tchats_ag as a case's check of a refusal: exit status 2, want on stderr and nothing on stdout;
 * otherwise a failure at the caller's line. TCHATS_REFUSED(db, "no world", "chats", "new", NULL). */
#define TCHATS_REFUSED(db, want, ...) tchats_refused_(__FILE__, __LINE__, db, want, __VA_ARGS__)
void tchats_refused_(const char *file, int line, const char *db, const char *want, ...);
/* stdout without its trailing newlines, in out. */
void tchats_out_trim(const proc_result *r, char *out, size_t cap);

/* `chats list --json` (optionally --world) as a JSON array of the line objects (caller deletes). */
cJSON *tchats_list_chats(const char *db, const char *world);
/* The raw stdout of `chats list --json`, to compare before and after (caller frees). */
char *tchats_list_raw(const char *db);
/* The chat object of the list with this id, or NULL. */
const cJSON *tchats_find_chat(const cJSON *list, const char *id);
/* The id of the current chat in the list (into out, "" when none). */
void tchats_current_id(const cJSON *list, char *out, size_t cap);
/* The lines of out with "type":"message", joined with '\n' (caller frees). */
char *tchats_message_lines(const char *out);

/* Runs `run WORLD --json` on db; the chat id of its messages into id, the compact transcript returned. */
char *tchats_run_saved(const char *db, const char *world, char *id, size_t cap);
/* A chat's snapshot (via `chats export` to stdout), parsed; caller deletes. */
cJSON *tchats_export_chat(const char *db, const char *id);

/* Worlds with a script provider: "Trip Planner" (one agent, a world message and a human one) and
 * "Counter" (one agent counting with the human). */
extern const char tchats_trip_world[];
extern const char tchats_counter_world[];

#endif
