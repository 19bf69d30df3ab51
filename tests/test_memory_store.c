/* A hosted embedder's vectors are kept (issue 26, docs/memory.md "Stored vectors"): reopening a chat — a
 * second `agora say`, `run --chat` on a branch — sends the embedder only the texts it never embedded, through
 * the loopback LLM server's /embeddings route, whose requests and texts are counted; `agora memory --query`
 * embeds its query there and ranks by relevance. */
#include "support/llm_server.h"
#include "support/proc.h"
#include "support/serve_client.h"
#include "support/suite.h"
#include "support/unit.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *tmp;
static llm_server *srv;

#define BRIDGE "@mayor the bridge is closed"
#define APPLES "@mayor apples are cheap"
#define FISH "@mayor fish for dinner"

/* The mayor answers "noted" every time, so that a later turn's reply is a text embedded already; window 2,
 * so that the first message is retrieved, not in the window, from the second turn on. Recency weighs
 * little, so that relevance decides a query's order. */
static const char *mayor_world(const char *name, const char *script) {
  static char json[2048];
  snprintf(json, sizeof json,
           "{\"name\": \"town\", \"memory_window\": 2, \"agents\": [{\"name\": \"mayor\", \"provider\": \"openai\","
           " \"model\": \"m\", \"base_url\": \"%s\", \"memory\": {\"mode\": \"stream\", \"weights\": {\"recency\":"
           " 0.1, \"importance\": 1, \"relevance\": 1}, \"embedder\": {\"provider\":"
           " \"openai\", \"base_url\": \"%s\", \"api_key_env\": \"\"}}}], \"script\": [%s]}",
           llm_server_url(srv, "/v1"), llm_server_url(srv, "/v1"), script);
  return suite_file(tmp, name, json);
}

/* The texts sent to /embeddings since the last reset, one per line, into out; returns the requests. */
static size_t embedded(char *out, size_t cap) {
  size_t reqs = 0, n = 0;
  out[0] = '\0';
  for (size_t i = 0; i < llm_server_request_count(srv); i++) {
    llm_server_request r;
    if (llm_server_request_get(srv, i, &r)) continue;
    cJSON *j = strstr(r.path, "/embeddings") ? cJSON_Parse(r.body) : NULL;
    const cJSON *t;
    reqs += j != NULL;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(j, "input")) n += (size_t)snprintf(
        out + n, n < cap ? cap - n : 0, "%s\n", cJSON_GetStringValue(t) ? cJSON_GetStringValue(t) : "?");
    cJSON_Delete(j);
    llm_server_request_free(&r);
  }
  return reqs;
}

/* Lines of text (each ending in \n). */
static int lines(const char *text) {
  int n = 0;
  for (const char *p = text; *p; p++) n += *p == '\n';
  return n;
}

/* Runs agora args (it must succeed) after a reset of the server; *texts gets what was embedded. */
static size_t turn(const char *const *args, char *texts, size_t cap) {
  llm_server_reset(srv);
  llm_server_rule(srv, NULL, "reply=noted");
  proc_result r;
  PROC_OK(args, NULL, NULL, &r);
  proc_result_free(&r);
  return embedded(texts, cap);
}

/* The system prompt of the last chat call holds want among the remembered memories. */
static void remembers(const char *want) {
  size_t n = llm_server_request_count(srv);
  llm_server_request r;
  CHECK(n && !llm_server_request_get(srv, n - 1, &r));
  if (!n) return;
  CHECK(strstr(r.path, "/chat/completions") != NULL);
  const char *section = strstr(r.body, "What you remember from earlier");
  CHECK(section && strstr(section, want));
  llm_server_request_free(&r);
}

static void reopened_chats_embed_only_new_texts(void) {
  char *db = suite_fresh(tmp, "db");
  const char *w = mayor_world("town.json", "");
  char texts[8192];
  const char *say1[] = {"say", w, BRIDGE, "--db", db, NULL};
  CHECK_INT(turn(say1, texts, sizeof texts), 1);
  CHECK_STR(texts, BRIDGE "\n"); /* the memory and the question: one text */
  /* A new process on the same chat: the first message is not sent again; the first reply (a memory made
   * after that turn's request) and the new message (a memory and the question, once) are. The old code
   * sent the first message once more. */
  const char *say2[] = {"say", w, APPLES, "--db", db, NULL};
  CHECK_INT(turn(say2, texts, sizeof texts), 1);
  CHECK_STR(texts, "noted\n" APPLES "\n");
  remembers("human: " BRIDGE); /* retrieved with its kept vector */
  /* Every text known: no request at all, and the turn is answered with retrieval. */
  const char *say3[] = {"say", w, BRIDGE, "--db", db, NULL};
  CHECK_INT(turn(say3, texts, sizeof texts), 0);
  CHECK_INT(lines(texts), 0);
  remembers("human: " APPLES);
  /* A branch at the first answer, opened by run --chat: its memories were embedded in the source chat. */
  proc_result r;
  cJSON *chats = proc_chats_list(db);
  CHECK_INT(cJSON_GetArraySize(chats), 1);
  const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(chats, 0), "id"));
  char chat[128];
  snprintf(chat, sizeof chat, "%s", id ? id : "?");
  cJSON_Delete(chats);
  const char *branch[] = {"chats", "branch", chat, "--at", "2", "--db", db, NULL};
  PROC_OK(branch, NULL, NULL, &r);
  char copy[128];
  snprintf(copy, sizeof copy, "%.*s", (int)strcspn(r.out ? r.out : "", "\n"), r.out ? r.out : "");
  proc_result_free(&r);
  const char *fish = mayor_world("fish.json", "{\"from\": \"human\", \"text\": \"" FISH "\"}");
  const char *run[] = {"run", fish, "--db", db, "--chat", copy, NULL};
  CHECK_INT(turn(run, texts, sizeof texts), 1);
  CHECK_STR(texts, FISH "\n");
  free(db);
}

/* run --no-save writes nothing to the data directory: no vectors kept, so a second run embeds again. */
static void no_save_keeps_no_vectors(void) {
  char *db = suite_fresh(tmp, "nosave");
  const char *w = mayor_world("nosave.json", "{\"from\": \"human\", \"text\": \"" BRIDGE "\"}");
  char texts[8192], cache[4096];
  const char *run[] = {"run", w, "--db", db, "--no-save", NULL};
  CHECK_INT(turn(run, texts, sizeof texts), 1);
  CHECK_INT(turn(run, texts, sizeof texts), 1);
  CHECK_STR(texts, BRIDGE "\n");
  snprintf(cache, sizeof cache, "%s/llm-cache", db);
  CHECK(access(cache, F_OK) != 0);
  free(db);
}

/* The loopback embedder's vectors are (length, 1, count of 'e'): EES points where QUERY does, NOPE and
 * "noted" elsewhere. */
#define EES "@mayor eee eee eee eee"
#define NOPE "@mayor no bridge today"
#define QUERY "see free tree"

/* agora memory --query with a hosted embedder embeds the query (once; the memories' vectors are kept) and
 * ranks by relevance: the memory the query matches comes first. The old code sent nothing and ranked
 * without relevance (0): seconds apart, recency and importance tie, and NOPE, said first, came first. */
static void memory_query_ranks_by_relevance(void) {
  char *db = suite_fresh(tmp, "query");
  const char *w = mayor_world("query.json", "");
  char texts[8192], chat[128];
  const char *say1[] = {"say", w, EES, "--db", db, NULL}, *say2[] = {"say", w, NOPE, "--db", db, NULL};
  turn(say2, texts, sizeof texts); /* first: with no relevance, ties keep the stream's order */
  turn(say1, texts, sizeof texts);
  CHECK(!proc_first_chat(db, chat, sizeof chat));
  const char *mem[] = {"memory", chat, "mayor", "--query", QUERY, "--json", "--db", db, NULL};
  CHECK_INT(turn(mem, texts, sizeof texts), 1);
  CHECK_STR(texts, QUERY "\n");
  proc_result r;
  PROC_OK(mem, NULL, NULL, &r);
  cJSON *first = cJSON_Parse(r.out ? r.out : "");
  const cJSON *scores = cJSON_GetObjectItem(first, "scores");
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(first, "text")), EES);
  CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(scores, "relevance")) > 0.99);
  cJSON_Delete(first);
  proc_result_free(&r);
  /* A failing embedder: the listing still comes, without relevance, with the embedder's error and 1. */
  const char *bad[] = {"memory", chat, "mayor", "--query", "fail-embed " QUERY, "--json", "--db", db, NULL};
  CHECK_INT(proc_agora(bad, NULL, NULL, &r), 0);
  CHECK_INT(r.status, 1);
  CHECK(r.err && strstr(r.err, "without relevance") && strstr(r.err, "embedding failed"));
  first = cJSON_Parse(r.out ? r.out : "");
  CHECK(cJSON_GetObjectItem(first, "scores") != NULL);
  CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(first, "scores"), "relevance")) == 0);
  cJSON_Delete(first);
  proc_result_free(&r);
  /* The HTTP route sends no request (a GET: docs/decisions.md) and says why relevance is left out. */
  serve_proc sp;
  const char *sargs[] = {w, "--db", db, NULL};
  char path[512];
  snprintf(path, sizeof path, "/api/worlds/town/chats/%s/agents/mayor/memory?query=see%%20free%%20tree", chat);
  llm_server_reset(srv);
  if (!SERVE_START(tmp, sargs, NULL, &sp)) {
    cJSON *j = SERVE_EXPECT(&sp, "GET", path, NULL, 200, "relevance_left_out");
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(j, "memories")) == 4);
    cJSON_Delete(j);
    CHECK_INT(serve_proc_stop(&sp), 0);
  }
  CHECK_INT(embedded(texts, sizeof texts), 0);
  free(db);
}

static const unit_test tests[] = {
    UNIT(reopened_chats_embed_only_new_texts),
    UNIT(no_save_keeps_no_vectors),
    UNIT(memory_query_ranks_by_relevance),
};

int main(int argc, char **argv) { return suite_main(argc, argv, &(suite){SUITE_TESTS(tests), .tmp = &tmp, .srv = &srv}); }
