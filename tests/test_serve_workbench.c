/* agora serve's API for the page as a workbench (issue 24): which world the page opens (the first one
 * named on the command line, not the alphabetically first), the tool steps of a chat read back with its
 * messages (so that a reload keeps them), an approval answered twice (409, not 404), the world and a
 * chat exported as Markdown, a chat searched on the server (and how long a search of 100,000 messages
 * takes), token usage per agent, a new chat cancelling replies out loud. A real server process on loopback. */
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

static cJSON *get_json(const serve_proc *sp, const char *method, const char *path, const char *body, long *status) {
  http_reply r;
  http_call(sp->base, method, path, body, body ? strlen(body) : 0, NULL, &r);
  *status = r.status;
  cJSON *j = r.body ? cJSON_Parse(r.body) : NULL;
  http_reply_free(&r);
  return j;
}

static const char *jstr(const cJSON *j, const char *key) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, key));
}

/* Serves the world files named (NULL-terminated) on database db (both in tmp): 0, or -1 and the case
 * failed when the server did not start. */
static int serve_files(const char *const *names, const char *const *texts, serve_proc *sp) {
  static char paths[4][1024];
  const char *args[8];
  int n = 0;
  for (int i = 0; names[i] && i < 4; i++) {
    snprintf(paths[i], sizeof paths[i], "%s/%s", tmp, names[i]);
    if (unit_write_file(paths[i], texts[i])) {
      CHECK(!"cannot write the world file");
      return -1;
    }
    args[n++] = paths[i];
  }
  static char db[1024];
  snprintf(db, sizeof db, "%s/db-%s", tmp, names[0]);
  args[n++] = "--db", args[n++] = db, args[n] = NULL;
  if (SERVE_START(tmp, args, NULL, sp)) return -1;
  return 0;
}

/* Two worlds named "zeta" then "alpha": the page must open zeta, the one named first. */
static void primary_is_first_named(void) {
  const char *names[] = {"zeta.json", "alpha.json", NULL};
  const char *texts[] = {"{\"name\": \"Zeta\", \"agents\": [{\"name\": \"z\", \"provider\": \"script\", \"replies\": [\"z\"]}]}",
                         "{\"name\": \"Alpha\", \"agents\": [{\"name\": \"a\", \"provider\": \"script\", \"replies\": [\"a\"]}]}"};
  serve_proc sp;
  if (serve_files(names, texts, &sp)) return;
  long st;
  cJSON *j = get_json(&sp, "GET", "/api/worlds", NULL, &st);
  CHECK_INT(st, 200);
  CHECK_STR(jstr(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "worlds"), 0), "id"), "alpha"); /* listed by id */
  CHECK_STR(jstr(j, "primary"), "zeta");
  cJSON_Delete(j);
  CHECK_INT(serve_proc_stop(&sp), 0);
  /* no world named: primary is null */
  char db[1024];
  snprintf(db, sizeof db, "%s/db-zeta.json", tmp);
  const char *args[] = {"--db", db, NULL};
  if (SERVE_START(tmp, args, NULL, &sp)) return;
  j = get_json(&sp, "GET", "/api/worlds", NULL, &st);
  CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "primary")));
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "worlds")), 2);
  cJSON_Delete(j);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* GET path: expects status, and (when want is not NULL) a body holding want. */
static void expect_body(const serve_proc *sp, const char *path, long status, const char *want) {
  http_reply r;
  http_call(sp->base, "GET", path, NULL, 0, NULL, &r);
  if (r.status != status || (want && (!r.body || !strstr(r.body, want))))
    unit_fail_(__FILE__, __LINE__, "GET %s: %ld, expected %ld with '%s': %.300s", path, r.status, status, want ? want : "",
               r.body ? r.body : "");
  http_reply_free(&r);
}

/* The world and the chat as Markdown (the documents `worlds export` / `chats export --format md` print),
 * and the chat searched on the server; bad input named. */
static void exports_and_search(const serve_proc *sp, const char *chat) {
  char path[256];
  expect_body(sp, "/api/worlds/careful/export?format=md", 200, "## World: Careful");
  expect_body(sp, "/api/worlds/careful/export?format=md", 200, "#### careful");
  expect_body(sp, "/api/worlds/careful/export", 400, "format: expected md");
  expect_body(sp, "/api/worlds/careful/export?format=json", 400, "format: expected md");
  expect_body(sp, "/api/worlds/nope/export?format=md", 404, "nope");
  snprintf(path, sizeof path, "/api/worlds/careful/chats/%s/export?format=md", chat);
  expect_body(sp, path, 200, "<details><summary>careful calls: <code>save_context</code>");
  expect_body(sp, path, 200, "### human");
  expect_body(sp, "/api/worlds/careful/chats/nochat/export?format=md", 404, "nochat");
  snprintf(path, sizeof path, "/api/worlds/careful/chats/%s/search?q=REMEMBER", chat);
  expect_body(sp, path, 200, "\"text\":\"@careful remember\"");
  expect_body(sp, path, 200, "\"more\":false");
  snprintf(path, sizeof path, "/api/worlds/careful/chats/%s/search?q=%%40careful+rem&limit=1", chat);
  expect_body(sp, path, 200, "\"seq\":1");
  snprintf(path, sizeof path, "/api/worlds/careful/chats/%s/search?q=zzz-nothing", chat);
  expect_body(sp, path, 200, "\"matches\":[]");
  snprintf(path, sizeof path, "/api/worlds/careful/chats/%s/usage", chat);
  expect_body(sp, path, 200, "\"agents\":[]"); /* the script provider reports no tokens */
  expect_body(sp, "/api/worlds/careful/chats/nochat/usage", 404, "nochat");
  static const char *const bad[] = {"", "?q=", "?q=%zz", "?q=%00", "?q=a&limit=0", "?q=%ff"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    snprintf(path, sizeof path, "/api/worlds/careful/chats/%s/search%s", chat, bad[i]);
    expect_body(sp, path, 400, "\"code\":\"bad_request\"");
  }
}

/* World "careful": its one agent calls save_context, which waits for the user's approval, then says so. */
static const char careful_world[] =
  "{\"name\": \"Careful\", \"agents\": [{\"name\": \"careful\", \"provider\": \"script\", \"tools\": ["
  "{\"name\": \"save_context\", \"approve\": true}], \"replies\": ["
  "{\"tool\": \"save_context\", \"args\": {\"message\": \"saved it\"}}, \"done saving\"]}]}";

/* A tool approved over HTTP: its call and result come back with the messages (?steps=1), each after
 * the message it followed; answering the approval again is 409; an id never handed out is 404. */
static void steps_and_approval_twice(void) {
  const char *names[] = {"careful.json", NULL};
  const char *texts[] = {careful_world};
  serve_proc sp;
  if (serve_files(names, texts, &sp)) return;
  long st;
  cJSON *j = get_json(&sp, "POST", "/api/worlds/careful/messages", "{\"text\": \"@careful remember\"}", &st);
  CHECK_INT(st, 202);
  char chat[128];
  snprintf(chat, sizeof chat, "%s", jstr(j, "chat") ? jstr(j, "chat") : "");
  cJSON_Delete(j);
  j = serve_poll_json(&sp, "/api/worlds/careful", "\"approvals\":[{", 5000);
  CHECK(j != NULL);
  double id = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "approvals"), 0), "id"));
  cJSON_Delete(j);
  char path[256];
  snprintf(path, sizeof path, "/api/approvals/%.0f", id);
  cJSON_Delete(get_json(&sp, "POST", path, "{\"allow\": true}", &st));
  CHECK_INT(st, 200);
  j = get_json(&sp, "POST", path, "{\"allow\": false}", &st);
  CHECK_INT(st, 409);
  CHECK_STR(jstr(cJSON_GetObjectItemCaseSensitive(j, "error"), "code"), "conflict");
  cJSON_Delete(j);
  cJSON_Delete(get_json(&sp, "POST", "/api/approvals/99999", "{\"allow\": true}", &st));
  CHECK_INT(st, 404);

  snprintf(path, sizeof path, "/api/worlds/careful/chats/%s/messages?steps=1", chat);
  j = serve_poll_json(&sp, path, "\"message_count\":2", 5000);
  CHECK(j != NULL);
  const cJSON *steps = cJSON_GetObjectItemCaseSensitive(j, "steps");
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "messages")), 2);
  int calls = 0, results = 0;
  const cJSON *s;
  cJSON_ArrayForEach(s, steps) {
    const char *ev = jstr(s, "event");
    calls += ev && !strcmp(ev, "tool-call") && cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "after_seq")) == 1;
    results += ev && !strcmp(ev, "tool-result") && jstr(s, "tool") && !strcmp(jstr(s, "tool"), "save_context");
  }
  CHECK_INT(calls, 1);
  CHECK_INT(results, 1);
  cJSON_Delete(j);
  /* a page after the first message starts after the steps anchored at it; without ?steps none */
  snprintf(path, sizeof path, "/api/worlds/careful/chats/%s/messages?after=1&steps=1", chat);
  j = get_json(&sp, "GET", path, NULL, &st);
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "steps")), 0);
  cJSON_Delete(j);
  snprintf(path, sizeof path, "/api/worlds/careful/chats/%s/messages", chat);
  j = get_json(&sp, "GET", path, NULL, &st);
  CHECK(cJSON_GetObjectItemCaseSensitive(j, "steps") == NULL);
  cJSON_Delete(j);
  snprintf(path, sizeof path, "/api/worlds/careful/chats/%s/messages?steps=2", chat);
  cJSON_Delete(get_json(&sp, "GET", path, NULL, &st));
  CHECK_INT(st, 400);
  exports_and_search(&sp, chat);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* ---- a search of 100,000 messages ---- */

#define BIG 100000

/* A chat of BIG messages, every 10,000th holding "Needle": the messages of the snapshot
 * serve_proc_start_big imports. */
static void big_chat(FILE *f) {
  for (int seq = 1; seq <= BIG; seq++)
    fprintf(f, "%s{\"seq\": %d, \"sender\": \"%s\", \"kind\": \"%s\", \"text\": \"message %d, some words %s of text\","
               " \"ts\": \"2026-11-23T10:00:00.000Z\"}\n", seq > 1 ? "," : "", seq, seq % 2 ? "human" : "a",
            seq % 2 ? "human" : "agent", seq, seq % 10000 == 0 ? "Needle" : "hay");
  fprintf(f, "], \"agents\": [], \"thread\": []}\n");
}

/* Every match of 100,000 messages found in one request; the time is printed (the target:
 * 100 ms, measured 2 cores shared) and held under a bound loose enough for a loaded machine. */
static void search_100000_messages(void) {
  char id[64], path[256];
  serve_proc sp;
  if (serve_proc_start_big(tmp, "a", BIG, big_chat, id, &sp)) return;
  snprintf(path, sizeof path, "/api/worlds/big/chats/%s/search?q=needle&limit=1000", id);
  long st, best;
  cJSON *j = serve_get_best_of(&sp, path, 5, &st, &best);
  CHECK_INT(st, 200);
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "matches")), BIG / 10000);
  cJSON_Delete(j);
  printf("search of %d messages: %ld ms (best of 5)\n", BIG, best);
  CHECK(best < 1000);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* 70 agents whose calls reported tokens: `chats show` and GET …/usage give one row each (the table before
 * chat/usage.c folded every agent past the 64th into the 64th's row). */
static void usage_of_70_agents(void) {
  char file[1024], db[1024], id[64] = "", path[256];
  snprintf(file, sizeof file, "%s/usage.json", tmp);
  snprintf(db, sizeof db, "%s/db-usage", tmp);
  FILE *f = fopen(file, "w");
  CHECK(f != NULL);
  if (!f) return;
  fprintf(f, "{\"format\": 1, \"world\": {\"name\": \"Many\", \"agents\": [");
  for (int i = 0; i < 70; i++) fprintf(f, "%s{\"name\": \"u%02d\", \"provider\": \"script\", \"replies\": [\"x\"]}", i ? "," : "", i);
  fprintf(f, "]}, \"chat\": {\"id\": \"c\", \"world\": \"many\", \"title\": \"T\", \"message_count\": 1,"
             " \"created_at\": \"2026-11-23T10:00:00.000Z\", \"updated_at\": \"2026-11-23T10:00:00.000Z\"},"
             " \"messages\": [{\"seq\": 1, \"sender\": \"human\", \"kind\": \"human\", \"text\": \"hi\","
             " \"ts\": \"2026-11-23T10:00:00.000Z\"}], \"agents\": [], \"thread\": [");
  for (int i = 0; i < 70; i++)
    fprintf(f, "%s{\"type\": \"llm-done\", \"agent\": \"u%02d\", \"chars\": 1, \"input_tokens\": %d, \"output_tokens\": 1,"
               " \"after_seq\": 1}", i ? "," : "", i, 100 + i);
  fprintf(f, "]}\n");
  fclose(f);
  const char *imp[] = {"chats", "import", file, "--db", db, NULL};
  proc_result r;
  PROC_OK(imp, NULL, NULL, &r);
  snprintf(id, sizeof id, "%.*s", (int)strcspn(r.out ? r.out : "", "\r\n"), r.out ? r.out : "");
  proc_result_free(&r);
  const char *show[] = {"chats", "show", id, "--db", db, NULL};
  CHECK_INT(proc_agora(show, NULL, NULL, &r), 0);
  int rows = 0;
  for (const char *p = r.out; p && (p = strstr(p, "tokens of u")); p++) rows++;
  CHECK_INT(rows, 70);
  CHECK(r.out && strstr(r.out, "tokens of u69: 169 in, 1 out (1 call)") != NULL);
  proc_result_free(&r);
  const char *args[] = {"--db", db, NULL};
  serve_proc sp;
  if (SERVE_START(tmp, args, NULL, &sp)) return;
  snprintf(path, sizeof path, "/api/worlds/many/chats/%s/usage", id);
  long st;
  cJSON *j = get_json(&sp, "GET", path, NULL, &st);
  CHECK_INT(st, 200);
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "agents")), 70);
  cJSON_Delete(j);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* A new chat while a reply waits for its approval: the reply is cancelled out loud (a cancelled event on
 * the stream, as a select or a delete does), not dropped without a word. */
static void new_chat_cancels_out_loud(void) {
  const char *names[] = {"loud.json", NULL}; /* a database of its own (serve_files) */
  const char *texts[] = {careful_world};
  serve_proc sp;
  if (serve_files(names, texts, &sp)) return;
  char url[256];
  snprintf(url, sizeof url, "%s/api/worlds/careful/events", sp.base);
  sse_set *set = sse_set_new();
  sse_conn *c = sse_open(set, url, NULL, NULL);
  CHECK_INT(sse_wait_open(set, c, 5000), 0); /* registered: it sees what the POST below starts */
  long st;
  cJSON_Delete(get_json(&sp, "POST", "/api/worlds/careful/messages", "{\"text\": \"@careful remember\"}", &st));
  CHECK_INT(st, 202);
  CHECK_INT(sse_wait(set, 1, "\"type\":\"approval-request\"", 5000), 0);
  cJSON_Delete(get_json(&sp, "POST", "/api/worlds/careful/chats", NULL, &st));
  CHECK_INT(st, 201);
  CHECK_INT(sse_wait(set, 1, "\"event\":\"cancelled\"", 5000), 0);
  CHECK_INT(sse_count(c, "\"event\":\"cancelled\",\"world\":\"careful\""), 1);
  sse_set_free(set);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

SUITE_RUN((UNIT(primary_is_first_named), UNIT(steps_and_approval_twice), UNIT(search_100000_messages),
  UNIT(usage_of_70_agents), UNIT(new_chat_cancels_out_loud)), .tmp = &tmp)
