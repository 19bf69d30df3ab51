/* End to end through the built binary: what is saved, looked at and removed — `chats delete` with its
 * fallback to the latest chat, `chats show` against the run's transcript, and `worlds show|export|delete`
 * (docs/cli.md, docs/behaviour.md §6). */
#include "support/proc.h"
#include "support/suite.h"
#include "support/tchats.h"
#include "support/tjson.h"
#include "support/unit.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- delete ---- */

/* chats delete id: exit 0 and the current chat printed and listed is want_cur, among n left without id.
 * The list, for more checks (caller deletes). */
static cJSON *delete_one(const tchats_env *e, const char *id, const char *want_cur, int n) {
  proc_result r;
  char cur[64];
  tchats_ag(&r, e->db, "chats", "delete", id, NULL);
  CHECK_INT(r.status, 0);
  tchats_out_trim(&r, cur, sizeof cur);
  CHECK_STR(cur, want_cur);
  proc_result_free(&r);
  cJSON *list = tchats_list_chats(e->db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), n);
  CHECK(tchats_find_chat(list, id) == NULL);
  tchats_current_id(list, cur, sizeof cur);
  CHECK_STR(cur, want_cur);
  return list;
}

/* Deletes c1 (c3 becomes current), then c3 (none is), and is refused for c3 again and for an unknown
 * chat, with the id named. */
static void delete_down_to_none(const tchats_env *e, const char *c1, const char *c3) {
  cJSON_Delete(delete_one(e, c1, c3, 1));
  proc_result r;
  tchats_ag(&r, e->db, "chats", "delete", c3, NULL);
  CHECK_INT(r.status, 0);
  CHECK_STR(r.out, "none\n");
  proc_result_free(&r);
  cJSON *list = tchats_list_chats(e->db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 0);
  cJSON_Delete(list);
  tchats_ag(&r, e->db, "worlds", "list", "--json", NULL);
  CHECK_INT(r.status, 0);
  cJSON *w = cJSON_Parse(r.out);
  CHECK(cJSON_IsNull(cJSON_GetObjectItem(w, "current_chat")));
  CHECK_INT(tjson_num(w, "chats"), 0);
  cJSON_Delete(w);
  proc_result_free(&r);

  TCHATS_REFUSED(e->db, c3, "chats", "delete", c3, NULL); /* already gone */
  TCHATS_REFUSED(e->db, "nosuchchat", "chats", "delete", "nosuchchat", NULL);
}

static void delete_with_fallback(void) {
  tchats_env e;
  tchats_env_open(&e);
  char world[4096], c1[64], c2[64], c3[64], c4[64], cur[64];
  tchats_env_file(&e, "counter.json", tchats_counter_world, world);
  free(tchats_run_saved(e.db, world, c1, sizeof c1));
  free(tchats_run_saved(e.db, world, c2, sizeof c2));
  free(tchats_run_saved(e.db, world, c3, sizeof c3));
  proc_result r;
  tchats_ag(&r, e.db, "run", world, "--chat", c1, NULL); /* c1 is now the most recently updated */
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  free(tchats_run_saved(e.db, world, c4, sizeof c4));
  CHECK(strcmp(c1, c2) && strcmp(c2, c3) && strcmp(c3, c4) && strcmp(c1, c4));
  cJSON *list = tchats_list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 4);
  CHECK_STR(tjson_str(cJSON_GetArrayItem(list, 0), "id"), c4);
  CHECK_STR(tjson_str(cJSON_GetArrayItem(list, 1), "id"), c1);
  cJSON_Delete(list);

  /* The current chat: the most recently updated remaining one (c1, not the newer-created c3). */
  cJSON_Delete(delete_one(&e, c4, c1, 3));
  tchats_ag(&r, e.db, "chats", "show", c4, NULL);
  CHECK_INT(r.status, 2);
  proc_result_free(&r);
  tchats_ag(&r, e.db, "replay", c4, NULL);
  CHECK_INT(r.status, 2);
  proc_result_free(&r);

  /* A chat that is not current: the current one stays. */
  list = delete_one(&e, c2, c1, 2);
  CHECK_INT(tjson_num(tchats_find_chat(list, c1), "message_count"), 4);
  cJSON_Delete(list);

  delete_down_to_none(&e, c1, c3);

  /* With session mode off, the next run starts a fresh chat that becomes current. */
  free(tchats_run_saved(e.db, world, c4, sizeof c4));
  list = tchats_list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 1);
  tchats_current_id(list, cur, sizeof cur);
  CHECK_STR(cur, c4);
  CHECK_INT(tjson_num(cJSON_GetArrayItem(list, 0), "message_count"), 2);
  cJSON_Delete(list);
  tchats_env_close(&e);
}

/* ---- show ---- */

static void show_matches_run(void) {
  tchats_env e;
  tchats_env_open(&e);
  proc_result run, r;
  tchats_ag(&run, e.db, "run", unit_src_path("examples/debate.json"), "--json", NULL);
  CHECK_INT(run.status, 0);
  char *run_lines = tchats_message_lines(run.out);
  char *run_msgs = proc_messages(run.out);
  CHECK_INT(strlen(run_msgs) > 0, 1);
  cJSON *list = tchats_list_chats(e.db, NULL);
  const char *id = tjson_str(cJSON_GetArrayItem(list, 0), "id");
  char *list_line = cJSON_PrintUnformatted(cJSON_GetArrayItem(list, 0));

  tchats_ag(&r, e.db, "chats", "show", id, "--json", NULL);
  CHECK_INT(r.status, 0);
  char *nl = strchr(r.out, '\n');
  CHECK(nl != NULL);
  if (nl) {
    *nl = '\0';
    CHECK_STR(r.out, list_line); /* the chat object, as in the list */
    CHECK_STR(nl + 1, run_lines); /* then the message lines, byte for byte as run printed them */
    CHECK_MESSAGES(nl + 1, run_msgs);
  }
  proc_result_free(&r);

  /* Plain: metadata, then the paragraphs. */
  tchats_ag(&r, e.db, "chats", "show", id, NULL);
  CHECK_INT(r.status, 0);
  char want[256];
  snprintf(want, sizeof want, "chat: %s\n", id);
  CHECK(strncmp(r.out, want, strlen(want)) == 0);
  CHECK(strstr(r.out, "messages: 8\n") != NULL);
  CHECK(strstr(r.out, "\n#1 human: @alice Is C still relevant in 2026? Start the debate with Bob.\n\n") != NULL);
  proc_result_free(&r);

  TCHATS_REFUSED(e.db, "0000000000000", "chats", "show", "0000000000000", "--json", NULL);
  free(list_line);
  cJSON_Delete(list);
  free(run_lines);
  free(run_msgs);
  proc_result_free(&run);
  tchats_env_close(&e);
}

/* worlds show|export|delete (issue 15 item 13), by id or display name. */
static void worlds_show_export_delete(void) {
  tchats_env e;
  tchats_env_open(&e);
  char trip[4096], counter[4096], id[64], exported[4096], db2[4096];
  tchats_env_file(&e, "trip.json", tchats_trip_world, trip);
  tchats_env_file(&e, "counter.json", tchats_counter_world, counter);
  free(tchats_run_saved(e.db, trip, id, sizeof id));
  free(tchats_run_saved(e.db, counter, id, sizeof id));
  proc_result r;
  tchats_ag(&r, e.db, "worlds", "show", "Trip Planner", NULL);
  CHECK_INT(r.status, 0);
  CHECK(strstr(r.out, "world: trip-planner\nname: Trip Planner\nchats: 1\n") != NULL);
  CHECK(strstr(r.out, "agents: 1\n  planner ") != NULL && strstr(r.out, "provider=script") != NULL);
  proc_result_free(&r);
  tchats_ag(&r, e.db, "worlds", "show", "trip-planner", "--json", NULL);
  CHECK_INT(r.status, 0);
  cJSON *j = cJSON_Parse(r.out);
  CHECK_INT(tjson_num(j, "chats"), 1);
  CHECK_STR(tjson_str(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "settings"), "agents"), 0), "name"), "planner");
  cJSON_Delete(j);
  proc_result_free(&r);
  TCHATS_REFUSED(e.db, "no world 'nope'", "worlds", "show", "nope", NULL);
  /* export: a world file that `run` loads again, into another database. */
  snprintf(exported, sizeof exported, "%s/exported.json", e.dir);
  snprintf(db2, sizeof db2, "%s/db2", e.dir);
  tchats_ag(&r, e.db, "worlds", "export", "Trip Planner", "-o", exported, NULL);
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  tchats_ag(&r, db2, "run", exported, NULL);
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  tchats_ag(&r, db2, "worlds", "list", "--json", NULL);
  CHECK(strstr(r.out, "\"id\":\"trip-planner\"") != NULL);
  proc_result_free(&r);
  /* delete: only with --yes; the world and its chats go, the other world stays. */
  TCHATS_REFUSED(e.db, "add --yes", "worlds", "delete", "Trip Planner", NULL);
  tchats_ag(&r, e.db, "worlds", "delete", "Trip Planner", "--yes", NULL);
  CHECK_INT(r.status, 0);
  CHECK_STR(r.out, "deleted world trip-planner and 1 chat\n");
  proc_result_free(&r);
  cJSON *list = tchats_list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 1);
  CHECK_STR(tjson_str(cJSON_GetArrayItem(list, 0), "world"), "counter");
  cJSON_Delete(list);
  tchats_ag(&r, e.db, "worlds", "list", NULL);
  CHECK(strstr(r.out, "trip-planner") == NULL && strstr(r.out, "counter") != NULL);
  proc_result_free(&r);
  tchats_env_close(&e);
}

SUITE_RUN((UNIT(worlds_show_export_delete), UNIT(delete_with_fallback), UNIT(show_matches_run)))
