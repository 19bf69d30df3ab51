/* End to end through the agora binary against the loopback LLM server: every provider, streamed and
 * not, gets the exact prompt the agent builds (system prompt, the memory window with "<sender>: "
 * prefixes, model, temperature, max tokens); failures become llm-error events and exit 1 while the
 * world goes on; a missing key is named; many agents answer one public message concurrently. */
#include "support/llm_server.h"
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"
#include "support/wait.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char *tmp;
static llm_server *srv;

static const char *world_file(const char *name, const char *json) { return suite_file(tmp, name, json); }

static const char *base_url(const char *provider) {
  if (!strcmp(provider, "openai")) return llm_server_url(srv, "/v1");
  return llm_server_url(srv, "");
}

/* The JSON body of request i, parsed (caller frees). */
static cJSON *request_body(size_t i) {
  llm_server_request r;
  if (llm_server_request_get(srv, i, &r)) return NULL;
  cJSON *j = cJSON_Parse(r.body);
  llm_server_request_free(&r);
  return j;
}

static const char *str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItem(o, k);
  return cJSON_IsString(v) ? v->valuestring : "(missing)";
}

/* The text of a message in any provider's shape: "content" string, or content/parts blocks. */
static const char *msg_text(const cJSON *m) {
  const cJSON *c = cJSON_GetObjectItem(m, "content");
  if (cJSON_IsString(c)) return c->valuestring;
  const cJSON *blocks = cJSON_IsArray(c) ? c : cJSON_GetObjectItem(m, "parts");
  const cJSON *b = cJSON_GetArrayItem(blocks, 0);
  return str(b, "text");
}

/* Checks the third request of a three-question chat: the system prompt where the provider puts it,
 * then exactly the window of 3: the second question, the answer to it, the third question. */
static void check_prompt(const char *provider, int stream, const cJSON *body) {
  const char *sys = "You are ann, brief.";
  const cJSON *msgs = NULL;
  const char *assistant = "assistant";
  if (!strcmp(provider, "anthropic")) {
    CHECK_STR(str(body, "system"), sys);
    CHECK_INT(cJSON_GetObjectItem(body, "max_tokens")->valueint, 77);
    CHECK(cJSON_GetObjectItem(body, "temperature")->valuedouble == 0.25);
    msgs = cJSON_GetObjectItem(body, "messages");
  } else if (!strcmp(provider, "gemini")) {
    const cJSON *si = cJSON_GetObjectItem(body, "systemInstruction");
    CHECK_STR(msg_text(si), sys);
    const cJSON *gc = cJSON_GetObjectItem(body, "generationConfig");
    CHECK_INT(cJSON_GetObjectItem(gc, "maxOutputTokens")->valueint, 77);
    CHECK(cJSON_GetObjectItem(gc, "temperature")->valuedouble == 0.25);
    msgs = cJSON_GetObjectItem(body, "contents");
    assistant = "model";
  } else {
    msgs = cJSON_GetObjectItem(body, "messages");
    const cJSON *first = cJSON_GetArrayItem(msgs, 0);
    CHECK_STR(str(first, "role"), "system");
    CHECK_STR(msg_text(first), sys);
    cJSON_DeleteItemFromArray((cJSON *)msgs, 0);
    if (!strcmp(provider, "ollama")) {
      const cJSON *opt = cJSON_GetObjectItem(body, "options");
      CHECK_INT(cJSON_GetObjectItem(opt, "num_predict")->valueint, 77);
      CHECK(cJSON_GetObjectItem(opt, "temperature")->valuedouble == 0.25);
    } else {
      CHECK_INT(cJSON_GetObjectItem(body, "max_tokens")->valueint, 77);
      CHECK(cJSON_GetObjectItem(body, "temperature")->valuedouble == 0.25);
    }
    CHECK_INT(cJSON_IsTrue(cJSON_GetObjectItem(body, "stream")), stream);
  }
  if (strcmp(provider, "gemini")) CHECK_STR(str(body, "model"), "model-x");
  CHECK_INT(cJSON_GetArraySize(msgs), 3);
  const char *roles[] = {"user", assistant, "user"};
  const char *texts[] = {"human: @ann two", "echo: human: @ann one", "human: @ann three"};
  texts[1] = "echo: human: @ann two";
  for (int i = 0; i < 3; i++) {
    const cJSON *m = cJSON_GetArrayItem(msgs, i);
    CHECK_STR(str(m, "role"), roles[i]);
    CHECK_STR(msg_text(m), texts[i]);
  }
}

/* A world file where the human asks ann three questions, ann on provider with this memory window. */
static const char *three_questions(const char *provider, int window, int stream) {
  char json[2048];
  snprintf(json, sizeof json,
           "{\"name\": \"w\", \"memory_window\": %d, \"agents\": [{\"name\": \"ann\", \"provider\": \"%s\","
           " \"model\": \"model-x\", \"base_url\": \"%s\", \"api_key_env\": \"AGORA_TEST_KEY\","
           " \"temperature\": 0.25, \"max_tokens\": 77, \"stream\": %s,"
           " \"system_prompt\": \"You are ann, brief.\"}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"@ann one\"}, {\"from\": \"human\", \"text\": \"@ann two\"},"
           " {\"from\": \"human\", \"text\": \"@ann three\"}]}",
           window, provider, base_url(provider), stream ? "true" : "false");
  return world_file("p.json", json);
}

static void every_provider_gets_the_prompt(void) {
  const char *providers[] = {"openai", "anthropic", "gemini", "ollama"};
  for (int p = 0; p < 4; p++) {
    for (int stream = 0; stream < 2; stream++) {
      llm_server_reset(srv);
      llm_server_rule(srv, "You are ann", "echo=1");
      const char *args[] = {"run", three_questions(providers[p], 3, stream), "--json", "--no-save", NULL};
      const char *env[] = {"AGORA_TEST_KEY=sk-test-0123456789", NULL};
      proc_result r;
      CHECK_INT(proc_agora(args, NULL, env, &r), 0);
      if (r.status) fprintf(stderr, "  %s stream=%d: %s\n", providers[p], stream, r.err);
      CHECK_INT(r.status, 0);
      CHECK_MESSAGES(r.out, "human|human|@ann one\nann|agent|echo: human: @ann one\n"
                            "human|human|@ann two\nann|agent|echo: human: @ann two\n"
                            "human|human|@ann three\nann|agent|echo: human: @ann three\n");
      proc_result_free(&r);
      CHECK_INT(llm_server_request_count(srv), 3);
      cJSON *body = request_body(2);
      CHECK(body != NULL);
      if (body) check_prompt(providers[p], stream, body);
      cJSON_Delete(body);
    }
  }
}

/* Issue 15 item 8: with a window of 2 the second and third requests would open on ann's own reply;
 * every provider's request opens on the user instead, the reply named "ann: " like other speakers. */
static void window_never_opens_on_own_reply(void) {
  const char *providers[] = {"openai", "anthropic", "gemini", "ollama"};
  for (int p = 0; p < 4; p++) {
    llm_server_reset(srv);
    llm_server_rule(srv, "You are ann", "echo=1");
    const char *args[] = {"run", three_questions(providers[p], 2, 1), "--no-save", NULL};
    const char *env[] = {"AGORA_TEST_KEY=sk-test-0123456789", NULL};
    proc_result r;
    PROC_OK(args, NULL, env, &r);
    proc_result_free(&r);
    CHECK_INT(llm_server_request_count(srv), 3);
    cJSON *body = request_body(2);
    int gemini = !strcmp(providers[p], "gemini");
    cJSON *msgs = cJSON_GetObjectItem(body, gemini ? "contents" : "messages");
    if (!strcmp(providers[p], "openai") || !strcmp(providers[p], "ollama"))
      cJSON_DeleteItemFromArray(msgs, 0); /* the system message */
    const cJSON *first = cJSON_GetArrayItem(msgs, 0);
    CHECK_STR(str(first, "role"), "user");
    /* (The echo server answers the joined turn whole, so only the start is known for every provider.) */
    CHECK(!strncmp(msg_text(first), "ann: echo: ", 11));
    /* Anthropic and Gemini join consecutive user turns into one; OpenAI and Ollama keep two. */
    int joined = !strcmp(providers[p], "anthropic") || gemini;
    CHECK_INT(cJSON_GetArraySize(msgs), joined ? 1 : 2);
    cJSON_Delete(body);
  }
}

/* The number after "key": in text (the first one), -1 when there is none. */
static long num_after(const char *text, const char *key) {
  const char *p = text ? strstr(text, key) : NULL;
  return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

/* Issue 15 item 14: every provider, streamed and not, reports usage; llm-done carries it, the chat's
 * thread keeps it and chats show sums it per agent. */
static void usage_every_provider_and_mode(void) {
  const char *providers[] = {"openai", "anthropic", "gemini", "ollama"};
  for (int p = 0; p < 4; p++) {
    for (int stream = 0; stream < 2; stream++) {
      llm_server_reset(srv);
      char json[2048], db[4096], chat[64] = "";
      snprintf(db, sizeof db, "%s/usage-%d-%d", tmp, p, stream);
      snprintf(json, sizeof json,
               "{\"name\": \"w\", \"agents\": [{\"name\": \"ann\", \"provider\": \"%s\", \"base_url\": \"%s\","
               " \"api_key_env\": \"AGORA_TEST_KEY\", \"stream\": %s}],"
               " \"script\": [{\"from\": \"human\", \"text\": \"@ann [[mock reply=\\\"a b c\\\"]] one\"},"
               " {\"from\": \"human\", \"text\": \"@ann [[mock reply=\\\"d e\\\"]] two\"}]}",
               providers[p], base_url(providers[p]), stream ? "true" : "false");
      const char *args[] = {"run", world_file("u.json", json), "--json", "--db", db, NULL};
      const char *env[] = {"AGORA_TEST_KEY=sk-test-0123456789", NULL};
      proc_result r;
      PROC_OK(args, NULL, env, &r);
      const char *done = strstr(r.out, "\"event\":\"llm-done\"");
      long in = num_after(done, "\"input_tokens\":"), out = num_after(done, "\"output_tokens\":");
      if (in <= 0 || out <= 0) fprintf(stderr, "  %s stream=%d: %s\n", providers[p], stream, r.out);
      CHECK(in > 0);
      CHECK(out > 0);
      const char *c = strstr(r.out, "\"chat\":\"");
      if (c) sscanf(c + 8, "%63[^\"]", chat);
      proc_result_free(&r);
      const char *show[] = {"chats", "show", chat, "--db", db, "--json", NULL};
      PROC_OK(show, NULL, NULL, &r);
      /* Both calls are in the stored thread, and the total is their sum. */
      const char *first = strstr(r.out, "\"event\":\"llm-done\"");
      const char *second = first ? strstr(first + 1, "\"event\":\"llm-done\"") : NULL;
      CHECK(second != NULL);
      long total_in = num_after(first, "\"input_tokens\":") + num_after(second, "\"input_tokens\":");
      const char *usage = strstr(r.out, "{\"type\":\"usage\",\"agent\":\"ann\",\"calls\":2,");
      CHECK(usage != NULL);
      CHECK_INT(num_after(usage, "\"input_tokens\":"), total_in);
      proc_result_free(&r);
      const char *plain[] = {"chats", "show", chat, "--db", db, NULL};
      CHECK_INT(proc_agora(plain, NULL, NULL, &r), 0);
      CHECK(strstr(r.out, "tokens of ann: ") != NULL && strstr(r.out, " out (2 calls)\n") != NULL);
      proc_result_free(&r);
    }
  }
}

/* The console's /agents shows the tokens each agent used in this session. */
static void console_agents_show_tokens(void) {
  llm_server_reset(srv);
  char json[1024], db[4096];
  snprintf(db, sizeof db, "%s/usage-console", tmp);
  snprintf(json, sizeof json,
           "{\"name\": \"w\", \"agents\": [{\"name\": \"ann\", \"provider\": \"ollama\", \"base_url\": \"%s\"},"
           " {\"name\": \"bob\"}]}", base_url("ollama"));
  const char *args[] = {"console", "--db", db, world_file("c.json", json), NULL};
  proc_result r;
  PROC_OK(args, "@ann [[mock reply=\"a b c\"]] hi\n/agents\n", NULL, &r);
  const char *line = strstr(r.out, "  ann  ollama");
  CHECK(line != NULL);
  CHECK(num_after(line, "tokens ") > 0);
  CHECK(line && strstr(line, " in, ") && strstr(line, " out"));
  const char *bob = strstr(r.out, "  bob  script");
  CHECK(bob && (!strstr(bob, "tokens") || strstr(bob, "tokens") > strchr(bob, '\n')));
  if (!line) fprintf(stderr, "  out: %s\nerr: %s\n", r.out, r.err);
  proc_result_free(&r);
}

/* A failing agent publishes nothing and the others go on; run exits 1 and the event says why. */
static void failure_is_an_event_and_exit_1(void) {
  llm_server_reset(srv);
  char json[2048];
  snprintf(json, sizeof json,
           "{\"name\": \"w\", \"agents\": ["
           " {\"name\": \"bad\", \"provider\": \"openai\", \"base_url\": \"%s\", \"api_key_env\": \"AGORA_TEST_KEY\","
           "  \"max_retries\": 1, \"system_prompt\": \"[[mock status=500 error_message=boom]]\"},"
           " {\"name\": \"good\", \"replies\": [\"still here\"]}],"
           " \"script\": [{\"from\": \"world\", \"text\": \"Anyone?\"}]}",
           llm_server_url(srv, "/v1"));
  const char *args[] = {"run", world_file("f.json", json), "--json", "--no-save", NULL};
  const char *env[] = {"AGORA_TEST_KEY=sk-test-0123456789", "AGORA_LLM_BACKOFF_MS=5", NULL};
  proc_result r;
  CHECK_INT(proc_agora(args, NULL, env, &r), 0);
  CHECK_INT(r.status, 1);
  CHECK_MESSAGES(r.out, "world|world|Anyone?\ngood|agent|still here\n");
  const char *ev = strstr(r.out, "\"event\":\"llm-error\"");
  CHECK(ev != NULL);
  CHECK(ev && strstr(ev, "\"http_status\":500") && strstr(ev, "\"attempts\":2") && strstr(ev, "\"agent\":\"bad\""));
  CHECK(strstr(r.err, "1 LLM call(s) failed") != NULL);
  CHECK(strstr(r.out, "sk-test-0123456789") == NULL && strstr(r.err, "sk-test-0123456789") == NULL);
  proc_result_free(&r);
}

/* An api_key_env naming an unset variable is a load error (exit 2, naming the agent and the variable)
 * before anything is stored or sent; it was found only at the call, after the chat was saved. An agent
 * whose provider needs no key (--provider script) loads. */
static void missing_key_is_named(void) {
  llm_server_reset(srv);
  char json[1024], db[4096];
  snprintf(json, sizeof json,
           "{\"name\": \"w\", \"agents\": [{\"name\": \"ann\", \"provider\": \"anthropic\", \"base_url\": \"%s\","
           " \"api_key_env\": \"AGORA_TEST_UNSET_KEY\"}], \"script\": [{\"from\": \"human\", \"text\": \"@ann hi\"}]}",
           llm_server_url(srv, ""));
  snprintf(db, sizeof db, "%s/db-unset-key", tmp);
  const char *file = world_file("k.json", json);
  const char *run[] = {"run", file, "--db", db, NULL};
  const char *con[] = {"console", file, "--db", db, NULL};
  const char *const *cmds[] = {run, con};
  for (int i = 0; i < 2; i++) {
    proc_result r;
    CHECK_INT(proc_agora(cmds[i], "@ann hi\n", NULL, &r), 0);
    CHECK_INT(r.status, 2);
    CHECK(strstr(r.err, "agents[0] (ann).api_key_env: environment variable AGORA_TEST_UNSET_KEY is not set") != NULL);
    proc_result_free(&r);
  }
  const char *list[] = {"chats", "list", "--db", db, "--json", NULL};
  proc_result r;
  CHECK_INT(proc_agora(list, NULL, NULL, &r), 0);
  CHECK(strstr(r.out, "\"id\"") == NULL); /* nothing was stored */
  proc_result_free(&r);
  CHECK_INT(llm_server_request_count(srv), 0);
  const char *script[] = {"run", file, "--no-save", "--provider", "script", NULL};
  PROC_OK(script, NULL, NULL, &r);
  proc_result_free(&r);
}

/* 200 agents, one public message, 200 ms per call: every reply arrives and is saved. */
static void many_agents_at_once(void) {
  llm_server_reset(srv);
  llm_server_rule(srv, "", "latency=200 echo=1");
  size_t cap = 128 * 1024;
  char *json = malloc(cap);
  snprintf(json, cap, "{\"name\": \"fan\", \"defaults\": {\"provider\": \"ollama\", \"base_url\": \"%s\"}, \"agents\": [",
           llm_server_url(srv, ""));
  for (int i = 0; i < 200; i++)
    snprintf(json + strlen(json), cap - strlen(json), "%s{\"name\": \"a%d\", \"system_prompt\": \"You are a%d.\"}",
             i ? "," : "", i, i);
  strcat(json, "], \"script\": [{\"from\": \"human\", \"text\": \"Roll call!\"}]}");
  char db[4096];
  snprintf(db, sizeof db, "%s/db-fan", tmp);
  const char *args[] = {"run", world_file("fan.json", json), "--json", "--db", db, NULL};
  proc_result r;
  PROC_OK(args, NULL, NULL, &r);
  int replies = 0;
  for (const char *p = r.out; (p = strstr(p, "\"text\":\"echo: human: Roll call!\"")); p++) replies++;
  CHECK_INT(replies, 200);
  CHECK_INT(llm_server_request_count(srv), 200);
  proc_result_free(&r);
  const char *list[] = {"chats", "list", "--db", db, "--json", NULL};
  CHECK_INT(proc_agora(list, NULL, NULL, &r), 0);
  CHECK(strstr(r.out, "\"message_count\":201") != NULL);
  proc_result_free(&r);
  free(json);
}

/* Reads every file under dir and reports whether needle occurs in any. */
static int found_in_files(const char *dir, const char *needle) {
  size_t n = strlen(dir) + strlen(needle) + 32;
  char *cmd = malloc(n);
  snprintf(cmd, n, "grep -rqF -- '%s' '%s'", needle, dir);
  int found = system(cmd) == 0;
  free(cmd);
  return found;
}

/* A key in the environment is used for the call (the server sees it) and then appears nowhere: not in
 * the output, not in the database files, not in an export — even when the server echoes it back in
 * an error, as real providers do. */
static void canary_key_used_never_written(void) {
  llm_server_reset(srv);
  const char *canary = "sk-canary-5d1f0c9e77aa";
  char json[2048];
  snprintf(json, sizeof json,
           "{\"name\": \"canary\", \"agents\": ["
           " {\"name\": \"ok\", \"provider\": \"openai\", \"base_url\": \"%s\", \"api_key_env\": \"CANARY_KEY\","
           "  \"system_prompt\": \"[[mock reply=fine]]\"},"
           " {\"name\": \"denied\", \"provider\": \"anthropic\", \"base_url\": \"%s\", \"api_key_env\": \"CANARY_KEY\","
           "  \"system_prompt\": \"[[mock status=401]]\"}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"Hello both\"}]}",
           llm_server_url(srv, "/v1"), llm_server_url(srv, ""));
  char db[4096], snap[4200];
  snprintf(db, sizeof db, "%s/db-canary", tmp);
  snprintf(snap, sizeof snap, "%s/canary-export.json", tmp);
  const char *args[] = {"run", world_file("canary.json", json), "--json", "--db", db, NULL};
  const char *env[] = {"CANARY_KEY=sk-canary-5d1f0c9e77aa", NULL};
  proc_result r;
  CHECK_INT(proc_agora(args, NULL, env, &r), 0);
  CHECK_INT(r.status, 1); /* the 401 */
  CHECK(strstr(r.out, "ok\",\"kind\":\"agent\",\"text\":\"fine\"") != NULL);
  CHECK(strstr(r.out, "\"http_status\":401") != NULL);
  CHECK(!strstr(r.out, canary) && !strstr(r.err, canary));
  CHECK(!strstr(r.out, "5d1f0c9e77aa"));
  proc_result_free(&r);
  /* The server did get the key: it was really used. */
  int seen = 0;
  for (size_t i = 0; i < llm_server_request_count(srv); i++) {
    llm_server_request q;
    if (llm_server_request_get(srv, i, &q)) continue;
    if (strstr(q.headers, canary)) seen++;
    llm_server_request_free(&q);
  }
  CHECK(seen >= 2);
  char chat[64] = "";
  CHECK_INT(proc_first_chat(db, chat, sizeof chat), 0);
  const char *exp[] = {"chats", "export", chat, "--db", db, "-o", snap, NULL};
  PROC_OK(exp, NULL, NULL, &r);
  proc_result_free(&r);
  CHECK(!found_in_files(db, canary));
  CHECK(!found_in_files(db, "5d1f0c9e77aa"));
  CHECK(!found_in_files(snap, canary));
  CHECK(found_in_files(snap, "CANARY_KEY")); /* the variable's name is kept, so the world still works */
}

/* The tool loop over every wire format: the model calls load_context, gets the result, then answers. */
static void tool_loop_every_provider(void) {
  const char *providers[] = {"openai", "anthropic", "gemini", "ollama"};
  for (int p = 0; p < 4; p++) {
    for (int stream = 0; stream < 2; stream++) {
      llm_server_reset(srv);
      char json[2048];
      snprintf(json, sizeof json,
               "{\"name\": \"tools\", \"agents\": [{\"name\": \"ann\", \"provider\": \"%s\", \"base_url\": \"%s\","
               " \"api_key_env\": \"AGORA_TEST_KEY\", \"model\": \"m\", \"stream\": %s, \"monadic\": true,"
               " \"system_prompt\": \"[[mock tool=load_context args={} after_tool=\\\"I remember nothing yet.\\\"]]\"}],"
               " \"script\": [{\"from\": \"human\", \"text\": \"@ann what do you know?\"}]}",
               providers[p], base_url(providers[p]), stream ? "true" : "false");
      const char *args[] = {"run", world_file("t.json", json), "--json", "--no-save", NULL};
      const char *env[] = {"AGORA_TEST_KEY=sk-test-0123456789", NULL};
      proc_result r;
      CHECK_INT(proc_agora(args, NULL, env, &r), 0);
      if (r.status) fprintf(stderr, "  %s stream=%d: %s\n%s\n", providers[p], stream, r.err, r.out);
      CHECK_INT(r.status, 0);
      CHECK_MESSAGES(r.out, "human|human|@ann what do you know?\nann|agent|I remember nothing yet.\n");
      CHECK(strstr(r.out, "\"event\":\"tool-call\"") && strstr(r.out, "\"tool\":\"load_context\""));
      CHECK(strstr(r.out, "\"event\":\"tool-result\"") && strstr(r.out, "\"version\":0"));
      proc_result_free(&r);
      CHECK_INT(llm_server_request_count(srv), 2);
      /* The first request offered the two context tools. */
      cJSON *body = request_body(0);
      char *text = cJSON_PrintUnformatted(body);
      CHECK(text && strstr(text, "load_context") && strstr(text, "save_context"));
      free(text);
      cJSON_Delete(body);
    }
  }
}

/* ask_human's answer from --answers goes back to the model in the next round, as the tool's result. */
static void ask_human_answer_reaches_the_model(void) {
  llm_server_reset(srv);
  char json[2048], answers[4096];
  snprintf(json, sizeof json,
           "{\"name\": \"ask\", \"agents\": [{\"name\": \"ann\", \"provider\": \"openai\", \"base_url\": \"%s\","
           " \"api_key_env\": \"AGORA_TEST_KEY\", \"model\": \"m\", \"tools\": [\"ask_human\"],"
           " \"system_prompt\": \"[[mock tool=ask_human args={\\\"question\\\":\\\"city?\\\"} after_tool=Noted.]]\"}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"@ann plan a trip\"}]}",
           base_url("openai"));
  snprintf(answers, sizeof answers, "%s/answers.txt", tmp);
  unit_write_file(answers, "Lisbon in May\n");
  const char *args[] = {"run", world_file("ask.json", json), "--json", "--no-save", "--answers", answers, NULL};
  const char *env[] = {"AGORA_TEST_KEY=sk-test-0123456789", NULL};
  proc_result r;
  PROC_OK(args, NULL, env, &r);
  CHECK(strstr(r.out, "\"result\":{\"answer\":\"Lisbon in May\"},\"error\":false") != NULL);
  CHECK_MESSAGES(r.out, "human|human|@ann plan a trip\nann|agent|Noted.\n");
  proc_result_free(&r);
  CHECK_INT(llm_server_request_count(srv), 2);
  cJSON *first = request_body(0), *second = request_body(1);
  char *t1 = cJSON_PrintUnformatted(first), *t2 = cJSON_PrintUnformatted(second);
  CHECK(t1 && strstr(t1, "\"name\":\"ask_human\"") && !strstr(t1, "Lisbon"));
  /* The second round carries the tool message with the person's answer. */
  CHECK(t2 && strstr(t2, "\"role\":\"tool\"") && strstr(t2, "{\\\"answer\\\":\\\"Lisbon in May\\\"}"));
  free(t1);
  free(t2);
  cJSON_Delete(first);
  cJSON_Delete(second);
}

/* A 200 whose body is no reply makes run fail with a malformed llm-error for Gemini too, streamed
 * or not (issue 17, defect 10: it was an empty reply and exit 0). */
static void gemini_bad_200_fails(void) {
  static const char *const bodies[] = {"html", "garbage", "empty"};
  for (int b = 0; b < 3; b++) {
    for (int stream = 0; stream < 2; stream++) {
      llm_server_reset(srv);
      char json[1024];
      snprintf(json, sizeof json,
               "{\"name\": \"g\", \"agents\": [{\"name\": \"ann\", \"provider\": \"gemini\", \"base_url\": \"%s\","
               " \"api_key_env\": \"AGORA_TEST_KEY\", \"stream\": %s, \"max_retries\": 0,"
               " \"system_prompt\": \"[[mock body=%s]]\"}],"
               " \"script\": [{\"from\": \"human\", \"text\": \"@ann hi\"}]}",
               base_url("gemini"), stream ? "true" : "false", bodies[b]);
      const char *args[] = {"run", world_file("g.json", json), "--json", "--no-save", NULL};
      const char *env[] = {"AGORA_TEST_KEY=k-0123456789", NULL};
      proc_result r;
      CHECK_INT(proc_agora(args, NULL, env, &r), 0);
      if (r.status != 1 || !strstr(r.out, "\"event\":\"llm-error\"") || !strstr(r.out, "malformed"))
        unit_fail_(__FILE__, __LINE__, "body=%s stream=%d: status %d\n%s%s", bodies[b], stream, r.status, r.out, r.err);
      proc_result_free(&r);
    }
  }
}

/* The loopback server's stalled stream has sent its first event. */
static int stalled(void *server) { return llm_server_stalls(server) >= 1; }

/* Ctrl-C during run (issue 15 item 9): the reply in flight is cancelled, what was published is saved,
 * and stderr says so; exit 130. */
static void sigint_says_what_it_did(void) {
  llm_server_reset(srv);
  char json[2048], db[4096], err[4096];
  snprintf(json, sizeof json,
           "{\"name\": \"w\", \"agents\": [{\"name\": \"ann\", \"provider\": \"openai\", \"model\": \"m\","
           " \"base_url\": \"%s\", \"api_key_env\": \"AGORA_TEST_KEY\", \"system_prompt\": \"[[mock stall=1]]\","
           " \"timeout_ms\": 5000}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"@ann hello there friend\"},"
           " {\"from\": \"human\", \"text\": \"@ann are you there?\"}]}",
           base_url("openai"));
  const char *world = world_file("stall.json", json);
  snprintf(db, sizeof db, "%s/sigint-db", tmp);
  snprintf(err, sizeof err, "%s/sigint.err", tmp);
  const char *args[] = {"run", world, "--db", db, NULL};
  static const char *const env[] = {"AGORA_TEST_KEY=sk-test-0123456789", NULL};
  pid_t pid = proc_spawn(args, -1, "/dev/null", err, env);
  CHECK(pid > 0);
  if (pid <= 0) return;
  /* the stalled stream has started: its first event is out, the reply is in flight */
  CHECK(wait_until(stalled, srv, 10000));
  kill(pid, SIGINT);
  int st = -1;
  CHECK(waitpid(pid, &st, 0) == pid);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 130);
  char *text = unit_read_file(err);
  CHECK(text && strstr(text, "agora: interrupted: cancelled 1 reply, saved chat ") != NULL);
  if (text && !strstr(text, "interrupted")) fprintf(stderr, "  stderr: %s\n", text);
  free(text);
  const char *list[] = {"chats", "list", "--db", db, "--json", NULL};
  proc_result r;
  CHECK_INT(proc_agora(list, NULL, NULL, &r), 0);
  CHECK(strstr(r.out, "\"message_count\":1") != NULL); /* the human message was saved */
  proc_result_free(&r);
  /* Issue 17: the cancelled reply left the world quiet, and the script stopped all the same. */
  CHECK_INT(llm_server_request_count(srv), 1);
}

SUITE_RUN((UNIT(sigint_says_what_it_did), UNIT(gemini_bad_200_fails), UNIT(canary_key_used_never_written),
  UNIT(tool_loop_every_provider), UNIT(ask_human_answer_reaches_the_model), UNIT(every_provider_gets_the_prompt),
  UNIT(window_never_opens_on_own_reply), UNIT(usage_every_provider_and_mode), UNIT(console_agents_show_tokens),
  UNIT(failure_is_an_event_and_exit_1), UNIT(missing_key_is_named),
  UNIT(many_agents_at_once)), .tmp = &tmp, .srv = &srv)
