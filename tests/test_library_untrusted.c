/* World JSON from someone else (API version 10, include/agora_server.h "Worlds created over HTTP"), as
 * agora serve's POST /api/worlds takes it: agora_db_world_create stores it checked by the world file's
 * readers, and AGORA_UNTRUSTED opens it on the program's loop as the stored world it then is: its MCP
 * server is not started and its agent's key does not go to the base_url the JSON names, unless the
 * program allows that URL. Linked against libagora.so, nothing internal included. */
#include "agora.h"
#include "support/llm_server.h"
#include "support/proc.h"
#include "support/unit.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A world whose agent calls srv with AGORA_TEST_KEY and whose MCP server is node (a program). */
static void posted(char *json, size_t cap, const char *name, llm_server *srv) {
  snprintf(json, cap, "{\"name\": \"%s\", \"mcp_servers\": {\"fake\": {\"command\": \"node\", \"args\": [\"%s\", "
           "\"ok\"]}}, \"agents\": [{\"name\": \"ann\", \"provider\": \"openai\", \"model\": \"m\", \"base_url\": "
           "\"%s\", \"api_key_env\": \"AGORA_TEST_KEY\"}]}", name, unit_src_path("tests/mcp/fake_server.js"),
           llm_server_url(srv, "/v1"));
}

static void no_program_no_key(void) {
  llm_server *srv = NULL;
  CHECK_INT(llm_server_start(&srv), 0);
  if (!srv) return;
  llm_server_rule(srv, NULL, "reply=\"@human hello\"");
  setenv("AGORA_TEST_KEY", "k", 1);
  char json[2048], *db = unit_tmpdir();
  posted(json, sizeof json, "Posted", srv);
  struct event_base *L = event_base_new();
  agora_world *w = NULL;
  agora_options o = {.flags = AGORA_OPTIONS_8 | AGORA_OPTIONS_10 | AGORA_UNTRUSTED, .loop = L};
  CHECK_INT(agora_world_open(json, db, &o, &w), AGORA_OK);
  if (!w) goto done;
  CHECK_INT(proc_children(), 0); /* its mcp_servers: not started */
  CHECK_INT(agora_world_stored(w), 1);
  CHECK_INT(agora_publish(w, "human", "@ann hi"), AGORA_OK);
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  CHECK_INT(llm_server_request_count(srv), 1);
  CHECK_INT(llm_server_requests_with(srv, NULL, "Bearer k"), 0); /* its base_url is not one the program chose */
  agora_world_close(w);
  w = NULL;
  /* the same document again: the world exists (serve's 409) */
  CHECK_INT(agora_world_open(json, db, &o, &w), AGORA_ERR_EXISTS);
  /* the program allows the URL: the stored world's agent sends its key there */
  const char *urls[] = {llm_server_url(srv, "/v1")};
  agora_options allowed = {.flags = AGORA_FROM_STORE | AGORA_OPTIONS_3 | AGORA_OPTIONS_8, .loop = L,
                           .allow_key_to = urls, .n_allow_key_to = 1};
  int rc = agora_world_open("posted", db, &allowed, &w);
  if (rc) fprintf(stderr, "%s\n", agora_errmsg());
  CHECK_INT(rc, AGORA_OK);
  if (!w) goto done;
  CHECK_INT(agora_publish(w, "human", "@ann again"), AGORA_OK);
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  CHECK_INT(llm_server_requests_with(srv, NULL, "Bearer k"), 1);
done:
  agora_world_close(w);
  event_base_free(L);
  llm_server_stop(srv);
  unit_rmrf(db);
  free(db);
}

/* POST /api/worlds: stored, not opened; errors name the JSON path, the cap and the text. */
static void created_not_opened(void) {
  char *db = unit_tmpdir(), id[AGORA_ID_MAX] = "", *worlds = NULL;
  agora_db *d = NULL;
  CHECK_INT(agora_db_open(db, 0, &d), AGORA_OK);
  if (!d) goto done;
  static const char good[] = "{\"name\": \"Made\", \"agents\": [{\"name\": \"a\", \"provider\": \"script\"}]}";
  CHECK_INT(agora_db_world_create(d, good, id), AGORA_OK);
  CHECK_STR(id, "made");
  CHECK_INT(agora_db_worlds(d, &worlds), AGORA_OK);
  CHECK_HAS(worlds ? worlds : "", "\"made\"");
  CHECK_INT(agora_db_world_create(d, good, NULL), AGORA_ERR_EXISTS);
  CHECK_INT(agora_db_world_create(d, "{\"name\": \"Bad\", \"agents\": [{\"name\": \"a\", \"provider\": \"nope\"}]}",
                                  NULL), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "world: agents[0].provider", "nope");
  CHECK_INT(agora_db_world_create(d, "{\"name\": ", NULL), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "world", "malformed");
  CHECK_INT(agora_db_world_create(d, "{\"name\": \"A\\u0000B\", \"agents\": []}", NULL), AGORA_ERR_INVALID);
  size_t big = (1u << 20) + 16;
  char *huge = malloc(big + 1);
  if (huge) {
    memset(huge, ' ', big);
    huge[0] = '{', huge[big - 1] = '}', huge[big] = '\0';
    CHECK_INT(agora_db_world_create(d, huge, NULL), AGORA_ERR_TOO_BIG);
  }
  free(huge);
  CHECK_INT(agora_db_world_create(d, NULL, NULL), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "agora_db_world_create", "json");
done:
  agora_free(worlds);
  agora_db_close(d);
  unit_rmrf(db);
  free(db);
}

/* AGORA_UNTRUSTED takes JSON text and a database; without AGORA_OPTIONS_10 the flag is not read. */
static void wrong_use(void) {
  static const char town[] = "{\"name\": \"Plain\", \"agents\": [{\"name\": \"a\", \"provider\": \"script\"}]}";
  char *db = unit_tmpdir();
  agora_world *w = NULL;
  agora_options o = {.flags = AGORA_OPTIONS_10 | AGORA_UNTRUSTED};
  CHECK_INT(agora_world_open("town.json", db, &o, &w), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "AGORA_UNTRUSTED", "JSON text");
  o.flags |= AGORA_NO_SAVE;
  CHECK_INT(agora_world_open(town, db, &o, &w), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "AGORA_UNTRUSTED", "AGORA_NO_SAVE");
  CHECK(w == NULL);
  o.flags = AGORA_UNTRUSTED; /* an older program's flags: JSON as the program's own */
  CHECK_INT(agora_world_open(town, db, &o, &w), AGORA_OK);
  CHECK_INT(w ? agora_world_stored(w) : -1, 0);
  agora_world_close(w);
  unit_rmrf(db);
  free(db);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {UNIT(no_program_no_key), UNIT(created_not_opened), UNIT(wrong_use)};
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
