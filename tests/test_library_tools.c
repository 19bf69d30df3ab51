/* libagora's API version 5 without a NATS server: a world opened to look at its tools (AGORA_TOOLS,
 * agora_world_tools, what `agora tools` prints), the API-5 options checked, and agora_run_until_interrupt
 * ended by a tick. The host itself (AGORA_HOST) is driven through `agora host` by the test_nats* tests. */
#include "agora.h"
#include "support/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Two agents: built-in tools, one asked first; a server that exits at once. */
static const char toolbox[] =
  "{\"name\": \"Box\", \"mcp_servers\": {\"bad\": {\"command\": \"sh\", \"args\": [\"-c\", \"exit 3\"]}},"
  " \"agents\": [{\"name\": \"k\", \"replies\": [\"hi\"],"
  " \"tools\": [\"ask_human\", {\"name\": \"save_context\", \"approve\": true}]},"
  " {\"name\": \"bare\", \"replies\": [\"hi\"]}]}";

static agora_options tools_opts(void) {
  return (agora_options){.flags = AGORA_OPTIONS_3 | AGORA_OPTIONS_5 | AGORA_TOOLS, .program = "tools"};
}

static void tools_listed_without_a_database(void) {
  char *db = unit_tmpdir(), *json = NULL, data[4200];
  agora_options o = tools_opts();
  agora_world *w = NULL;
  CHECK_INT(agora_world_open(toolbox, db, &o, &w), AGORA_OK);
  if (!w) return;
  CHECK_INT(agora_world_tools(w, &json), AGORA_OK);
  /* built-in tools in the tool table's order; the server's error is its own (it may die before or after
   * the first request) */
  const char *want[] = {"{\"agents\":[{\"name\":\"k\",\"tools\":[{\"name\":\"save_context\",\"source\":\"built-in\","
                        "\"approve\":true,\"description\":\"Save what",
                        "{\"name\":\"ask_human\",\"source\":\"built-in\",\"approve\":false,",
                        "\"input_schema\":{\"type\":\"object\"", "{\"name\":\"bare\",\"tools\":[]}]",
                        "\"servers\":[{\"name\":\"bad\",\"ready\":false,\"error\":\"", NULL};
  for (size_t i = 0; json && want[i]; i++)
    if (!strstr(json, want[i])) unit_fail_(__FILE__, __LINE__, "%s lacks %s", json, want[i]);
  agora_free(json);
  /* no agent runs in it, and nothing was stored: no database in db_dir */
  CHECK_INT(agora_publish(w, "human", "@k hello"), AGORA_ERR_STATE);
  CHECK(strstr(agora_errmsg(), "AGORA_TOOLS") != NULL);
  CHECK(agora_chat_current(w) == NULL);
  agora_world_close(w);
  snprintf(data, sizeof data, "%s/data.mdb", db);
  CHECK(access(data, F_OK) != 0);
  unit_rmrf(db);
  free(db);
}

/* Any world hands its tools out; its servers are none when they were not started. */
static void tools_of_an_ordinary_world(void) {
  char *json = NULL;
  agora_world *w = NULL;
  agora_options o = {.flags = AGORA_NO_SAVE | AGORA_NO_MCP};
  CHECK_INT(agora_world_open(toolbox, NULL, &o, &w), AGORA_OK);
  if (!w) return;
  CHECK_INT(agora_world_tools(w, &json), AGORA_OK);
  CHECK(json && strstr(json, "\"servers\":[]}") && strstr(json, "\"name\":\"save_context\""));
  agora_free(json);
  CHECK_INT(agora_world_tools(w, NULL), AGORA_ERR_INVALID);
  agora_world_close(w);
}

/* A stored world's name needs the database, which AGORA_TOOLS never opens: said as `agora tools` says it. */
static void tools_names_a_file(void) {
  agora_options o = tools_opts();
  agora_world *w = NULL;
  CHECK_INT(agora_world_open("no-such-world", NULL, &o, &w), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "tools: no world file 'no-such-world', and a stored world's id or name needs the database");
  CHECK(w == NULL);
}

static void api5_options_checked(void) {
  agora_world *w = NULL;
  agora_options both = {.flags = AGORA_OPTIONS_5 | AGORA_TOOLS | AGORA_HOST};
  CHECK_INT(agora_world_open(toolbox, NULL, &both, &w), AGORA_ERR_INVALID);
  CHECK(strstr(agora_errmsg(), "AGORA_TOOLS and AGORA_HOST") != NULL);
  agora_options host = {.flags = AGORA_OPTIONS_5 | AGORA_HOST | AGORA_NO_SAVE};
  CHECK_INT(agora_world_open(toolbox, NULL, &host, &w), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_options.nats_url: AGORA_HOST needs the NATS server to join");
  agora_options lease = {.flags = AGORA_OPTIONS_4 | AGORA_OPTIONS_5 | AGORA_HOST | AGORA_NO_SAVE,
                         .nats_url = "nats://127.0.0.1:1", .nats_lease_ms = 50};
  CHECK_INT(agora_world_open(toolbox, NULL, &lease, &w), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_options.nats_lease_ms: 50, expected 300 to 600000 (0: 3000)");
  agora_options chat = {.flags = AGORA_OPTIONS_4 | AGORA_OPTIONS_5 | AGORA_HOST, .nats_url = "nats://127.0.0.1:1",
                        .chat = "abc"};
  CHECK_INT(agora_world_open(toolbox, NULL, &chat, &w), AGORA_ERR_INVALID);
  CHECK(strstr(agora_errmsg(), "agora_options.chat: not with AGORA_HOST") != NULL);
  agora_options tchat = {.flags = AGORA_OPTIONS_5 | AGORA_TOOLS, .chat = "abc"};
  CHECK_INT(agora_world_open(toolbox, NULL, &tchat, &w), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_options.chat: not with AGORA_TOOLS (it opens no chat)");
  /* without AGORA_OPTIONS_5 the API-5 flags are not read (the growth rule): an ordinary world opens */
  agora_options old = {.flags = AGORA_NO_SAVE | AGORA_NO_MCP | AGORA_TOOLS};
  CHECK_INT(agora_world_open(toolbox, NULL, &old, &w), AGORA_OK);
  if (w) CHECK_INT(agora_publish(w, "human", "hello"), AGORA_OK);
  agora_world_close(w);
}

/* A host's loop: quiet or not it runs, until a tick (a signal handler's flag) interrupts it. */
static void stop_on_third(agora_world *w, void *ctx) {
  if (++*(int *)ctx == 3) agora_interrupt(w);
}

static void run_until_interrupt_by_a_tick(void) {
  agora_world *w = NULL;
  agora_options o = {.flags = AGORA_NO_SAVE | AGORA_NO_MCP};
  int ticks = 0;
  CHECK_INT(agora_world_open(toolbox, NULL, &o, &w), AGORA_OK);
  if (!w) return;
  CHECK_INT(agora_run_until_interrupt(w), AGORA_ERR_STATE); /* a quiet world with nothing to wait for */
  CHECK_INT(agora_tick(w, 10, stop_on_third, &ticks), AGORA_OK);
  CHECK_INT(agora_run_until_interrupt(w), AGORA_OK);
  CHECK_INT(ticks, 3);
  agora_interrupt(w); /* before the call: it returns at once */
  CHECK_INT(agora_run_until_interrupt(w), AGORA_OK);
  CHECK_INT(ticks, 3);
  agora_world_close(w);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {UNIT(tools_listed_without_a_database), UNIT(tools_of_an_ordinary_world),
                                    UNIT(tools_names_a_file), UNIT(api5_options_checked),
                                    UNIT(run_until_interrupt_by_a_tick)};
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
