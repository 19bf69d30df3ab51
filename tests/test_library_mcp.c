/* A world's MCP servers through the library (API 11, include/agora_server.h): agora_mcp_servers shows
 * them as `agora serve`'s GET /api/worlds/{id}/mcp does (started or why not, each one's state and tools),
 * and agora_mcp_restart starts one again (its tools come back once it is ready) or says why it cannot.
 * Linked against libagora.so, through the installed headers only. */
#include "agora.h"
#include "support/unit.h"
#include "support/wait.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

/* A world whose one server "fake" is tests/mcp/fake_server.js (tools echo and grow). */
static const char *fake_world(void) {
  static char json[2048];
  snprintf(json, sizeof json, "{\"name\": \"Tooled\", \"mcp_servers\": {\"fake\": {\"command\": \"node\", \"args\":"
           " [\"%s\", \"ok\"]}}, \"agents\": [{\"name\": \"t\", \"provider\": \"script\","
           " \"tools\": [\"fake.echo\"]}]}",
           unit_src_path("tests/mcp/fake_server.js"));
  return json;
}

static int open_world(const char *json, unsigned flags, agora_world **w) {
  agora_options o = {.flags = AGORA_NO_SAVE | AGORA_OPTIONS_3 | flags};
  return agora_world_open(json, NULL, &o, w);
}

/* agora_mcp_servers parsed (the caller's), NULL on failure. */
static cJSON *servers_of(agora_world *w) {
  char *text = NULL;
  if (agora_mcp_servers(w, &text)) return NULL;
  cJSON *j = cJSON_Parse(text);
  agora_free(text);
  return j;
}

/* The first server's field key as a string ("" when not one). */
static const char *first_str(const cJSON *j, const char *key) {
  const cJSON *s = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "servers"), 0);
  const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, key));
  return v ? v : "";
}

static int has_tool(const cJSON *j, const char *tool) {
  const cJSON *s = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "servers"), 0), *t;
  cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(s, "tools")) if (!strcmp(t->valuestring, tool)) return 1;
  return 0;
}

static void servers_shown(void) {
  agora_world *w = NULL;
  CHECK_INT(open_world(fake_world(), 0, &w), AGORA_OK);
  cJSON *j = servers_of(w);
  CHECK(j != NULL);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "started")));
  CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "reason")));
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "servers")), 1);
  CHECK_STR(first_str(j, "name"), "fake");
  CHECK_STR(first_str(j, "transport"), "stdio");
  CHECK_STR(first_str(j, "state"), "ready");
  CHECK(has_tool(j, "echo") && has_tool(j, "grow"));
  cJSON_Delete(j);
  CHECK_INT(agora_mcp_servers(w, NULL), AGORA_ERR_INVALID);
  agora_world_close(w);
}

typedef struct until_ready {
  agora_world *w;
  int saw_starting;
} until_ready;

/* Steps the world's loop and says whether the restarted server is ready with its tools again. */
static int ready_again(void *arg) {
  until_ready *u = arg;
  agora_step(u->w);
  cJSON *j = servers_of(u->w);
  int ready = j && !strcmp(first_str(j, "state"), "ready") && has_tool(j, "echo");
  u->saw_starting |= j && !strcmp(first_str(j, "state"), "starting");
  cJSON_Delete(j);
  return ready;
}

static void restart(void) {
  agora_world *w = NULL;
  CHECK_INT(open_world(fake_world(), 0, &w), AGORA_OK);
  CHECK_INT(agora_mcp_restart(w, "nope"), AGORA_ERR_NOT_FOUND);
  CHECK(strstr(agora_errmsg(), "no MCP server 'nope'") != NULL);
  CHECK_INT(agora_mcp_restart(w, NULL), AGORA_ERR_INVALID);
  CHECK(strstr(agora_errmsg(), "server") != NULL);
  CHECK_INT(agora_mcp_restart(w, "fake"), AGORA_OK);
  cJSON *j = servers_of(w); /* at once: the new process has not answered its handshake yet */
  CHECK_STR(first_str(j, "state"), "starting");
  cJSON_Delete(j);
  until_ready u = {.w = w};
  CHECK(wait_until(ready_again, &u, 10000));
  agora_world_close(w);
}

static void not_started(void) {
  agora_world *w = NULL;
  CHECK_INT(open_world(fake_world(), AGORA_NO_MCP, &w), AGORA_OK);
  cJSON *j = servers_of(w);
  CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "started")));
  CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "reason")));
  CHECK_STR(first_str(j, "state"), "not started");
  cJSON_Delete(j);
  CHECK_INT(agora_mcp_restart(w, "fake"), AGORA_ERR_STATE);
  CHECK(strstr(agora_errmsg(), "did not start its MCP servers") != NULL);
  agora_world_close(w);
  CHECK_INT(open_world("{\"name\": \"Plain\", \"agents\": [{\"name\": \"a\", \"provider\": \"script\"}]}", 0, &w),
            AGORA_OK);
  j = servers_of(w);
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "reason")), "the world has no mcp_servers");
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "servers")), 0);
  cJSON_Delete(j);
  CHECK_INT(agora_mcp_restart(w, "fake"), AGORA_ERR_NOT_FOUND);
  agora_world_close(w);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {UNIT(servers_shown), UNIT(restart), UNIT(not_started)};
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
