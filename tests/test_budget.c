/* Budgets end to end (issue 25 §2), through the agora binary against the loopback LLM server: a token or
 * dollar budget reached mid-run stops new calls (the call in flight finishes and counts), the
 * budget-exhausted event is shown and stored, run and say exit 3; the spend is stored with the chat so
 * a resumed chat does not get a fresh budget; a provider that reports no usage is estimated and marked;
 * bad budget and pricing fields are refused with their JSON paths. */
#include "support/llm_server.h"
#include "support/proc.h"
#include "support/suite.h"
#include "support/serve_client.h"
#include "support/unit.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *tmp;
static llm_server *srv;
static const char *const env[] = {"AGORA_TEST_KEY=sk-test-0123456789", NULL};

static const char *world_file(const char *name, const char *json) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/%s", tmp, name);
  unit_write_file(path, json);
  return path;
}

/* A world of one OpenAI-compatible agent at the loopback server with extra top-level fields (budget,
 * pricing) and two questions to it. */
static const char *budget_world(const char *name, const char *extra, const char *directive) {
  char json[4096];
  snprintf(json, sizeof json,
           "{\"name\": \"w\", %s \"agents\": [{\"name\": \"ann\", \"provider\": \"openai\", \"model\": \"m1\","
           " \"base_url\": \"%s\", \"api_key_env\": \"AGORA_TEST_KEY\", \"stream\": false}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"@ann [[mock reply=first %s]] one\"},"
           " {\"from\": \"human\", \"text\": \"@ann [[mock reply=second %s]] two\"}]}",
           extra, llm_server_url(srv, "/v1"), directive, directive);
  return world_file(name, json);
}

static long num_after(const char *s, const char *key) {
  const char *p = s ? strstr(s, key) : NULL;
  return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

/* The first call spends past a 1-token budget: it finishes and is shown, budget-exhausted follows, the
 * second question's call never reaches the server (an llm-error of type budget_exhausted), exit 3. */
static void token_budget_stops_new_calls(void) {
  llm_server_reset(srv);
  const char *args[] = {"run", budget_world("t.json", "\"budget\": {\"tokens\": 1},", ""), "--json", "--no-save", NULL};
  proc_result r;
  CHECK_INT(proc_agora(args, NULL, env, &r), 0);
  CHECK_INT(r.status, 3);
  CHECK_INT((long)llm_server_request_count(srv), 1);
  CHECK_MESSAGES(r.out, "human|human|@ann [[mock reply=first ]] one\nann|agent|first\n"
                        "human|human|@ann [[mock reply=second ]] two\n");
  const char *ex = strstr(r.out, "\"event\":\"budget-exhausted\"");
  CHECK(ex != NULL);
  CHECK(num_after(ex, "\"limit_tokens\":") == 1 && num_after(ex, "\"tokens\":") > 1);
  const char *err = strstr(r.out, "\"event\":\"llm-error\"");
  CHECK(err && strstr(err, "\"error_type\":\"budget_exhausted\"") && err > ex);
  CHECK(strstr(r.err, "budget is spent") != NULL);
  if (r.status != 3) fprintf(stderr, "  out: %s\n  err: %s\n", r.out, r.err);
  proc_result_free(&r);
}

/* The spend is the chat's: a say continuing it stays at the budget (exit 3, no request), and a budget
 * raised in the world file lets it go on from the stored spend. */
static void resumed_chat_keeps_spend(void) {
  llm_server_reset(srv);
  char db[4096];
  snprintf(db, sizeof db, "%s/resume-db", tmp);
  const char *path = budget_world("r.json", "\"budget\": {\"tokens\": 1},", "");
  const char *run[] = {"run", path, "--json", "--db", db, NULL};
  proc_result r;
  CHECK_INT(proc_agora(run, NULL, env, &r), 0);
  CHECK_INT(r.status, 3);
  long spent = num_after(strstr(r.out, "\"event\":\"budget-exhausted\""), "\"tokens\":");
  proc_result_free(&r);
  const char *say[] = {"say", path, "@ann once more", "--json", "--db", db, NULL};
  CHECK_INT(proc_agora(say, NULL, env, &r), 0);
  CHECK_INT(r.status, 3);
  CHECK_INT((long)llm_server_request_count(srv), 1);
  CHECK(strstr(r.out, "\"error_type\":\"budget_exhausted\"") != NULL);
  CHECK(strstr(r.out, "\"event\":\"budget-exhausted\"") == NULL); /* said once, when it was reached */
  if (r.status != 3) fprintf(stderr, "  out: %s\n  err: %s\n", r.out, r.err);
  proc_result_free(&r);
  char extra[128];
  snprintf(extra, sizeof extra, "\"budget\": {\"tokens\": %ld},", spent + 1); /* room for one more call */
  path = budget_world("r.json", extra, "");
  CHECK_INT(proc_agora(say, NULL, env, &r), 0);
  CHECK_INT(r.status, 3); /* that call goes, and spends past the raised budget too */
  CHECK_INT((long)llm_server_request_count(srv), 2);
  const char *ex = strstr(r.out, "\"event\":\"budget-exhausted\"");
  CHECK(ex && num_after(ex, "\"tokens\":") > spent);
  proc_result_free(&r);
}

/* A reply without usage is estimated from the bytes, marked as such, and counts against the budget. */
static void missing_usage_is_estimated(void) {
  llm_server_reset(srv);
  const char *args[] = {"run", budget_world("e.json", "\"budget\": {\"tokens\": 1},", "no_usage=1"), "--json",
                        "--no-save", NULL};
  proc_result r;
  CHECK_INT(proc_agora(args, NULL, env, &r), 0);
  CHECK_INT(r.status, 3);
  const char *done = strstr(r.out, "\"event\":\"llm-done\"");
  CHECK(done && strstr(done, "\"estimated\":true"));
  CHECK(num_after(done, "\"input_tokens\":") > 0 && num_after(done, "\"output_tokens\":") > 0);
  CHECK_INT((long)llm_server_request_count(srv), 1);
  proc_result_free(&r);
}

/* Dollars: the price of model m1 from pricing, shown on llm-done, reaching a dollar budget. */
static void dollar_budget_by_pricing(void) {
  llm_server_reset(srv);
  const char *extra = "\"budget\": {\"usd\": 0.5}, \"pricing\": {\"m1\": {\"input_per_mtok\": 1000000,"
                      " \"output_per_mtok\": 0}},";
  const char *args[] = {"run", budget_world("d.json", extra, ""), "--json", "--no-save", NULL};
  proc_result r;
  CHECK_INT(proc_agora(args, NULL, env, &r), 0);
  CHECK_INT(r.status, 3);
  const char *done = strstr(r.out, "\"event\":\"llm-done\"");
  CHECK(done && strstr(done, "\"usd\":"));
  const char *ex = strstr(r.out, "\"event\":\"budget-exhausted\"");
  CHECK(ex && strstr(ex, "\"limit_usd\":0.5"));
  CHECK_INT((long)llm_server_request_count(srv), 1);
  proc_result_free(&r);
  /* Under the budget: both calls go, exit 0. */
  llm_server_reset(srv);
  extra = "\"budget\": {\"usd\": 5000, \"tokens\": 100000}, \"pricing\": {\"m1\": {\"input_per_mtok\": 1,"
          " \"output_per_mtok\": 2}},";
  const char *ok[] = {"run", budget_world("d2.json", extra, ""), "--json", "--no-save", NULL};
  PROC_OK(ok, NULL, env, &r);
  CHECK_INT((long)llm_server_request_count(srv), 2);
  CHECK(strstr(r.out, "budget-exhausted") == NULL);
  proc_result_free(&r);
}

/* The console says so: the event, then /budget shows the spend as reached; /budget tokens N raises it and
 * the next message's call goes to the server. */
static void console_budget_shows_and_raises(void) {
  llm_server_reset(srv);
  char db[4096];
  snprintf(db, sizeof db, "%s/console-db", tmp);
  const char *args[] = {"console", "--db", db, budget_world("c.json", "\"budget\": {\"tokens\": 1},", ""), NULL};
  proc_result r;
  const char *input = "@ann [[mock reply=hello]] one\n@ann two\n/budget\n/budget tokens 1000000\n@ann three\n"
                      "/budget usd x\n";
  PROC_OK(args, input, env, &r);
  const char *ex = strstr(r.out, "-- budget-exhausted:");
  const char *refused = ex ? strstr(ex, "error_type=budget_exhausted") : NULL;
  const char *shown = refused ? strstr(refused, "budget: ") : NULL;
  CHECK(ex && refused && shown);
  CHECK(shown && strstr(shown, " tokens of 1, $0.0000 of no limit spent in this chat (reached"));
  const char *raised = shown ? strstr(shown + 1, " tokens of 1000000, ") : NULL;
  CHECK(raised != NULL);
  CHECK_INT((long)llm_server_request_count(srv), 2); /* one and three; never two */
  CHECK(strstr(r.err, "/budget: usage: /budget [tokens N] [usd X]") != NULL);
  if (!raised) fprintf(stderr, "  out: %s\n  err: %s\n", r.out, r.err);
  proc_result_free(&r);
}

/* GET /api/worlds/W polled until its budget says reached (or 10 s); the reply's "budget" object (caller
 * frees the returned document). */
static cJSON *serve_budget_wait(const serve_proc *sp, int reached, const cJSON **budget) {
  for (int i = 0; i < 1000; i++) {
    http_reply r;
    http_call(sp->base, "GET", "/api/worlds/w", NULL, 0, NULL, &r);
    cJSON *j = cJSON_Parse(r.body);
    http_reply_free(&r);
    *budget = cJSON_GetObjectItemCaseSensitive(j, "budget");
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(*budget, "reached")) == reached) return j;
    cJSON_Delete(j);
    sse_set *s = sse_set_new(); /* a 10 ms pause that is no sleep of the test's own: the client's pump */
    sse_pump(s, 10);
    sse_set_free(s);
  }
  *budget = NULL;
  return NULL;
}

static long post(const serve_proc *sp, const char *method, const char *path, const char *body) {
  http_reply r;
  http_call(sp->base, method, path, body, strlen(body), NULL, &r);
  long status = r.status;
  http_reply_free(&r);
  return status;
}

/* serve shows the budget in the world's detail and PATCH /api/worlds/{id} raises it. */
static void serve_shows_and_patches(void) {
  llm_server_reset(srv);
  char db[4096];
  snprintf(db, sizeof db, "%s/serve-db", tmp);
  const char *args[] = {budget_world("s.json", "\"budget\": {\"tokens\": 1},", ""), "--db", db, NULL};
  serve_proc sp;
  if (SERVE_START(tmp, args, env, &sp)) return;
  const cJSON *b = NULL;
  cJSON *j = serve_budget_wait(&sp, 0, &b);
  CHECK(b && cJSON_GetObjectItemCaseSensitive(b, "limit_tokens")->valuedouble == 1);
  cJSON_Delete(j);
  CHECK_INT(post(&sp, "POST", "/api/worlds/w/messages", "{\"text\": \"@ann hi\"}"), 202);
  j = serve_budget_wait(&sp, 1, &b);
  CHECK(b && cJSON_GetObjectItemCaseSensitive(b, "tokens")->valuedouble > 1);
  cJSON_Delete(j);
  CHECK_INT(post(&sp, "PATCH", "/api/worlds/w", "{\"budget\": {\"tokens\": -1}}"), 422);
  CHECK_INT(post(&sp, "PATCH", "/api/worlds/w", "{\"budget\": {\"tokns\": 5}}"), 422);
  CHECK_INT(post(&sp, "PATCH", "/api/worlds/w", "{\"budget\": {\"tokens\": 1000000}}"), 200);
  j = serve_budget_wait(&sp, 0, &b);
  CHECK(b && cJSON_GetObjectItemCaseSensitive(b, "limit_tokens")->valuedouble == 1000000);
  cJSON_Delete(j);
  CHECK_INT(post(&sp, "POST", "/api/worlds/w/messages", "{\"text\": \"@ann again\"}"), 202);
  CHECK(llm_server_wait_requests(srv, 2, 10000));
  CHECK_INT((long)llm_server_request_count(srv), 2);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* Bad fields: exit 2, the message names the file's JSON path. */
static void bad_fields_are_named(void) {
  static const unit_io cases[] = {
      {"\"budget\": {\"tokens\": 0},", "budget.tokens: must be a whole number of tokens above 0"},
      {"\"budget\": {\"tokns\": 5},", "budget.tokns: unknown field (did you mean 'tokens'?)"},
      {"\"budget\": {},", "budget: give tokens, usd or both"},
      {"\"budget\": {\"usd\": -1},", "budget.usd: must be a number above 0"},
      {"\"budget\": 5,", "budget: must be an object"},
      {"\"pricing\": {\"m1\": {\"input_per_mtok\": 1}},", "pricing.m1.output_per_mtok: must be a number of 0 or more"},
      {"\"pricing\": {\"m1\": {\"input_per_mtok\": 1, \"output_per_mtok\": 1, \"x\": 1}},", "pricing.m1.x: unknown field"},
      {"\"budget\": {\"usd\": 1}, \"pricing\": {\"m2\": {\"input_per_mtok\": 1, \"output_per_mtok\": 1}},",
       "budget.usd: agents[0] (ann) calls model 'm1', which has no price in pricing"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *args[] = {"run", budget_world("bad.json", cases[i].in, ""), "--no-save", NULL};
    PROC_REFUSED(args, env, cases[i].want, "bad.json: ");
  }
}

SUITE_RUN((UNIT(token_budget_stops_new_calls), UNIT(resumed_chat_keeps_spend), UNIT(missing_usage_is_estimated),
  UNIT(dollar_budget_by_pricing), UNIT(bad_fields_are_named), UNIT(console_budget_shows_and_raises),
  UNIT(serve_shows_and_patches)), .tmp = &tmp, .srv = &srv)
