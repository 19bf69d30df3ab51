/* docs/openapi.json, the OpenAPI 3.1 document of agora serve's API (issue 24): valid for a third-party
 * validator from npm (tests/openapi_check.js over $AGORA_PEERS), served at GET /api/openapi.json exactly as
 * the repository holds it (behind the token like every /api route), and every exchange the API tests
 * recorded (AGORA_API_TRACE, tests/support/serve_client.c) conforming to it: path and method documented,
 * status documented, request and response bodies matching their schemas. The checker itself must catch
 * drift (an undocumented route, status, method or body) or a pass would prove nothing. */
#include "support/serve_client.h"
#include "support/suite.h"
#include "support/unit.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *tmp;

/* node tests/openapi_check.js ARGS (already quoted) with its stdout and stderr into *out (caller frees);
 * its exit status. */
static int check_js(const char *args, char **out) {
  char cmd[16384], log[1024];
  snprintf(log, sizeof log, "%s/check.log", tmp);
  snprintf(cmd, sizeof cmd, "node '%s' %s >'%s' 2>&1", unit_src_path("tests/openapi_check.js"), args, log);
  int st = system(cmd);
  *out = unit_read_file(log);
  if (!*out) *out = strdup("");
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void document_is_valid(void) {
  char args[2048], *out;
  snprintf(args, sizeof args, "doc '%s'", unit_src_path("docs/openapi.json"));
  int st = check_js(args, &out);
  if (st) fprintf(stderr, "%s", out);
  CHECK_INT(st, 0);
  free(out);
  /* and a broken one is refused: a $ref to nothing, a misspelt schema keyword */
  char *doc = unit_read_file(unit_src_path("docs/openapi.json"));
  char *at = doc ? strstr(doc, "\"#/components/schemas/Chat\"") : NULL;
  CHECK(at != NULL);
  if (!at) {
    free(doc);
    return;
  }
  memcpy(at + strlen("\"#/components/schemas/"), "Chxt", 4);
  at = strstr(doc, "\"minLength\"");
  memcpy(at, "\"minLenght\"", strlen("\"minLenght\""));
  snprintf(args, sizeof args, "doc '%s'", suite_file(tmp, "broken.json", doc));
  CHECK_INT(check_js(args, &out), 1);
  CHECK_HAS(out, "Can't resolve #/components/schemas/Chxt", "unknown keyword: \"minLenght\"");
  free(out);
  free(doc);
}

/* The header block holds name: value (case aside for the name). */
static int has_header(const char *headers, const char *line) { return strcasestr(headers, line) != NULL; }

static void served_as_in_the_repository(void) {
  char db[1024];
  snprintf(db, sizeof db, "%s/db-served", tmp);
  const char *args[] = {"--db", db, NULL};
  serve_proc sp;
  if (serve_proc_start(tmp, args, NULL, &sp)) {
    CHECK(!"agora serve did not start");
    return;
  }
  char *doc = unit_read_file(unit_src_path("docs/openapi.json"));
  http_reply r;
  http_call(sp.base, "GET", "/api/openapi.json", NULL, 0, NULL, &r);
  CHECK_INT(r.status, 200);
  CHECK(has_header(r.headers, "Content-Type: application/json"));
  CHECK(doc && !strcmp(r.body, doc)); /* byte for byte: embedded at build time */
  http_reply_free(&r);
  http_call(sp.base, "HEAD", "/api/openapi.json", NULL, 0, NULL, &r);
  CHECK_INT(r.status, 200);
  http_reply_free(&r);
  http_call(sp.base, "POST", "/api/openapi.json", "{}", 2, NULL, &r);
  CHECK_INT(r.status, 405);
  CHECK(has_header(r.headers, "Allow: GET, HEAD"));
  http_reply_free(&r);
  const char *cross[] = {"Sec-Fetch-Site: cross-site", NULL}; /* another site's page cannot read it */
  http_call_h(sp.base, "GET", "/api/openapi.json", NULL, 0, NULL, cross, &r);
  CHECK_INT(r.status, 403);
  http_reply_free(&r);
  CHECK_INT(serve_proc_stop(&sp), 0);
  /* with a token, as every /api route */
  const char *env[] = {"AGORA_TOKEN=s3cret-token-1", NULL};
  if (serve_proc_start(tmp, args, env, &sp)) {
    CHECK(!"agora serve did not start");
    free(doc);
    return;
  }
  http_call(sp.base, "GET", "/api/openapi.json", NULL, 0, NULL, &r);
  CHECK_INT(r.status, 401);
  http_reply_free(&r);
  http_call(sp.base, "GET", "/api/openapi.json", NULL, 0, "s3cret-token-1", &r);
  CHECK_INT(r.status, 200);
  CHECK(doc && !strcmp(r.body, doc));
  http_reply_free(&r);
  CHECK_INT(serve_proc_stop(&sp), 0);
  free(doc);
}

/* j (taken) as one line of f. */
static void put_line(FILE *f, cJSON *j) {
  char *s = cJSON_PrintUnformatted(j);
  fprintf(f, "%s\n", s);
  free(s);
  cJSON_Delete(j);
}

/* One recorded exchange as serve_client writes it. */
static void trace_line(FILE *f, const char *method, const char *path, int status, const char *req, const char *resp) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "method", method);
  cJSON_AddStringToObject(j, "path", path);
  cJSON_AddNumberToObject(j, "status", status);
  if (req) cJSON_AddStringToObject(j, "req", req);
  else cJSON_AddNullToObject(j, "req");
  cJSON_AddStringToObject(j, "resp_type", "application/json");
  cJSON_AddStringToObject(j, "resp", resp);
  put_line(f, j);
}

/* One recorded event stream (frames' data, NULL-terminated) as serve_client writes it. */
static void trace_stream_line(FILE *f, const char *path, const char *const *frames) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "method", "GET");
  cJSON_AddStringToObject(j, "path", path);
  cJSON_AddNumberToObject(j, "status", 200);
  cJSON_AddStringToObject(j, "resp_type", "text/event-stream; charset=utf-8");
  cJSON_AddBoolToObject(j, "resp_omitted", 1);
  cJSON *arr = cJSON_AddArrayToObject(j, "frames");
  for (size_t i = 0; frames[i]; i++) cJSON_AddItemToArray(arr, cJSON_CreateString(frames[i]));
  put_line(f, j);
}

static const char worlds_ok[] = "{\"worlds\":[{\"id\":\"w\",\"name\":\"W\",\"agents\":1,\"chats\":0,\"current_chat\":null,\"loaded\":true}],\"primary\":\"w\"}";
static const char not_found[] = "{\"error\":{\"code\":\"not_found\",\"message\":\"no such route\"}}";

/* Traffic that conforms passes; each kind of drift fails, named with its line. */
static void checker_catches_drift(void) {
  char path[1024], args[4096], *out;
  snprintf(path, sizeof path, "%s/good.jsonl", tmp);
  FILE *f = fopen(path, "w");
  trace_line(f, "GET", "/api/worlds", 200, NULL, worlds_ok);
  trace_line(f, "GET", "/api/nope", 404, NULL, not_found); /* an unknown route answered as one */
  trace_line(f, "PUT", "/api/worlds", 405, "{}", "{\"error\":{\"code\":\"method_not_allowed\",\"message\":\"x\"}}");
  trace_line(f, "POST", "/api/worlds/w/messages", 202, "{\"text\":\"hi\"}", "{\"seq\":1,\"chat\":\"c\"}");
  trace_line(f, "POST", "/api/worlds/w/messages", 422, "{\"txt\":\"hi\"}", "{\"error\":{\"code\":\"invalid\",\"message\":\"x\"}}");
  fclose(f);
  snprintf(args, sizeof args, "traffic '%s' '%s'", unit_src_path("docs/openapi.json"), path);
  int st = check_js(args, &out);
  if (st) fprintf(stderr, "%s", out);
  CHECK_INT(st, 0);
  free(out);

  snprintf(path, sizeof path, "%s/drift.jsonl", tmp);
  f = fopen(path, "w");
  trace_line(f, "GET", "/api/worlds", 418, NULL, not_found);                          /* 1: undocumented status */
  trace_line(f, "GET", "/api/bogus", 200, NULL, "{}");                                /* 2: undocumented route */
  trace_line(f, "PUT", "/api/worlds", 200, "{}", worlds_ok);                          /* 3: undocumented method */
  trace_line(f, "GET", "/healthz", 200, NULL, "{\"status\":\"ok\"}");                 /* 4: a field missing */
  trace_line(f, "POST", "/api/worlds/w/messages", 202, "{\"txt\":\"hi\"}", "{\"seq\":1,\"chat\":\"c\"}"); /* 5 */
  trace_line(f, "GET", "/api/worlds/w/chats/c/messages?limit=5000", 200, NULL,        /* 6: out of range */
             "{\"chat\":\"c\",\"message_count\":0,\"messages\":[]}");
  trace_line(f, "GET", "/api/worlds", 404, NULL, "{\"error\":\"flat\"}");           /* 7: not the error shape */
  trace_line(f, "GET", "/api/worlds?sort=name", 200, NULL, worlds_ok);                /* 8: an unknown query */
  const char *frames[] = {"{\"type\":\"resync\"}", /* 9: a stream's second frame, a message without its seq */
                          "{\"type\":\"message\",\"world\":\"w\",\"chat\":null,\"sender\":\"h\",\"kind\":\"human\","
                          "\"text\":\"x\",\"ts\":\"2026-01-02T03:04:05.678Z\"}", NULL};
  trace_stream_line(f, "/api/worlds/w/events", frames);
  fclose(f);
  snprintf(args, sizeof args, "traffic '%s' '%s'", unit_src_path("docs/openapi.json"), path);
  CHECK_INT(check_js(args, &out), 1);
  CHECK_HAS(out, "drift.jsonl:1: GET /api/worlds -> 418: status 418 is not documented",
            "drift.jsonl:2: GET /api/bogus -> 200: no such path in the document",
            "drift.jsonl:3: PUT /api/worlds -> 200: /api/worlds has no PUT",
            "drift.jsonl:4: GET /healthz -> 200: response body: data must have required property 'worlds'",
            "drift.jsonl:5: POST /api/worlds/w/messages -> 202: request body:",
            "drift.jsonl:6: GET /api/worlds/w/chats/c/messages?limit=5000 -> 200: query parameter limit=5000",
            "drift.jsonl:7: GET /api/worlds -> 404: response body:",
            "drift.jsonl:8: GET /api/worlds?sort=name -> 200: query parameter sort is not documented",
            "drift.jsonl:9: GET /api/worlds/w/events -> 200: frame 2 ", "9 problem(s)");
  free(out);
}

/* Every exchange of the API tests: the api_traffic fixture ran them with AGORA_API_TRACE, and CMake names
 * their files in AGORA_API_TRACES (FILE:FILE:...); each must be there. */
static void api_traffic_conforms(void) {
  const char *traces = getenv("AGORA_API_TRACES");
  CHECK(traces != NULL);
  if (!traces) return;
  char args[16384];
  size_t files = 0, len = (size_t)snprintf(args, sizeof args, "traffic '%s'", unit_src_path("docs/openapi.json"));
  for (const char *p = traces; *p && len < sizeof args;) {
    size_t n = strcspn(p, ":");
    char file[1024];
    snprintf(file, sizeof file, "%.*s", (int)n, p);
    if (access(file, R_OK)) unit_fail_(__FILE__, __LINE__, "%s: no trace (did its test run?)", file);
    else len += (size_t)snprintf(args + len, sizeof args - len, " '%s'", file), files++;
    p += n + (p[n] == ':');
  }
  CHECK(files >= 3 && len < sizeof args); /* test_serve, test_serve_workbench, test_budget at least */
  char *out;
  int st = check_js(args, &out);
  fprintf(stderr, "%s", out); /* the count of exchanges and operations exercised, and any problem */
  CHECK_INT(st, 0);
  free(out);
}

static const unit_test tests[] = {UNIT(document_is_valid), UNIT(served_as_in_the_repository),
                                  UNIT(checker_catches_drift), UNIT(api_traffic_conforms)};

int main(int argc, char **argv) {
  if (!getenv("AGORA_PEERS")) { /* the validators from npm (the peers fixture) */
    fprintf(stderr, "test_openapi: AGORA_PEERS is not set\n");
    return 1;
  }
  return suite_main(argc, argv, &(suite){SUITE_TESTS(tests), .tmp = &tmp});
}
