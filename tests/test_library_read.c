/* What a server reads beside its worlds (API version 10, include/agora_server.h), as agora serve's GET
 * …/graph and /metrics read it: a stored chat's graph on the loop's database handle, a world's counts
 * since the open, the handle's commits. One world answering from the loopback LLM server (tokens
 * reported). Linked against libagora.so, nothing internal included. */
#include "agora.h"
#include "support/llm_server.h"
#include "support/unit.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void graph_and_counts(void) {
  llm_server *srv = NULL;
  CHECK_INT(llm_server_start(&srv), 0);
  if (!srv) return;
  llm_server_rule(srv, NULL, "reply=\"@human hello\"");
  setenv("AGORA_TEST_KEY", "k", 1);
  char json[1024], *db = unit_tmpdir(), *counts = NULL, *graph = NULL, *small = NULL, *dbc = NULL;
  snprintf(json, sizeof json, "{\"name\": \"Counted\", \"agents\": [{\"name\": \"ann\", \"provider\": \"openai\", "
           "\"model\": \"m\", \"base_url\": \"%s\", \"api_key_env\": \"AGORA_TEST_KEY\"}]}", llm_server_url(srv, "/v1"));
  struct event_base *L = event_base_new();
  agora_world *w = NULL;
  agora_db *d = NULL;
  CHECK_INT(agora_world_open(json, db, &(agora_options){.flags = AGORA_OPTIONS_8, .loop = L}, &w), AGORA_OK);
  if (!w) goto done;
  CHECK_INT(agora_publish(w, "human", "@ann hi"), AGORA_OK);
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  CHECK_INT(agora_world_counts(w, &counts), AGORA_OK);
  CHECK_HAS(counts ? counts : "", "\"agents\":1", "\"thinking\":0", "\"messages\":2", "\"llm_calls_done\":1",
            "\"llm_calls_failed\":0");
  CHECK(counts && !strstr(counts, "\"input_tokens\":0")); /* the server reports usage */
  CHECK_INT(agora_loop_db(L, db, &d), AGORA_OK);
  if (!d) goto done;
  CHECK_INT(agora_db_counts(d, &dbc), AGORA_OK); /* the handle the world writes through */
  CHECK(dbc && !strstr(dbc, "\"commits\":0"));
  const char *chat = agora_chat_current(w);
  CHECK_INT(agora_db_chat_graph(d, chat, 0, 0, &graph), AGORA_OK);
  CHECK_HAS(graph ? graph : "", "\"last_seq\":2", "{\"id\":\"ann\",\"messages\":1", "{\"id\":\"human\",\"messages\":1",
            "{\"from\":\"ann\",\"to\":\"human\",\"messages\":1}", "\"more_nodes\":0", "\"timeline\":null");
  CHECK_INT(agora_db_chat_graph(d, chat, 1, 1, &small), AGORA_OK); /* cut: the busiest sender, one point */
  CHECK_HAS(small ? small : "", "\"more_nodes\":1", "\"seqs\":[2]");
  CHECK_INT(agora_db_chat_graph(d, chat, 501, 0, &small), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "agora_db_chat_graph", "nodes", "500");
  CHECK_INT(agora_db_chat_graph(d, chat, 0, 1001, &small), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "points", "1000");
  CHECK_INT(agora_db_chat_graph(d, "zzzz", 0, 0, &small), AGORA_ERR_NOT_FOUND);
  CHECK_INT(agora_db_chat_graph(d, NULL, 0, 0, &small), AGORA_ERR_INVALID);
done:
  agora_free(counts), agora_free(graph), agora_free(small), agora_free(dbc);
  agora_db_close(d);
  agora_world_close(w);
  event_base_free(L);
  llm_server_stop(srv);
  unit_rmrf(db);
  free(db);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {UNIT(graph_and_counts)};
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
