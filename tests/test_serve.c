/* agora serve end to end: a real server process on a free loopback port, driven with libcurl — every
 * route, bad input (malformed JSON, oversized body, unknown world, wrong token, another site's Origin, a
 * non-loopback Host), usage errors, the token and the listening address. The event streams are in
 * test_serve_stream. */
#include "support/proc.h"
#include "support/serve_client.h"
#include "support/suite.h"
#include "support/tjson.h"
#include "support/tserve.h"
#include "support/unit.h"
#include "support/wait.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- routes ---- */

/* The world and a message: listed, described, answered; pages of messages. The current chat in chat1. */
static void routes_world_and_messages(const serve_proc *sp, char chat1[64]) {
  long st;
  cJSON *j = serve_call_json(sp, "GET", "/api/worlds", NULL, &st);
  CHECK_INT(st, 200);
  const cJSON *w0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "worlds"), 0);
  CHECK_STR(tjson_str(w0, "id"), "counter");
  CHECK_STR(tjson_str(w0, "name"), "Counter");
  cJSON_Delete(j);
  j = serve_call_json(sp, "GET", "/api/worlds/counter", NULL, &st);
  CHECK_INT(st, 200);
  const cJSON *a0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "agents"), 0);
  CHECK_STR(tjson_str(a0, "id"), "a");
  CHECK_INT((long)tjson_num(a0, "turns"), 0);
  CHECK_STR(tjson_str(a0, "phase"), "idle");
  CHECK(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(j, "settings")));
  snprintf(chat1, 64, "%s", tjson_str(j, "current_chat") ? tjson_str(j, "current_chat") : "");
  cJSON_Delete(j);
  CHECK(chat1[0]);

  /* a message: 202 with its seq; the reply is stored and listed */
  j = serve_call_json(sp, "POST", "/api/worlds/counter/messages", "{\"text\": \"@a count\"}", &st);
  CHECK_INT(st, 202);
  CHECK_INT((long)tjson_num(j, "seq"), 1);
  CHECK_STR(tjson_str(j, "chat"), chat1);
  cJSON_Delete(j);
  char path[512];
  snprintf(path, sizeof path, "/api/worlds/counter/chats/%s/messages?after=0&limit=10", chat1);
  cJSON *msgs = NULL;
  for (long long end = now_ms() + wait_budget_ms(2000);; wait_nap_ms(20)) { /* the reply comes from the loop */
    cJSON_Delete(msgs);
    msgs = serve_call_json(sp, "GET", path, NULL, &st);
    if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(msgs, "messages")) == 2 || now_ms() >= end) break;
  }
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(msgs, "messages");
  CHECK_INT(cJSON_GetArraySize(arr), 2);
  CHECK_STR(tjson_str(cJSON_GetArrayItem(arr, 0), "type"), "message");
  CHECK_STR(tjson_str(cJSON_GetArrayItem(arr, 0), "text"), "@a count");
  CHECK_STR(tjson_str(cJSON_GetArrayItem(arr, 1), "sender"), "a");
  CHECK_STR(tjson_str(cJSON_GetArrayItem(arr, 1), "text"), "one");
  cJSON_Delete(msgs);
  snprintf(path, sizeof path, "/api/worlds/counter/chats/%s/messages?before=2&limit=5", chat1);
  msgs = serve_call_json(sp, "GET", path, NULL, &st);
  arr = cJSON_GetObjectItemCaseSensitive(msgs, "messages");
  CHECK_INT(cJSON_GetArraySize(arr), 1);
  CHECK_INT((long)tjson_num(cJSON_GetArrayItem(arr, 0), "seq"), 1);
  cJSON_Delete(msgs);
}

/* Chats: list, title, branch, snapshot, new, select, delete. The new current chat in chat2. */
static void routes_chats(const serve_proc *sp, const char *chat1, char chat2[64]) {
  long st;
  cJSON *j;
  char path[512];
  j = serve_call_json(sp, "GET", "/api/worlds/counter/chats", NULL, &st);
  CHECK_INT(st, 200);
  const cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "chats"), 0);
  CHECK_STR(tjson_str(c0, "id"), chat1);
  CHECK_INT((long)tjson_num(c0, "message_count"), 2);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c0, "current")));
  cJSON_Delete(j);
  snprintf(path, sizeof path, "/api/worlds/counter/chats/%s", chat1);
  j = serve_call_json(sp, "PATCH", path, "{\"title\": \"Counting\"}", &st);
  CHECK_INT(st, 200);
  CHECK_STR(tjson_str(j, "title"), "Counting");
  cJSON_Delete(j);
  /* branch (issue 13): a new chat with message 1 only, titled after the source; the source untouched */
  snprintf(path, sizeof path, "/api/worlds/counter/chats/%s/branch", chat1);
  j = serve_call_json(sp, "POST", path, "{\"at\": 1}", &st);
  CHECK_INT(st, 201);
  CHECK(tjson_str(j, "id") && strcmp(tjson_str(j, "id"), chat1));
  CHECK_STR(tjson_str(j, "title"), "Counting (branch)");
  CHECK_INT((long)tjson_num(j, "message_count"), 1);
  CHECK(!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "current")));
  cJSON_Delete(j);
  tserve_expect(sp, "POST", path, "{\"at\": 0}", 422, "invalid");
  tserve_expect(sp, "POST", path, "{\"at\": 3}", 422, "invalid"); /* past the chat's last message */
  tserve_expect(sp, "POST", path, "{\"at\": 1.5}", 422, "invalid");
  tserve_expect(sp, "POST", path, "{}", 422, "invalid");
  tserve_expect(sp, "GET", path, NULL, 405, "method_not_allowed");
  tserve_expect(sp, "POST", "/api/worlds/counter/chats/zzz/branch", "{\"at\": 1}", 404, "not_found");
  snprintf(path, sizeof path, "/api/worlds/counter/chats/%s/snapshot", chat1);
  cJSON *snap = serve_call_json(sp, "GET", path, NULL, &st);
  CHECK_INT(st, 200);
  CHECK(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(snap, "messages")));
  char *snap_text = cJSON_PrintUnformatted(snap);
  cJSON_Delete(snap);
  j = serve_call_json(sp, "POST", "/api/snapshots", snap_text, &st);
  CHECK_INT(st, 201);
  CHECK_STR(tjson_str(j, "world"), "counter");
  CHECK(tjson_str(j, "id") && strcmp(tjson_str(j, "id"), chat1));
  char imported[64];
  snprintf(imported, sizeof imported, "%s", tjson_str(j, "id") ? tjson_str(j, "id") : "");
  cJSON_Delete(j);
  free(snap_text);
  tserve_expect(sp, "POST", "/api/snapshots", "{\"format\": 1}", 422, "invalid");
  j = serve_call_json(sp, "POST", "/api/worlds/counter/chats", NULL, &st);
  CHECK_INT(st, 201);
  CHECK(tjson_str(j, "id") && strcmp(tjson_str(j, "id"), chat1) && strcmp(tjson_str(j, "id"), imported));
  snprintf(chat2, 64, "%s", tjson_str(j, "id") ? tjson_str(j, "id") : "");
  cJSON_Delete(j);
  snprintf(path, sizeof path, "/api/worlds/counter/chats/%s", chat1);
  tserve_expect(sp, "PATCH", path, "{\"title\": \"x\"}", 409, "conflict"); /* not current any more */
  snprintf(path, sizeof path, "/api/worlds/counter/chats/%s/select", imported);
  j = serve_call_json(sp, "POST", path, NULL, &st);
  CHECK_INT(st, 200);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "current")));
  CHECK_INT((long)tjson_num(j, "message_count"), 2);
  cJSON_Delete(j);
  snprintf(path, sizeof path, "/api/worlds/counter/chats/%s", imported);
  j = serve_call_json(sp, "DELETE", path, NULL, &st);
  CHECK_INT(st, 200);
  CHECK_STR(tjson_str(j, "deleted"), imported);
  CHECK(tjson_str(j, "current") != NULL); /* a fallback chat became current */
  cJSON_Delete(j);
  tserve_expect(sp, "DELETE", path, NULL, 404, "not_found");
}

/* Bad input: unknown routes, wrong methods, bad bodies and queries, a body past the cap. */
static void routes_bad_input(const serve_proc *sp, const char *chat2) {
  char path[512];
  tserve_expect(sp, "GET", "/api/worlds/nope", NULL, 404, "not_found");
  tserve_expect(sp, "GET", "/api/worlds/nope/chats", NULL, 404, "not_found");
  tserve_expect(sp, "GET", "/api/nothing", NULL, 404, "not_found");
  tserve_expect(sp, "GET", "/api/worlds/counter/chats/zzz/messages", NULL, 404, "not_found");
  tserve_expect(sp, "DELETE", "/api/worlds", NULL, 405, "method_not_allowed");
  tserve_expect(sp, "GET", "/api/worlds/counter/messages", NULL, 405, "method_not_allowed");
  tserve_expect(sp, "POST", "/api/worlds/counter/messages", "{\"text\": \"x\"", 400, "bad_request");
  tserve_expect(sp, "POST", "/api/worlds/counter/messages", "{\"text\": \"x\"} extra", 400, "bad_request");
  tserve_expect(sp, "POST", "/api/worlds/counter/messages", "[1]", 400, "bad_request");
  tserve_expect(sp, "POST", "/api/worlds/counter/messages", "{\"text\": 5}", 422, "invalid");
  tserve_expect(sp, "POST", "/api/worlds/counter/messages", "{\"text\": \"\"}", 422, "invalid");
  tserve_expect(sp, "POST", "/api/worlds/counter/messages", "{\"text\": \"x\", \"bogus\": 1}", 422, "invalid");
  tserve_expect(sp, "POST", "/api/worlds/counter/messages", "{}", 422, "invalid");
  tserve_expect(sp, "POST", "/api/worlds/counter/messages", "{\"text\": \"x\", \"chat\": \"nope\"}", 404, "not_found");
  snprintf(path, sizeof path, "/api/worlds/counter/chats/%s/messages?limit=abc", chat2);
  tserve_expect(sp, "GET", path, NULL, 400, "bad_request");
  snprintf(path, sizeof path, "/api/worlds/counter/chats/%s/messages?limit=0", chat2);
  tserve_expect(sp, "GET", path, NULL, 400, "bad_request");
  tserve_expect(sp, "POST", "/api/approvals/77", "{\"allow\": true}", 404, "not_found");
  tserve_expect(sp, "POST", "/api/approvals/77", "{\"allow\": \"yes\"}", 422, "invalid");
  size_t big = (1u << 20) + 10;
  char *huge = malloc(big + 1);
  memset(huge, 'x', big);
  memcpy(huge, "{\"text\": \"", 10);
  memcpy(huge + big - 2, "\"}", 2);
  huge[big] = '\0';
  http_reply r;
  http_call(sp->base, "POST", "/api/worlds/counter/messages", huge, big, NULL, &r);
  CHECK_INT(r.status, 413);
  CHECK(strstr(r.body, "\"payload_too_large\"") != NULL);
  http_reply_free(&r);
  free(huge);
}

/* Another site (Origin), or a name that is not loopback (DNS rebinding): 403. */
static void routes_origin(const serve_proc *sp) {
  http_reply r;
  const char *evil[] = {"Origin: http://evil.example", NULL};
  http_call_h(sp->base, "POST", "/api/worlds/counter/cancel", NULL, 0, NULL, evil, &r);
  CHECK_INT(r.status, 403);
  CHECK(strstr(r.body, "\"forbidden\"") != NULL);
  http_reply_free(&r);
  const char *rebind[] = {"Host: evil.example:80", NULL};
  http_call_h(sp->base, "GET", "/api/worlds", NULL, 0, NULL, rebind, &r);
  CHECK_INT(r.status, 403);
  http_reply_free(&r);
  char same[128];
  snprintf(same, sizeof same, "Origin: http://127.0.0.1:%d", sp->port);
  const char *ok_origin[] = {same, NULL};
  http_call_h(sp->base, "GET", "/api/worlds", NULL, 0, NULL, ok_origin, &r);
  CHECK_INT(r.status, 200);
  http_reply_free(&r);
}

/* The page, health, metrics. */
static void routes_page_health_metrics(const serve_proc *sp) {
  http_reply r;
  http_call(sp->base, "GET", "/", NULL, 0, NULL, &r);
  CHECK_INT(r.status, 200);
  CHECK(strstr(r.body, "<html") != NULL);
  CHECK(strstr(r.headers, "text/html") != NULL);
  http_reply_free(&r);
  http_call(sp->base, "GET", "/healthz", NULL, 0, NULL, &r);
  CHECK_INT(r.status, 200);
  CHECK(strstr(r.body, "\"ok\"") != NULL);
  http_reply_free(&r);
  http_call(sp->base, "GET", "/metrics", NULL, 0, NULL, &r);
  CHECK_INT(r.status, 200);
  CHECK(strstr(r.body, "# TYPE agora_sse_clients gauge") != NULL);
  CHECK(strstr(r.body, "\nagora_worlds_loaded 1\n") != NULL);
  CHECK(strstr(r.body, "\nagora_llm_calls_done_total 1\n") != NULL);
  CHECK(strstr(r.body, "\nagora_bus_messages_total ") != NULL);
  /* commits are synced by the storage thread: soon every one of them */
  const char *cm = strstr(r.body, "\nagora_store_commits_total "), *sy = strstr(r.body, "\nagora_store_synced_total ");
  CHECK(cm && sy && atol(cm + 27) >= 1);
  for (long long end = now_ms() + wait_budget_ms(2000); cm && sy && atol(cm + 27) != atol(sy + 26) && now_ms() < end;) {
    wait_nap_ms(20);
    http_reply_free(&r);
    http_call(sp->base, "GET", "/metrics", NULL, 0, NULL, &r);
    cm = strstr(r.body, "\nagora_store_commits_total "), sy = strstr(r.body, "\nagora_store_synced_total ");
  }
  CHECK(cm && sy && atol(cm + 27) == atol(sy + 26));
  http_reply_free(&r);
}

static void routes_and_errors(void) {
  serve_proc sp;
  if (tserve_start("routes", tserve_counter_world, &sp, NULL)) return;
  char chat1[64], chat2[64];
  routes_world_and_messages(&sp, chat1);
  routes_chats(&sp, chat1, chat2);
  routes_bad_input(&sp, chat2);
  routes_origin(&sp);
  routes_page_health_metrics(&sp);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* ---- token ---- */

static void token_and_listen(void) {
  /* a non-loopback address without a token: refused, exit 2 */
  const char *args[] = {"serve", "--db", tserve_scratch("db-tok0", NULL), "--listen", "0.0.0.0:0", NULL};
  proc_result pr;
  proc_agora(args, NULL, NULL, &pr);
  CHECK_INT(pr.status, 2);
  CHECK(strstr(pr.err, "token") != NULL);
  proc_result_free(&pr);
  const char *bad[] = {"serve", "--listen", "nonsense", "--db", tserve_scratch("db-tok1", NULL), NULL};
  proc_agora(bad, NULL, NULL, &pr);
  CHECK_INT(pr.status, 2);
  CHECK(strstr(pr.err, "--listen") != NULL);
  proc_result_free(&pr);

  const char *help[] = {"serve", "--help", NULL};
  proc_agora(help, NULL, NULL, &pr);
  CHECK_INT(pr.status, 0);
  CHECK(strstr(pr.out, "usage: agora serve") != NULL);
  proc_result_free(&pr);
  const char *unknown[] = {"serve", "--bogus", NULL};
  proc_agora(unknown, NULL, NULL, &pr);
  CHECK_INT(pr.status, 2);
  CHECK(strstr(pr.err, "--bogus") != NULL);
  proc_result_free(&pr);
  const char *badworld[] = {"serve", tserve_scratch("broken.json", "{\"name\": \"x\", \"agents\": 5}"), "--db",
                            tserve_scratch("db-tok2", NULL), "--listen", "127.0.0.1:0", NULL};
  proc_agora(badworld, NULL, NULL, &pr);
  CHECK_INT(pr.status, 2);
  CHECK(strstr(pr.err, "broken.json") != NULL);
  proc_result_free(&pr);
  const char *shortfile[] = {"serve", "--token-file", tserve_scratch("short.txt", "abc\n"), "--db", tserve_scratch("db-tok3", NULL), NULL};
  proc_agora(shortfile, NULL, NULL, &pr);
  CHECK_INT(pr.status, 2);
  CHECK(strstr(pr.err, "at least 8") != NULL);
  proc_result_free(&pr);

  const char *env[] = {"AGORA_TOKEN=s3cret-token-1", NULL};
  serve_proc sp;
  if (tserve_start("token", tserve_counter_world, &sp, env)) return;
  http_reply r;
  http_call(sp.base, "GET", "/api/worlds", NULL, 0, NULL, &r);
  CHECK_INT(r.status, 401);
  CHECK(strstr(r.body, "\"unauthorized\"") != NULL);
  http_reply_free(&r);
  http_call(sp.base, "GET", "/api/worlds", NULL, 0, "s3cret-token-2", &r);
  CHECK_INT(r.status, 401);
  http_reply_free(&r);
  http_call(sp.base, "GET", "/api/worlds", NULL, 0, "s3cret-token", &r);
  CHECK_INT(r.status, 401);
  http_reply_free(&r);
  http_call(sp.base, "GET", "/metrics", NULL, 0, NULL, &r);
  CHECK_INT(r.status, 401);
  http_reply_free(&r);
  http_call(sp.base, "GET", "/api/worlds", NULL, 0, "s3cret-token-1", &r);
  CHECK_INT(r.status, 200);
  http_reply_free(&r);
  http_call(sp.base, "GET", "/", NULL, 0, NULL, &r); /* the page asks for the token itself */
  CHECK_INT(r.status, 200);
  http_reply_free(&r);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

SUITE_RUN((UNIT(routes_and_errors), UNIT(token_and_listen)), .tmp = &tserve_tmp, .many_fds = 1)
