/* agora serve's API for the page as a workbench (issue 24): which world the page opens (the first one
 * named on the command line, not the alphabetically first), the tool steps of a chat read back with its
 * messages (so that a reload keeps them), an approval answered twice (409, not 404), and the page's
 * scripts (its own, marked, DOMPurify) served from the binary. A real server process on loopback. */
#include "support/serve_client.h"
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

/* Serves the world files named (NULL-terminated) on database db (both in tmp). */
static int serve_files(const char *const *names, const char *const *texts, serve_proc *sp) {
  static char paths[4][1024];
  const char *args[8];
  int n = 0;
  for (int i = 0; names[i] && i < 4; i++) {
    snprintf(paths[i], sizeof paths[i], "%s/%s", tmp, names[i]);
    if (unit_write_file(paths[i], texts[i])) return -1;
    args[n++] = paths[i];
  }
  static char db[1024];
  snprintf(db, sizeof db, "%s/db-%s", tmp, names[0]);
  args[n++] = "--db", args[n++] = db, args[n] = NULL;
  return serve_proc_start(tmp, args, NULL, sp);
}

/* Two worlds named "zeta" then "alpha": the page must open zeta, the one named first. */
static void primary_is_first_named(void) {
  const char *names[] = {"zeta.json", "alpha.json", NULL};
  const char *texts[] = {"{\"name\": \"Zeta\", \"agents\": [{\"name\": \"z\", \"provider\": \"script\", \"replies\": [\"z\"]}]}",
                         "{\"name\": \"Alpha\", \"agents\": [{\"name\": \"a\", \"provider\": \"script\", \"replies\": [\"a\"]}]}"};
  serve_proc sp;
  if (serve_files(names, texts, &sp)) {
    CHECK(!"agora serve did not start");
    return;
  }
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
  if (serve_proc_start(tmp, args, NULL, &sp)) {
    CHECK(!"agora serve did not start");
    return;
  }
  j = get_json(&sp, "GET", "/api/worlds", NULL, &st);
  CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "primary")));
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "worlds")), 2);
  cJSON_Delete(j);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* Polls GET path until its body holds needle (5 s); the body, or NULL. */
static cJSON *poll_for(const serve_proc *sp, const char *path, const char *needle) {
  for (int i = 0; i < 250; i++) {
    http_reply r;
    http_call(sp->base, "GET", path, NULL, 0, NULL, &r);
    cJSON *j = r.body && strstr(r.body, needle) ? cJSON_Parse(r.body) : NULL;
    http_reply_free(&r);
    if (j) return j;
    usleep(20000);
  }
  return NULL;
}

/* A tool approved over HTTP: its call and result come back with the messages (?steps=1), each after
 * the message it followed; answering the approval again is 409; an id never handed out is 404. */
static void steps_and_approval_twice(void) {
  const char *names[] = {"careful.json", NULL};
  const char *texts[] = {
    "{\"name\": \"Careful\", \"agents\": [{\"name\": \"careful\", \"provider\": \"script\", \"tools\": ["
    "{\"name\": \"save_context\", \"approve\": true}], \"replies\": ["
    "{\"tool\": \"save_context\", \"args\": {\"message\": \"saved it\"}}, \"done saving\"]}]}"};
  serve_proc sp;
  if (serve_files(names, texts, &sp)) {
    CHECK(!"agora serve did not start");
    return;
  }
  long st;
  cJSON *j = get_json(&sp, "POST", "/api/worlds/careful/messages", "{\"text\": \"@careful remember\"}", &st);
  CHECK_INT(st, 202);
  char chat[128];
  snprintf(chat, sizeof chat, "%s", jstr(j, "chat") ? jstr(j, "chat") : "");
  cJSON_Delete(j);
  j = poll_for(&sp, "/api/worlds/careful", "\"approvals\":[{");
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
  j = poll_for(&sp, path, "\"message_count\":2");
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
  CHECK_INT(serve_proc_stop(&sp), 0);
}

static const unit_test tests[] = {UNIT(primary_is_first_named), UNIT(steps_and_approval_twice)};

int main(int argc, char **argv) {
  tmp = unit_tmpdir();
  if (!tmp) return 1;
  int rc = unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
  unit_rmrf(tmp);
  free(tmp);
  return rc;
}
