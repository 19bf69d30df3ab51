/* agora serve's API that builds and steers worlds (issue 24): a world posted as a document (checked as a
 * file, stored, never starting a program), its settings and agents changed, deleted with its chats; a
 * human message edited and sent again, messages deleted, the last turn retried (the console's /edit and
 * /retry); a world's MCP servers listed and restarted. Bad input for each: malformed JSON (400), unknown
 * world, agent, chat or message (404), a change while replies are in flight (409), a bad field (422,
 * naming its JSON path). A real server process on loopback. */
#include "support/serve_client.h"
#include "support/suite.h"
#include "support/unit.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXPECT(...) cJSON_Delete(SERVE_EXPECT(__VA_ARGS__))

static char *tmp;
static llm_server *srv;

/* The string key of j, or "" (never NULL). */
static const char *str_of(const cJSON *j, const char *key) {
  const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, key));
  return v ? v : "";
}

/* A script agent that answers every message (r1, r2, ...) and one that waits for an approval. */
static const char shop[] =
  "{\"name\": \"Shop\", \"agents\": [{\"name\": \"a\", \"provider\": \"script\", \"replies\": [\"r1\", \"r2\", \"r3\","
  " \"r4\", \"r5\", \"r6\", \"r7\", \"r8\"]}, {\"name\": \"b\", \"provider\": \"script\", \"replies\": [\"b1\"]}],"
  " \"main_agent\": \"a\"}";
static const char careful[] =
  "{\"name\": \"Careful\", \"agents\": [{\"name\": \"careful\", \"provider\": \"script\", \"tools\": ["
  "{\"name\": \"save_context\", \"approve\": true}], \"replies\": ["
  "{\"tool\": \"save_context\", \"args\": {\"message\": \"x\"}}, \"done\"]}]}";

/* Serves the world file text (named name, in tmp) on its own database, or only the database (text NULL). */
static int serve_world(const char *name, const char *text, serve_proc *sp) {
  static char path[1024], db[1024];
  snprintf(path, sizeof path, "%s/%s.json", tmp, name);
  snprintf(db, sizeof db, "%s/db-%s", tmp, name);
  const char *with[] = {path, "--db", db, NULL}, *without[] = {"--db", db, NULL};
  int rc = text ? unit_write_file(path, text) : 0;
  if (!rc) rc = serve_proc_start(tmp, text ? with : without, NULL, sp);
  if (rc) unit_fail_(__FILE__, __LINE__, "agora serve did not start with %s", text ? path : db);
  return rc ? -1 : 0;
}

/* Sends text as the human and waits until the current chat holds count messages; its id into chat. */
static void say(const serve_proc *sp, const char *world, const char *text, int count, char chat[128]) {
  char path[256], body[512], needle[64];
  snprintf(path, sizeof path, "/api/worlds/%s/messages", world);
  snprintf(body, sizeof body, "{\"text\": \"%s\"}", text);
  cJSON *j = SERVE_EXPECT(sp, "POST", path, body, 202, NULL);
  snprintf(chat, 128, "%s", str_of(j, "chat"));
  cJSON_Delete(j);
  snprintf(path, sizeof path, "/api/worlds/%s/chats/%s/messages", world, chat);
  snprintf(needle, sizeof needle, "\"message_count\":%d", count);
  j = serve_poll_json(sp, path, needle, 5000);
  if (!j) unit_fail_(__FILE__, __LINE__, "%s never held %d messages", chat, count);
  cJSON_Delete(j);
}

/* The text of message seq of chat (a static buffer; "" when there is none). */
static const char *text_at(const serve_proc *sp, const char *world, const char *chat, int seq) {
  static char text[256];
  char path[256];
  long st;
  snprintf(path, sizeof path, "/api/worlds/%s/chats/%s/messages?after=%d&limit=1", world, chat, seq - 1);
  cJSON *j = serve_call_json(sp, "GET", path, NULL, &st);
  const cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "messages"), 0);
  snprintf(text, sizeof text, "%s", str_of(m, "text"));
  cJSON_Delete(j);
  return text;
}

/* POST /api/worlds: checked exactly as a file (422 naming the path), stored, not loaded, its MCP servers
 * never started (the detail says why); then it runs like any stored world. */
static void create_world(void) {
  serve_proc sp;
  if (serve_world("empty", NULL, &sp)) return;
  EXPECT(&sp, "POST", "/api/worlds", "{\"name\": \"New\",", 400, "not valid JSON");
  EXPECT(&sp, "POST", "/api/worlds", "", 400, "\"code\":\"bad_request\"");
  EXPECT(&sp, "POST", "/api/worlds", "[1]", 400, "must be a JSON object");
  EXPECT(&sp, "POST", "/api/worlds", "{}", 422, "empty object");
  EXPECT(&sp, "POST", "/api/worlds", "{\"name\": \"New\", \"agents\": [{\"name\": \"x\", \"provider\": \"script\"},"
         " {\"name\": \"y\", \"provider\": \"nope\"}]}", 422, "agents[1].provider: unknown provider 'nope'");
  EXPECT(&sp, "POST", "/api/worlds", "{\"name\": \"New\", \"turn_limit\": 0}", 422, "turn_limit");
  EXPECT(&sp, "POST", "/api/worlds", "{\"name\": \"New\", \"colour\": 1}", 422, "colour");
  const char *doc = "{\"name\": \"New\", \"mcp_servers\": {\"files\": {\"command\": \"/bin/false\"}},"
                    " \"agents\": [{\"name\": \"x\", \"provider\": \"script\", \"replies\": [\"made over http\"]}]}";
  cJSON *j = SERVE_EXPECT(&sp, "POST", "/api/worlds", doc, 201, "\"id\":\"new\"");
  const cJSON *mcp = cJSON_GetObjectItemCaseSensitive(j, "mcp");
  CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(mcp, "started")));
  CHECK(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(mcp, "reason")) != NULL);
  CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "loaded")));
  cJSON_Delete(j);
  EXPECT(&sp, "POST", "/api/worlds", doc, 409, "already");
  EXPECT(&sp, "GET", "/api/worlds", NULL, 200, "\"id\":\"new\"");
  /* its MCP servers: listed, never started, and a restart says why */
  EXPECT(&sp, "GET", "/api/worlds/new/mcp", NULL, 200, "\"state\":\"not started\"");
  EXPECT(&sp, "GET", "/api/worlds/new/mcp", NULL, 200, "\"started\":false");
  EXPECT(&sp, "GET", "/api/worlds/nope/mcp", NULL, 404, "nope");
  EXPECT(&sp, "POST", "/api/worlds/new/mcp/files/restart", NULL, 409, "did not start its MCP servers");
  EXPECT(&sp, "POST", "/api/worlds/new/mcp/other/restart", NULL, 404, "other");
  char chat[128];
  say(&sp, "new", "hello", 2, chat);
  CHECK_STR(text_at(&sp, "new", chat, 2), "made over http");
  EXPECT(&sp, "GET", "/api/worlds/new", NULL, 200, "\"started\":false");
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* PATCH /api/worlds/{id}: turn limit, main agent, memory window and variables, checked as the file's
 * fields are, applied to the loaded world and stored with it. */
static void patch_world(void) {
  serve_proc sp;
  if (serve_world("shop", shop, &sp)) return;
  EXPECT(&sp, "PATCH", "/api/worlds/shop", "{\"turn_limit\": 2,", 400, "not valid JSON");
  EXPECT(&sp, "PATCH", "/api/worlds/shop", "{}", 422, "at least one");
  EXPECT(&sp, "PATCH", "/api/worlds/shop", "{\"turn_limit\": 0}", 422, "turn_limit");
  EXPECT(&sp, "PATCH", "/api/worlds/shop", "{\"main_agent\": \"nobody\"}", 422, "main_agent: 'nobody'");
  EXPECT(&sp, "PATCH", "/api/worlds/shop", "{\"variables\": {\"x\": 1}}", 422, "variables");
  EXPECT(&sp, "PATCH", "/api/worlds/shop", "{\"name\": \"Other\"}", 422, "unknown field 'name'");
  EXPECT(&sp, "PATCH", "/api/worlds/nope", "{\"turn_limit\": 2}", 404, "nope");
  cJSON *j = SERVE_EXPECT(&sp, "PATCH", "/api/worlds/shop", "{\"turn_limit\": 2, \"main_agent\": \"b\", \"memory_window\": 3,"
                          " \"variables\": {\"city\": \"Lyon\"}}", 200, "\"turn_limit\":2");
  const cJSON *set = cJSON_GetObjectItemCaseSensitive(j, "settings");
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(set, "main_agent")), "b");
  CHECK_INT(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(set, "memory_window")), 3);
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(set, "variables"), "city")), "Lyon");
  cJSON_Delete(j);
  /* a budget and a setting in one request */
  EXPECT(&sp, "PATCH", "/api/worlds/shop", "{\"budget\": {\"tokens\": 1000}, \"turn_limit\": 4}", 200, "\"limit_tokens\":1000");
  EXPECT(&sp, "GET", "/api/worlds/shop", NULL, 200, "\"turn_limit\":4");
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* POST/PATCH/DELETE …/agents: validated as the world file validates an agent; the new agent answers. */
static void agents(void) {
  serve_proc sp;
  if (serve_world("agents", shop, &sp)) return;
  EXPECT(&sp, "POST", "/api/worlds/shop/agents", "{\"name\": \"c\"", 400, "not valid JSON");
  EXPECT(&sp, "POST", "/api/worlds/shop/agents", "{\"name\": \"c\", \"provider\": \"nope\"}", 422, "agents[2].provider");
  EXPECT(&sp, "POST", "/api/worlds/shop/agents", "{\"provider\": \"script\"}", 422, "agents[2].name: missing");
  EXPECT(&sp, "POST", "/api/worlds/shop/agents", "{\"name\": \"c\", \"temperature\": 3}", 422, "temperature");
  EXPECT(&sp, "POST", "/api/worlds/shop/agents", "{\"name\": \"c\", \"wings\": 2}", 422, "wings");
  EXPECT(&sp, "POST", "/api/worlds/shop/agents", "{\"name\": \"A\", \"provider\": \"script\"}", 409, "already (PATCH it instead)");
  EXPECT(&sp, "POST", "/api/worlds/nope/agents", "{\"name\": \"c\"}", 404, "nope");
  EXPECT(&sp, "POST", "/api/worlds/shop/agents", "{\"name\": \"c\", \"provider\": \"script\", \"replies\": [\"c here\"],"
         " \"system_prompt\": \"be brief\"}", 201, "\"system_prompt\":\"be brief\"");
  EXPECT(&sp, "GET", "/api/worlds/shop", NULL, 200, "\"id\":\"c\"");
  char chat[128];
  say(&sp, "shop", "@c hello", 2, chat);
  CHECK_STR(text_at(&sp, "shop", chat, 2), "c here");
  EXPECT(&sp, "PATCH", "/api/worlds/shop/agents/c", "{\"model\": \"m2\", \"temperature\": 0.5}", 200, "\"model\":\"m2\"");
  EXPECT(&sp, "PATCH", "/api/worlds/shop/agents/c", "{\"temperature\": 5}", 422, "agents[2].temperature");
  EXPECT(&sp, "PATCH", "/api/worlds/shop/agents/c", "{\"name\": \"d\"}", 422, "unknown field 'name'");
  EXPECT(&sp, "PATCH", "/api/worlds/shop/agents/c", "{}", 422, "at least one");
  EXPECT(&sp, "PATCH", "/api/worlds/shop/agents/nobody", "{\"model\": \"m\"}", 404, "nobody");
  EXPECT(&sp, "PATCH", "/api/worlds/shop/agents/c", "{\"model\": ", 400, "not valid JSON");
  EXPECT(&sp, "PATCH", "/api/worlds/nope/agents/c", "{\"model\": \"m\"}", 404, "nope");
  EXPECT(&sp, "DELETE", "/api/worlds/nope/agents/c", NULL, 404, "nope");
  EXPECT(&sp, "GET", "/api/worlds/shop", NULL, 200, "\"model\":\"m2\"");
  cJSON *j = SERVE_EXPECT(&sp, "PATCH", "/api/worlds/shop/agents/c", "{\"model\": null}", 200, NULL);
  CHECK(j && !cJSON_GetObjectItemCaseSensitive(j, "model")); /* back to the provider's default */
  CHECK_INT(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "temperature")) * 10, 5);
  cJSON_Delete(j);
  EXPECT(&sp, "DELETE", "/api/worlds/shop/agents/a", NULL, 409, "main_agent");
  EXPECT(&sp, "DELETE", "/api/worlds/shop/agents/c", NULL, 200, "\"deleted\":\"c\"");
  EXPECT(&sp, "DELETE", "/api/worlds/shop/agents/c", NULL, 404, "no agent 'c'");
  j = SERVE_EXPECT(&sp, "GET", "/api/worlds/shop", NULL, 200, NULL);
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "agents")), 2);
  cJSON_Delete(j);
  EXPECT(&sp, "POST", "/api/worlds/shop/agents", "{\"name\": \"Dee\", \"provider\": \"script\"}", 201, NULL);
  CHECK_INT(serve_proc_stop(&sp), 0);
  /* stored with the world: a server started again on the database (not the file) has the change */
  if (serve_world("agents", NULL, &sp)) return;
  j = SERVE_EXPECT(&sp, "GET", "/api/worlds/shop", NULL, 200, "\"name\":\"Dee\"");
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "agents")), 3);
  cJSON_Delete(j);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* Whether agent id of world is key_withheld in GET /api/worlds/{world}: 1, 0, or -1 when it is not there. */
static int withheld(const serve_proc *sp, const char *world, const char *id) {
  char path[256];
  snprintf(path, sizeof path, "/api/worlds/%s", world);
  cJSON *j = SERVE_EXPECT(sp, "GET", path, NULL, 200, NULL);
  const cJSON *ag;
  int out = -1;
  cJSON_ArrayForEach(ag, cJSON_GetObjectItemCaseSensitive(j, "agents"))
    if (!strcmp(str_of(ag, "id"), id)) out = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ag, "key_withheld"));
  cJSON_Delete(j);
  return out;
}

/* A key goes where the person said: an agent of the file named on the command line keeps its base_url's
 * key through a change over HTTP; an agent posted over HTTP with a base_url of its own gets no key, before
 * and after a change. */
static void keys_over_http(void) {
  serve_proc sp;
  const char *text = "{\"name\": \"Trusted\", \"agents\": [{\"name\": \"o\", \"provider\": \"openai\", \"model\": \"m\","
                     " \"base_url\": \"http://127.0.0.1:9/v1\"}]}";
  if (serve_world("trusted", text, &sp)) return;
  CHECK_INT(withheld(&sp, "trusted", "o"), 0);
  EXPECT(&sp, "PATCH", "/api/worlds/trusted/agents/o", "{\"model\": \"m2\"}", 200, NULL);
  CHECK_INT(withheld(&sp, "trusted", "o"), 0);
  EXPECT(&sp, "POST", "/api/worlds/trusted/agents", "{\"name\": \"p\", \"provider\": \"openai\", \"model\": \"m\","
         " \"base_url\": \"http://127.0.0.1:9/v1\"}", 201, NULL);
  CHECK_INT(withheld(&sp, "trusted", "p"), 1);
  EXPECT(&sp, "PATCH", "/api/worlds/trusted/agents/p", "{\"model\": \"m2\"}", 200, NULL);
  CHECK_INT(withheld(&sp, "trusted", "p"), 1);
  EXPECT(&sp, "POST", "/api/worlds/trusted/agents", "{\"name\": \"q\", \"provider\": \"openai\", \"model\": \"m\","
         " \"api_key_env\": \"HOME\"}", 422, "agents[2].api_key_env: 'HOME' is not an API key variable");
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* A world posted over HTTP whose embedder has a base_url of its own: its embedder gets no key, before and
 * after a change of the agent over HTTP (before, the change gave it the key: only the chat calls' rule was
 * kept). The embedder's requests are made (it is asked, keyless), so the check is not vacuous. */
static void embedder_key_over_http(void) {
  char *db = suite_fresh(tmp, "db-embed-key"), doc[2048], chat[128];
  const char *args[] = {"--db", db, NULL}, *env[] = {"AGORA_EMBED_KEY=sk-embed-secret", NULL};
  serve_proc sp;
  if (SERVE_START(tmp, args, env, &sp)) {
    free(db);
    return;
  }
  snprintf(doc, sizeof doc,
           "{\"name\": \"Posted\", \"agents\": [{\"name\": \"m\", \"provider\": \"openai\", \"model\": \"m\","
           " \"base_url\": \"%s\", \"api_key_env\": \"\", \"memory\": {\"mode\": \"stream\", \"embedder\":"
           " {\"provider\": \"openai\", \"base_url\": \"%s\", \"api_key_env\": \"AGORA_EMBED_KEY\"}}}]}",
           llm_server_url(srv, "/v1"), llm_server_url(srv, "/v1"));
  llm_server_reset(srv);
  llm_server_rule(srv, NULL, "reply=noted");
  EXPECT(&sp, "POST", "/api/worlds", doc, 201, NULL);
  EXPECT(&sp, "POST", "/api/worlds/posted/load", NULL, 200, NULL);
  say(&sp, "posted", "@m one", 2, chat);
  EXPECT(&sp, "PATCH", "/api/worlds/posted/agents/m", "{\"model\": \"m2\"}", 200, NULL);
  say(&sp, "posted", "@m two", 4, chat);
  CHECK_INT(llm_server_requests_with(srv, "/embeddings", NULL), 2);
  CHECK_INT(llm_server_requests_with(srv, NULL, "sk-embed-secret"), 0);
  CHECK_INT(serve_proc_stop(&sp), 0);
  free(db);
}

/* PUT/DELETE …/messages/{seq} and POST …/retry: the console's /edit and /retry over HTTP. */
static void edit_delete_retry(void) {
  serve_proc sp;
  if (serve_world("edit", shop, &sp)) return;
  char chat[128], path[256];
  say(&sp, "shop", "@a one", 2, chat);
  say(&sp, "shop", "@a two", 4, chat);
  snprintf(path, sizeof path, "/api/worlds/shop/chats/%s/messages/3", chat);
  EXPECT(&sp, "PUT", path, "{\"text\": ", 400, "not valid JSON");
  EXPECT(&sp, "PUT", path, "{\"words\": \"x\"}", 422, "words");
  EXPECT(&sp, "PUT", path, "{\"text\": \"\"}", 422, "text");
  cJSON *j = SERVE_EXPECT(&sp, "PUT", path, "{\"text\": \"@a TWO\"}", 202, "\"kept\":2");
  CHECK_INT(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "seq")), 3);
  cJSON_Delete(j);
  snprintf(path, sizeof path, "/api/worlds/shop/chats/%s/messages", chat);
  cJSON_Delete(j = serve_poll_json(&sp, path, "\"message_count\":4", 5000));
  CHECK(j != NULL);
  /* answered afresh: the agent's state went back to what it was after message 2 */
  CHECK_STR(text_at(&sp, "shop", chat, 3), "@a TWO");
  CHECK_STR(text_at(&sp, "shop", chat, 4), "r2");
  snprintf(path, sizeof path, "/api/worlds/shop/chats/%s/messages/2", chat);
  EXPECT(&sp, "PUT", path, "{\"text\": \"x\"}", 422, "only a human message");
  snprintf(path, sizeof path, "/api/worlds/shop/chats/%s/messages/99", chat);
  EXPECT(&sp, "PUT", path, "{\"text\": \"x\"}", 404, "no message 99");
  EXPECT(&sp, "DELETE", path, NULL, 404, "no message 99");
  snprintf(path, sizeof path, "/api/worlds/shop/chats/%s/messages/0", chat);
  EXPECT(&sp, "DELETE", path, NULL, 404, NULL);
  EXPECT(&sp, "PUT", "/api/worlds/shop/chats/nochat/messages/1", "{\"text\": \"x\"}", 404, "nochat");
  EXPECT(&sp, "PUT", "/api/worlds/nope/chats/nochat/messages/1", "{\"text\": \"x\"}", 404, "nope");
  EXPECT(&sp, "POST", "/api/worlds/shop/chats/nochat/retry", NULL, 404, "nochat");
  EXPECT(&sp, "POST", "/api/worlds/nope/chats/nochat/retry", NULL, 404, "nope");
  EXPECT(&sp, "PUT", "/api/worlds/shop/chats/nochat/messages/abc", "{\"text\": \"x\"}", 404, "no such route");
  EXPECT(&sp, "POST", "/api/worlds/nope/mcp/x/restart", NULL, 404, "nope");
  /* DELETE: it and those after it; a page following the world hears that the chat changed */
  char url[256];
  snprintf(url, sizeof url, "%s/api/worlds/shop/events", sp.base);
  sse_set *set = sse_set_new();
  sse_open(set, url, NULL, NULL);
  sse_pump(set, 200);
  snprintf(path, sizeof path, "/api/worlds/shop/chats/%s/messages/3", chat);
  EXPECT(&sp, "DELETE", path, NULL, 200, "\"kept\":2");
  CHECK_INT(sse_wait(set, 1, "\"event\":\"chat-loaded\"", 5000), 0);
  sse_set_free(set);
  snprintf(path, sizeof path, "/api/worlds/shop/chats/%s/messages", chat);
  EXPECT(&sp, "GET", path, NULL, 200, "\"message_count\":2");
  /* retry: the last human message sent again */
  snprintf(path, sizeof path, "/api/worlds/shop/chats/%s/retry", chat);
  EXPECT(&sp, "POST", path, NULL, 202, "\"kept\":0");
  snprintf(path, sizeof path, "/api/worlds/shop/chats/%s/messages", chat);
  cJSON_Delete(j = serve_poll_json(&sp, path, "\"message_count\":2", 5000));
  CHECK(j != NULL);
  CHECK_STR(text_at(&sp, "shop", chat, 1), "@a one");
  CHECK(text_at(&sp, "shop", chat, 2)[0] == 'r'); /* a's answer (which one: see docs/serve.md) */
  /* only the current chat */
  j = SERVE_EXPECT(&sp, "POST", "/api/worlds/shop/chats", NULL, 201, NULL);
  cJSON_Delete(j);
  snprintf(path, sizeof path, "/api/worlds/shop/chats/%s/retry", chat);
  EXPECT(&sp, "POST", path, NULL, 409, "not the current chat");
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* While a reply is in flight (an approval waits): an edit, a retry, a delete of a message, a change of
 * settings or agents and a world's deletion are 409; then, once cancelled, they go through. */
static void conflicts_in_flight(void) {
  serve_proc sp;
  if (serve_world("careful", careful, &sp)) return;
  char path[256], chat[128];
  cJSON *j = SERVE_EXPECT(&sp, "POST", "/api/worlds/careful/messages", "{\"text\": \"@careful remember\"}", 202, NULL);
  snprintf(chat, sizeof chat, "%s", str_of(j, "chat"));
  cJSON_Delete(j);
  cJSON_Delete(j = serve_poll_json(&sp, "/api/worlds/careful", "\"approvals\":[{", 5000));
  CHECK(j != NULL);
  snprintf(path, sizeof path, "/api/worlds/careful/chats/%s/messages/1", chat);
  EXPECT(&sp, "PUT", path, "{\"text\": \"@careful forget\"}", 409, "in flight");
  EXPECT(&sp, "DELETE", path, NULL, 409, "in flight");
  snprintf(path, sizeof path, "/api/worlds/careful/chats/%s/retry", chat);
  EXPECT(&sp, "POST", path, NULL, 409, "in flight");
  /* the library's advice said as the API does it (docs/decisions.md "serve on agora.h") */
  EXPECT(&sp, "PATCH", "/api/worlds/careful", "{\"turn_limit\": 3}", 409, "(or POST /api/worlds/careful/cancel)");
  EXPECT(&sp, "POST", "/api/worlds/careful/agents", "{\"name\": \"z\", \"provider\": \"script\"}", 409, "in flight");
  EXPECT(&sp, "PATCH", "/api/worlds/careful/agents/careful", "{\"model\": \"m\"}", 409, "in flight");
  EXPECT(&sp, "DELETE", "/api/worlds/careful?confirm=careful", NULL, 409, "in flight");
  EXPECT(&sp, "POST", "/api/worlds/careful/cancel", NULL, 202, NULL);
  snprintf(path, sizeof path, "/api/worlds/careful/chats/%s/messages/1", chat);
  EXPECT(&sp, "DELETE", path, NULL, 200, "\"kept\":0");
  EXPECT(&sp, "PATCH", "/api/worlds/careful", "{\"turn_limit\": 3}", 200, "\"turn_limit\":3");
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* DELETE /api/worlds/{id}?confirm=ID: without confirm 400, a wrong one 409, an unknown world 404; then
 * the world and its chats are gone, loaded or not. */
static void delete_world(void) {
  serve_proc sp;
  if (serve_world("gone", shop, &sp)) return;
  char chat[128];
  say(&sp, "shop", "@a hi", 2, chat);
  EXPECT(&sp, "POST", "/api/worlds", "{\"name\": \"Spare\", \"agents\": []}", 201, NULL);
  EXPECT(&sp, "DELETE", "/api/worlds/shop", NULL, 400, "?confirm=shop");
  EXPECT(&sp, "DELETE", "/api/worlds/shop?confirm=shops", NULL, 409, "not the world's id");
  EXPECT(&sp, "DELETE", "/api/worlds/nope?confirm=nope", NULL, 404, "nope");
  EXPECT(&sp, "DELETE", "/api/worlds/shop?confirm=shop", NULL, 200, "\"chats\":1");
  EXPECT(&sp, "GET", "/api/worlds/shop", NULL, 404, NULL);
  char path[256];
  snprintf(path, sizeof path, "/api/worlds/shop/chats/%s/messages", chat);
  EXPECT(&sp, "GET", path, NULL, 404, NULL);
  EXPECT(&sp, "DELETE", "/api/worlds/spare?confirm=spare", NULL, 200, "\"chats\":0");
  cJSON *j = SERVE_EXPECT(&sp, "GET", "/api/worlds", NULL, 200, NULL);
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "worlds")), 0);
  cJSON_Delete(j);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* The new routes are behind the same checks as the others: another site's page gets 403, an unknown
 * method 405 with the methods the route takes. */
static void cross_site_refused(void) {
  serve_proc sp;
  if (serve_world("site", shop, &sp)) return;
  static const char *const site[] = {"Sec-Fetch-Site: cross-site", NULL};
  static const char *const origin[] = {"Origin: http://evil.example", NULL};
  const char *const *hdrs[] = {site, origin};
  for (int i = 0; i < 2; i++) {
    http_reply r;
    http_call_h(sp.base, "DELETE", "/api/worlds/shop?confirm=shop", NULL, 0, NULL, hdrs[i], &r);
    CHECK_INT(r.status, 403);
    http_reply_free(&r);
    http_call_h(sp.base, "POST", "/api/worlds", "{\"name\": \"Evil\"}", 16, NULL, hdrs[i], &r);
    CHECK_INT(r.status, 403);
    http_reply_free(&r);
  }
  http_reply r;
  http_call(sp.base, "PATCH", "/api/worlds/shop/chats/x/messages/1", "{}", 2, NULL, &r);
  CHECK_INT(r.status, 405);
  CHECK(r.headers && strstr(r.headers, "Allow: DELETE, PUT") != NULL);
  http_reply_free(&r);
  EXPECT(&sp, "GET", "/api/worlds/shop", NULL, 200, "\"id\":\"shop\"");
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* A world named as a file starts its MCP servers: GET …/mcp shows each one ready with its tools, a
 * restart starts it again (202, then ready again), and deleting the world is refused while they run. */
static void mcp_of_a_file_world(void) {
  char text[2048];
  snprintf(text, sizeof text, "{\"name\": \"Tooled\", \"mcp_servers\": {\"fake\": {\"command\": \"node\", \"args\":"
           " [\"%s\", \"ok\"]}}, \"agents\": [{\"name\": \"t\", \"provider\": \"script\", \"tools\": [\"fake.echo\"]}]}",
           unit_src_path("tests/mcp/fake_server.js"));
  serve_proc sp;
  if (serve_world("tooled", text, &sp)) return;
  cJSON *j = SERVE_EXPECT(&sp, "GET", "/api/worlds/tooled/mcp", NULL, 200, "\"started\":true");
  const cJSON *srv = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "servers"), 0);
  CHECK_STR(str_of(srv, "name"), "fake");
  CHECK_STR(str_of(srv, "transport"), "stdio");
  CHECK_STR(str_of(srv, "state"), "ready");
  CHECK_STR(cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(srv, "tools"), 0)), "echo");
  cJSON_Delete(j);
  /* the agent's own MCP tools are in the world's detail (the page's agents panel lists them) */
  cJSON_Delete(SERVE_EXPECT(&sp, "GET", "/api/worlds/tooled", NULL, 200, "\"mcp_tools\":[\"echo\"]"));
  EXPECT(&sp, "POST", "/api/worlds/tooled/mcp/fake/restart", NULL, 202, "\"state\":\"starting\"");
  cJSON_Delete(j = serve_poll_json(&sp, "/api/worlds/tooled/mcp", "\"state\":\"ready\"", 10000));
  CHECK(j != NULL);
  EXPECT(&sp, "POST", "/api/worlds/tooled/mcp/nope/restart", NULL, 404, "nope");
  EXPECT(&sp, "DELETE", "/api/worlds/tooled?confirm=tooled", NULL, 409, "MCP servers");
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* node tests/serve_actions_page.js BASE SHOT [mode]: 0 when it passed and left its screenshot SHOT. */
static int run_actions_page(const serve_proc *sp, const char *shot, const char *mode) {
  char cmd[2048];
  unlink(shot);
  snprintf(cmd, sizeof cmd, "node '%s' '%s' '%s' %s", unit_src_path("tests/serve_actions_page.js"), sp->base, shot,
           mode ? mode : "");
  int st = system(cmd);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 && access(shot, R_OK) == 0 ? 0 : -1;
}

/* The page's actions in Chromium (tests/serve_actions_page.js, puppeteer-core from $AGORA_PEERS): edit,
 * retry, delete, branch and rename on a chat of four messages; then a world created on the page of an
 * empty database. The screenshots are left in the build directory (serve_actions_page*.png). */
static void page_actions_in_chromium(void) {
  CHECK(getenv("AGORA_PEERS") != NULL);
  serve_proc sp;
  if (!getenv("AGORA_PEERS") || serve_world("page", shop, &sp)) return;
  char chat[128];
  say(&sp, "shop", "@a one", 2, chat);
  say(&sp, "shop", "@a two", 4, chat);
  CHECK_INT(run_actions_page(&sp, "serve_actions_page.png", NULL), 0);
  /* what the page did is what the database holds */
  char path[256];
  snprintf(path, sizeof path, "/api/worlds/shop/chats/%s/messages", chat);
  EXPECT(&sp, "GET", path, NULL, 200, "\"message_count\":2");
  EXPECT(&sp, "GET", "/api/worlds/shop/chats", NULL, 200, "Renamed by the page");
  CHECK_INT(serve_proc_stop(&sp), 0);
  /* an empty database: a world made on the page */
  if (serve_world("page-empty", NULL, &sp)) return;
  CHECK_INT(run_actions_page(&sp, "serve_actions_page_empty.png", "--empty"), 0);
  EXPECT(&sp, "GET", "/api/worlds/made-here", NULL, 200, "\"name\":\"Made here\"");
  CHECK_INT(serve_proc_stop(&sp), 0);
}

SUITE_RUN((UNIT(create_world), UNIT(patch_world), UNIT(agents), UNIT(keys_over_http), UNIT(embedder_key_over_http),
  UNIT(edit_delete_retry), UNIT(conflicts_in_flight), UNIT(delete_world), UNIT(cross_site_refused), UNIT(mcp_of_a_file_world),
  UNIT(page_actions_in_chromium)), .tmp = &tmp, .srv = &srv)
