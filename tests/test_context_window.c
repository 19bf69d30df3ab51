/* The prompt's size and summary mode (issue 26): the token estimate and the window it leaves; a prompt a
 * provider refuses as too long, in each provider's own error shape, shrunk and asked once more (a second
 * refusal is the usual llm-error); context_tokens keeping the recorded prompt under its estimate; the
 * summary of summary mode held to its bound over 1,000 messages, written by the summariser model, and
 * kept by a restart; and the same through the agora binary with a world file. */
#include "support/proc.h"
#include "support/suite.h"
#include "support/tsession.h"
#include "support/unit.h"

#include "agents/context_budget.h"
#include "agents/summary.h"
#include "agents/tools.h"
#include "chat/branch.h"
#include "chat/snapshot.h"
#include "chat/usage.h"
#include "llm/budget.h"
#include "llm/wire.h"
#include "world/world_file.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *tmp;
static llm_server *srv;
static int streamed; /* ann_world's agents use the streaming API */

/* ---- pure ---- */

static ag_msg *entry(const char *sender, const char *text) {
  ag_msg *m = ag_msg_new(sender, text, AG_KIND_HUMAN);
  CHECK(m != NULL);
  return m;
}

static void estimate_and_window(void) {
  CHECK_INT(context_budget_tokens(0), 0);
  CHECK_INT(context_budget_tokens(1), 1);
  CHECK_INT(context_budget_tokens(8), 2);
  CHECK_INT(context_budget_tokens(9), 3);
  ag_msg *mem[4];
  for (int i = 0; i < 4; i++) mem[i] = entry("bob", "0123456789abcdefghijklmnopqrstuvwxyz0123456789"); /* 51 bytes */
  size_t one = context_budget_entry(mem[0]);
  CHECK_INT(one, 13 + CONTEXT_BUDGET_PER_MESSAGE);
  CHECK_INT(context_budget_window(1000, 0, mem, 4, 10), 4);        /* all fit */
  CHECK_INT(context_budget_window(1000, 0, mem, 4, 3), 3);         /* the world's window still bounds it */
  CHECK_INT(context_budget_window(2 * one + 5, 5, mem, 4, 10), 2); /* the newest that fit beside the fixed part */
  CHECK_INT(context_budget_window(1, 500, mem, 4, 10), 1);         /* the message answered always goes */
  CHECK_INT(context_budget_window(1, 0, mem, 0, 10), 0);
  llm_message msgs[2] = {{.role = "system", .content = "12345678"}, {.role = "user", .content = "1234"}};
  llm_tool tool = {.name = "ab", .description = "cd", .parameters_json = "{}"};
  CHECK_INT(context_budget_request(msgs, 2, &tool, 1), 2 + 4 + 1 + 4 + 2);
  for (int i = 0; i < 4; i++) ag_msg_unref(mem[i]);
}

/* The error body each provider sends for a prompt past the model's window, and one that is not. */
static void each_provider_classified(void) {
  static const char *const too_long[] = {
      "{\"error\":{\"message\":\"This model's maximum context length is 128000 tokens. However, your messages "
      "resulted in 130000 tokens.\",\"type\":\"invalid_request_error\",\"param\":\"messages\","
      "\"code\":\"context_length_exceeded\"}}",
      "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: "
      "210000 tokens > 200000 maximum\"}}",
      "[{\"error\":{\"code\":400,\"message\":\"The input token count (1200000) exceeds the maximum number of "
      "tokens allowed (1048576).\",\"status\":\"INVALID_ARGUMENT\"}}]",
      "{\"error\":\"the input length exceeds the context length\"}"};
  for (size_t i = 0; i < 4; i++) {
    llm_error_info info = {0};
    llm_wire_error_body(too_long[i], strlen(too_long[i]), &info);
    CHECK_INT(info.kind, LLM_ERROR_CONTEXT_LENGTH);
    CHECK_STR(info.type, "context_length_exceeded");
  }
  static const char *const other[] = {
      "{\"error\":{\"message\":\"Invalid 'messages[1].role'\",\"type\":\"invalid_request_error\",\"code\":null}}",
      "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"prompt is too long to echo\"}}",
      "{\"error\":\"model 'x' not found\"}", "<html>prompt is too long</html>"};
  for (size_t i = 0; i < 4; i++) {
    llm_error_info info = {.kind = LLM_ERROR_CONTEXT_LENGTH};
    llm_wire_error_body(other[i], strlen(other[i]), &info);
    CHECK_INT(info.kind, LLM_ERROR_OTHER);
  }
}

/* The deterministic fold keeps whole newest lines under the bound. */
static void fold_is_bounded(void) {
  ag_msg *m[3] = {entry("a", "first line"), entry("b", "second\nline"), entry("c", "third line")};
  char *s = summary_fold(NULL, m, 3, 16); /* 64 bytes: all three */
  CHECK_STR(s, "a: first line\nb: second line\nc: third line\n");
  char *t = summary_fold(s, m, 1, 8); /* 32 bytes: the newest whole lines */
  CHECK_STR(t, "c: third line\na: first line\n");
  char *u = summary_bound("ééééé", 1); /* 4 bytes, never half a character */
  CHECK_STR(u, "éé");
  free(s);
  free(t);
  free(u);
  for (int i = 0; i < 3; i++) ag_msg_unref(m[i]);
}

/* The settings read strictly, with their paths, from defaults and agents, and written back. */
static void settings_read_and_written(void) {
  static const struct { const char *json, *error; } bad[] = {
      {"{\"name\": \"w\", \"agents\": [{\"name\": \"a\", \"context_tokens\": 10}]}",
       "test: agents[0].context_tokens: must be between 64 and 100000000"},
      {"{\"name\": \"w\", \"defaults\": {\"context_tokens\": \"lots\"}}", "test: defaults.context_tokens: must be an integer"},
      {"{\"name\": \"w\", \"defaults\": {\"memory\": []}}", "test: defaults.memory: must be an object"},
      {"{\"name\": \"w\", \"defaults\": {\"memory\": {\"mode\": \"summary\", \"sumary_tokens\": 9}}}",
       "test: defaults.memory.sumary_tokens: unknown"},
      {"{\"name\": \"w\", \"agents\": [{\"name\": \"a\", \"memory\": {\"summary_tokens\": 8}}]}",
       "test: agents[0].memory.summary_tokens: must be between 16 and 200000"},
      {"{\"name\": \"w\", \"agents\": [{\"name\": \"a\", \"memory\": {\"summary_model\": 3}}]}",
       "test: agents[0].memory.summary_model: must be a string"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    world_spec spec;
    ag_errmsg em = {""};
    CHECK_INT(world_spec_parse(bad[i].json, strlen(bad[i].json), "test", &spec, &em), AG_ERR_INVALID);
    if (strncmp(em.text, bad[i].error, strlen(bad[i].error))) CHECK_STR(em.text, bad[i].error);
  }
  const char *json = "{\"name\": \"w\", \"defaults\": {\"context_tokens\": 16000, \"memory\": {\"mode\": \"summary\","
                     " \"summary_tokens\": 300}}, \"agents\": [{\"name\": \"a\"}, {\"name\": \"b\", \"context_tokens\": 900,"
                     " \"memory\": {\"mode\": \"window\", \"summary_model\": \"tiny\"}}, {\"name\": \"c\", \"memory\": {}}]}";
  world_spec spec, back;
  ag_errmsg em = {""};
  CHECK_INT(world_spec_parse(json, strlen(json), "test", &spec, &em), AG_OK);
  CHECK_INT(spec.agents[0].context_tokens, 16000);
  CHECK_INT(spec.agents[0].memory.mode, MEM_MODE_SUMMARY);
  CHECK_INT(spec.agents[0].memory.summary_tokens, 300);
  CHECK_INT(spec.agents[1].context_tokens, 900);
  CHECK_INT(spec.agents[1].memory.mode, MEM_MODE_WINDOW);
  CHECK_STR(spec.agents[1].memory.summary_model, "tiny");
  CHECK_INT(spec.agents[2].memory.mode, MEM_MODE_SUMMARY); /* an empty object changes nothing */
  cJSON *j = world_spec_to_json(&spec);
  char *text = cJSON_PrintUnformatted(j);
  CHECK_INT(world_spec_parse(text, strlen(text), "back", &back, &em), AG_OK);
  for (size_t i = 0; i < 3; i++) {
    CHECK_INT(back.agents[i].context_tokens, spec.agents[i].context_tokens);
    CHECK_INT(back.agents[i].memory.mode, spec.agents[i].memory.mode);
    CHECK_INT(back.agents[i].memory.summary_tokens, spec.agents[i].memory.summary_tokens);
  }
  CHECK_STR(back.agents[1].memory.summary_model, "tiny");
  /* A world without them writes neither. */
  world_spec plain;
  const char *none = "{\"name\": \"w\", \"agents\": [{\"name\": \"a\"}]}";
  CHECK_INT(world_spec_parse(none, strlen(none), "test", &plain, &em), AG_OK);
  cJSON *pj = world_spec_to_json(&plain);
  char *ptext = cJSON_PrintUnformatted(pj);
  CHECK(!strstr(ptext, "context_tokens") && !strstr(ptext, "memory\""));
  free(ptext);
  cJSON_Delete(pj);
  world_spec_free(&plain);
  free(text);
  cJSON_Delete(j);
  world_spec_free(&back);
  world_spec_free(&spec);
}

/* ---- in a world, against the loopback server ---- */

static const char *base_url(const char *provider) {
  return llm_server_url(srv, !strcmp(provider, "openai") ? "/v1" : "");
}

/* A world where ann answers on provider with memory window 7 (odd: it starts on a question) and extra settings (",\"k\": v" or ""). */
static const char *ann_world(const char *provider, const char *extra) {
  static char json[2048];
  snprintf(json, sizeof json,
           "{\"name\": \"w\", \"memory_window\": 7, \"agents\": [{\"name\": \"ann\", \"provider\": \"%s\","
           " \"base_url\": \"%s\", \"api_key_env\": \"AGORA_TEST_KEY\", \"stream\": %s,"
           " \"system_prompt\": \"You are ann.\"%s}]}",
           provider, base_url(provider), streamed ? "true" : "false", extra);
  return json;
}

/* The chat messages of recorded request i, in any provider's shape (system included where it is one). */
static int request_messages(size_t i, cJSON **body) {
  llm_server_request r;
  *body = NULL;
  if (llm_server_request_get(srv, i, &r)) return -1;
  *body = cJSON_Parse(r.body);
  llm_server_request_free(&r);
  const cJSON *m = cJSON_GetObjectItem(*body, "messages");
  if (!m) m = cJSON_GetObjectItem(*body, "contents");
  return cJSON_GetArraySize(m);
}

static void say_n(tsession *f, int from, int to) {
  char text[64];
  for (int i = from; i <= to; i++) {
    snprintf(text, sizeof text, "@ann question %d", i);
    tsession_say(f, "human", text);
  }
}

/* The directives of each provider's refusal of a prompt too long. */
static const char *too_long_plan(const char *provider, int once) {
  static char plan[512];
  const char *shape = !strcmp(provider, "openai")
                          ? "error_type=invalid_request_error error_code=context_length_exceeded "
                            "error_message=\"This model's maximum context length is 8192 tokens.\""
                      : !strcmp(provider, "anthropic")
                          ? "error_message=\"prompt is too long: 210000 tokens > 200000 maximum\""
                      : !strcmp(provider, "gemini")
                          ? "error_message=\"The input token count (1200000) exceeds the maximum number of tokens "
                            "allowed (1048576).\""
                          : "error_message=\"the input length exceeds the context length\"";
  snprintf(plan, sizeof plan, "status=400 %s%s", shape, once ? " times=1" : "");
  return plan;
}

static void too_long_shrinks_and_retries_once(void) {
  const char *providers[] = {"openai", "anthropic", "gemini", "ollama"};
  for (int p = 0; p < 8; p++) {
    streamed = p >= 4; /* the refusal comes before any stream: the same, streamed or not */
    tsession f;
    tsession_open(&f, ann_world(providers[p % 4], ""));
    llm_server_reset(srv);
    say_n(&f, 1, 5); /* ten entries of memory: the window of 7 is full */
    CHECK_INT(llm_server_request_count(srv), 5);
    f.log.text[0] = '\0';
    llm_server_rule(srv, "question 6", too_long_plan(providers[p % 4], 1));
    say_n(&f, 6, 6);
    CHECK_INT(llm_server_request_count(srv), 7);
    cJSON *a = NULL, *b = NULL;
    int first = request_messages(5, &a), second = request_messages(6, &b);
    int sys = !strcmp(providers[p % 4], "openai") || !strcmp(providers[p % 4], "ollama"); /* a message of its own */
    CHECK_INT(first, 7 + sys);
    CHECK_INT(second, 3 + sys); /* half the window, the question being answered last */
    cJSON_Delete(a);
    cJSON_Delete(b);
    if (unit_count(f.log.text, "-- context-shrunk") != 1 || unit_count(f.log.text, "-- llm-error") != 0)
      fprintf(stderr, "  %s stream=%d:\n%s", providers[p % 4], streamed, f.log.text);
    CHECK_INT(unit_count(f.log.text, "-- context-shrunk"), 1);
    CHECK_INT(unit_count(f.log.text, "-- llm-error"), 0);
    CHECK_INT(unit_count(f.log.text, "ann: mock reply"), 1);
    /* The shrink lasts for its turn only: the next one sends the whole window again. */
    say_n(&f, 7, 7);
    CHECK_INT(request_messages(7, &a), 7 + sys);
    cJSON_Delete(a);
    tsession_close(&f);
  }
  streamed = 0;
}

static void too_long_twice_is_an_llm_error(void) {
  const char *providers[] = {"openai", "anthropic", "gemini", "ollama"};
  for (int p = 0; p < 4; p++) {
    tsession f;
    tsession_open(&f, ann_world(providers[p], ""));
    llm_server_reset(srv);
    say_n(&f, 1, 3);
    f.log.text[0] = '\0';
    llm_server_rule(srv, "question 4", too_long_plan(providers[p], 0));
    say_n(&f, 4, 4);
    CHECK_INT(llm_server_request_count(srv), 5); /* three answers, then one call and one retry, no more */
    CHECK_INT(unit_count(f.log.text, "-- context-shrunk"), 1);
    CHECK_INT(unit_count(f.log.text, "-- llm-error"), 1);
    CHECK_INT(unit_count(f.log.text, "ann: "), 0);
    tsession_close(&f);
  }
}

/* The estimate of an OpenAI request as context_budget.h counts it (no tools offered). */
static size_t openai_estimate(const cJSON *body) {
  size_t tokens = 0;
  const cJSON *m;
  cJSON_ArrayForEach(m, cJSON_GetObjectItem(body, "messages")) {
    const char *c = cJSON_GetStringValue(cJSON_GetObjectItem(m, "content"));
    tokens += context_budget_tokens(c ? strlen(c) : 0) + CONTEXT_BUDGET_PER_MESSAGE;
  }
  return tokens;
}

static void context_tokens_bound_the_prompt(void) {
  tsession f;
  tsession_open(&f, ann_world("openai", ", \"context_tokens\": 120"));
  llm_server_reset(srv);
  llm_server_rule(srv, "", "reply=\"a reply of some length, about forty bytes\"");
  char text[256];
  for (int i = 1; i <= 12; i++) {
    snprintf(text, sizeof text, "@ann question %d, with enough words around it to weigh about sixty bytes", i);
    tsession_say(&f, "human", text);
    cJSON *body = NULL;
    int n = request_messages((size_t)i - 1, &body);
    CHECK(openai_estimate(body) <= 120);
    CHECK(n >= 2); /* the system prompt and the question, whatever the budget */
    const cJSON *msgs = cJSON_GetObjectItem(body, "messages");
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 0), "content")), "You are ann.");
    const char *last = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, n - 1), "content"));
    CHECK(last && strstr(last, text));
    if (i == 12) CHECK(n < 8); /* the window of 7 no longer fits: the oldest went */
    cJSON_Delete(body);
  }
  tsession_close(&f);
  /* Without it, the window is sent whole, as before. */
  tsession_open(&f, ann_world("openai", ""));
  llm_server_reset(srv);
  llm_server_rule(srv, "", "reply=\"a reply of some length, about forty bytes\"");
  for (int i = 1; i <= 12; i++) {
    snprintf(text, sizeof text, "@ann question %d, with enough words around it to weigh about sixty bytes", i);
    tsession_say(&f, "human", text);
  }
  cJSON *body = NULL;
  CHECK_INT(request_messages(11, &body), 8);
  CHECK(openai_estimate(body) > 120);
  cJSON_Delete(body);
  tsession_close(&f);
}

/* Memory mode stream under context_tokens: the retrieved memories are part of the prompt's fixed part, so
 * the day-old news is in the system prompt and the window is cut further to leave room for it, the whole
 * request (the remember tool's definition included) staying under the budget. */
static void stream_memories_count_in_the_budget(void) {
  static const char *const modes[] = {"window", "stream"};
  int sent[2] = {0, 0};
  const char *news = "@ann the bridge is closed until spring, take the ferry instead";
  for (int m = 0; m < 2; m++) {
    char extra[160], text[160];
    snprintf(extra, sizeof extra, ", \"context_tokens\": 260, \"memory\": {\"mode\": \"%s\"}", modes[m]);
    tsession f;
    tsession_open(&f, ann_world("openai", extra));
    llm_server_reset(srv);
    llm_server_rule(srv, "", "reply=\"a reply of some length, about forty bytes\"");
    tsession_say(&f, "human", news);
    for (int i = 2; i <= 11; i++) {
      snprintf(text, sizeof text, "@ann question %d on the harvest, the weather and the market prices", i);
      tsession_say(&f, "human", text);
    }
    tsession_say(&f, "human", "@ann can I walk over the bridge today?");
    cJSON *body = NULL;
    sent[m] = request_messages(11, &body);
    const cJSON *msgs = cJSON_GetObjectItem(body, "messages");
    const char *sys = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 0), "content"));
    CHECK(sys && (strstr(sys, "the bridge is closed until spring") != NULL) == (m == 1));
    size_t tools = m ? context_budget_request(NULL, 0, tool_definition(TOOL_REMEMBER), 1) : 0;
    if (openai_estimate(body) + tools > 260)
      fprintf(stderr, "  %s: %zu + %zu tokens, %d messages, system:\n%s\n", modes[m], openai_estimate(body), tools,
              sent[m], sys ? sys : "");
    CHECK(openai_estimate(body) + tools <= 260);
    cJSON_Delete(body);
    tsession_close(&f);
  }
  CHECK(sent[1] >= 2 && sent[1] < sent[0]); /* the memories took the room of window messages */
}

/* ---- summary mode ---- */

static const char *SCRIPT_SUMMARY =
    "{\"name\": \"s\", \"memory_window\": 4, \"agents\": [{\"name\": \"sam\", \"replies\": [\"noted\"],"
    " \"memory\": {\"mode\": \"summary\", \"summary_tokens\": 100}}]}";

/* A restart on world resumes the chat: name's summary is what it was (had) and covers the same entries
 * (up to want_upto). The agent of the new world. */
static agent *summary_after_restart(tsession *f, const char *world, const char *name, const char *had, size_t want_upto) {
  char *before = strdup(had ? had : "");
  tsession_restart(f, world);
  CHECK_INT(chat_session_resume(f->cs, NULL), AG_OK);
  agent *a = world_agent_find(f->w, name);
  size_t upto = 0;
  const char *now = agent_summary(a, &upto);
  CHECK_STR(now ? now : "", before);
  CHECK_INT(upto, want_upto);
  free(before);
  return a;
}

static void summary_bounded_over_1000_messages(void) {
  tsession f;
  tsession_open(&f, SCRIPT_SUMMARY);
  CHECK_INT(chat_session_new(f.cs, NULL), AG_OK);
  agent *sam = world_agent_find(f.w, "sam");
  char text[128];
  size_t longest = 0;
  for (int i = 1; i <= 500; i++) { /* 500 questions and 500 answers */
    snprintf(text, sizeof text, "@sam fact %d: the bridge at pier %d is %s", i, i, i % 2 ? "closed" : "open");
    tsession_say(&f, "human", text);
    size_t upto = 0;
    const char *s = agent_summary(sam, &upto);
    size_t len = s ? strlen(s) : 0;
    if (len > longest) longest = len;
    CHECK(len <= summary_max_bytes(100));
    CHECK_INT(upto, agent_memory_total(sam) > 4 ? agent_memory_total(sam) - 4 : 0);
  }
  CHECK_INT(agent_memory_total(sam), 1000);
  CHECK(longest > 300); /* it did fill up to near its bound */
  /* The newest entries folded are those just before the window (fact 499 and its answer on). */
  const char *s = agent_summary(sam, NULL);
  CHECK(s && strstr(s, "sam: noted\n") && strstr(s, "fact 498:"));
  CHECK(s && !strstr(s, "fact 499:")); /* still in the window */
  /* A restart continues it: the same summary of the same entries. */
  summary_after_restart(&f, SCRIPT_SUMMARY, "sam", s, 996);
  tsession_close(&f);
}

static void summary_by_the_summariser_model(void) {
  tsession f;
  tsession_open(&f, ann_world("openai", ", \"memory\": {\"mode\": \"summary\", \"summary_tokens\": 20,"
                                        " \"summary_model\": \"small-model\"}"));
  llm_server_reset(srv);
  llm_server_rule(srv, "running summary", "reply=\"SUMMARY: ann was asked many questions and answered them all, "
                                          "one after the other, for a long while\"");
  CHECK_INT(chat_session_new(f.cs, NULL), AG_OK);
  say_n(&f, 1, 4); /* eight entries: the window of 7 lets one go, which waits for the next turn */
  CHECK_INT(llm_server_request_count(srv), 4);
  say_n(&f, 5, 5); /* ten entries at the next turn: two left the window, folded by the summariser first */
  CHECK_INT(llm_server_request_count(srv), 6);
  cJSON *sum = NULL, *turn = NULL;
  request_messages(4, &sum);
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(sum, "model")), "small-model");
  const char *asked = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(sum, "messages"), 1), "content"));
  CHECK(asked && strstr(asked, "human: @ann question 1\nann: mock reply\n"));
  CHECK_INT(request_messages(5, &turn), 8);
  const char *sys = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(turn, "messages"), 0), "content"));
  /* The answer is held to 20 tokens (80 bytes), its beginning kept. */
  CHECK(sys && strstr(sys, "You are ann.\n\nSummary of the conversation before the messages below:\nSUMMARY: ann was"));
  CHECK(sys && strlen(strstr(sys, "SUMMARY:")) <= 80);
  cJSON_Delete(sum);
  cJSON_Delete(turn);
  /* Stored with the chat: a restart has the model's summary back, not one folded again in place. */
  agent *ann = world_agent_find(f.w, "ann");
  const char *had = agent_summary(ann, NULL);
  char *before = strdup(had ? had : "");
  CHECK_INT(strlen(before), 80);
  ann = summary_after_restart(&f, ann_world("openai", ", \"memory\": {\"mode\": \"summary\", \"summary_tokens\": 20,"
                                                      " \"summary_model\": \"small-model\"}"),
                              "ann", before, 2);
  size_t upto = 0;
  const char *now;
  CHECK_INT(agent_memory_total(ann), 10);
  /* A snapshot round trip and a branch carry it (a step of the thread, anchored before the branch point). */
  char chat[CHAT_ID_MAX], copy[CHAT_ID_MAX];
  snprintf(chat, sizeof chat, "%s", chat_session_current(f.cs));
  cJSON *snap = NULL;
  CHECK_INT(chat_snapshot_export(f.st, chat, &snap, NULL), AG_OK);
  CHECK_INT(chat_snapshot_import(f.st, snap, "snap", copy, NULL), AG_OK);
  cJSON_Delete(snap);
  CHECK_INT(chat_session_load(f.cs, copy, NULL), AG_OK);
  now = agent_summary(world_agent_find(f.w, "ann"), &upto);
  CHECK_STR(now ? now : "", before);
  CHECK_INT(upto, 2);
  CHECK_INT(chat_branch(f.st, chat, 10, copy, NULL), AG_OK); /* the step came in the turn answering 9 */
  CHECK_INT(chat_session_load(f.cs, copy, NULL), AG_OK);
  now = agent_summary(world_agent_find(f.w, "ann"), &upto);
  CHECK_STR(now ? now : "", before);
  CHECK_INT(chat_session_load(f.cs, chat, NULL), AG_OK);
  ann = world_agent_find(f.w, "ann");
  free(before);
  /* Clearing the agent's memory clears its summary for good: a restart does not bring the old one back. */
  CHECK_INT(chat_session_clear_agent(f.cs, "ann", NULL), AG_OK);
  tsession_restart(&f, ann_world("openai", ", \"memory\": {\"mode\": \"summary\", \"summary_tokens\": 20,"
                                          " \"summary_model\": \"small-model\"}"));
  CHECK_INT(chat_session_resume(f.cs, NULL), AG_OK);
  ann = world_agent_find(f.w, "ann");
  now = agent_summary(ann, &upto);
  CHECK_STR(now ? now : "", "");
  CHECK_INT(upto, 0);
  CHECK_INT(agent_memory_total(ann), 0);
  tsession_close(&f);
}

/* The summariser's calls count as any call: each is an llm-done step of the chat with its tokens, so the
 * chat's usage is what the world's budget spent (before, only its failures were said, not its tokens). */
static void summary_calls_count(void) {
  char world[2048];
  snprintf(world, sizeof world,
           "{\"name\": \"w\", \"memory_window\": 7, \"budget\": {\"tokens\": 1000000}, \"agents\": [{\"name\": \"ann\","
           " \"provider\": \"openai\", \"base_url\": \"%s\", \"api_key_env\": \"AGORA_TEST_KEY\","
           " \"system_prompt\": \"You are ann.\", \"memory\": {\"mode\": \"summary\", \"summary_tokens\": 20}}]}",
           base_url("openai"));
  tsession f;
  tsession_open(&f, world);
  llm_server_reset(srv);
  llm_server_rule(srv, "running summary", "reply=\"SUMMARY: ann answered\"");
  CHECK_INT(chat_session_new(f.cs, NULL), AG_OK);
  say_n(&f, 1, 5); /* ten entries at the fifth turn: two left the window, folded by the summariser */
  CHECK_INT(llm_server_request_count(srv), 6);
  llm_spend spent = llm_client_spent(world_llm(f.w));
  chat_usage u;
  CHECK_INT(chat_usage_get(f.st, chat_session_current(f.cs), &u, NULL), AG_OK);
  CHECK_INT(u.n, 1);
  CHECK_INT(u.n ? u.rows[0].calls : 0, 6);
  CHECK(spent.tokens > 0);
  CHECK_INT(u.n ? (int64_t)(u.rows[0].in + u.rows[0].out) : 0, spent.tokens);
  chat_usage_free(&u);
  tsession_close(&f);
}

/* ---- through the binary ---- */

static void through_the_binary(void) {
  char json[2048];
  snprintf(json, sizeof json,
           "{\"name\": \"e\", \"memory_window\": 6, \"defaults\": {\"context_tokens\": 4000,"
           " \"memory\": {\"mode\": \"summary\", \"summary_tokens\": 50}},"
           " \"agents\": [{\"name\": \"ann\", \"provider\": \"openai\", \"base_url\": \"%s\","
           " \"api_key_env\": \"AGORA_TEST_KEY\"}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"@ann one\"}, {\"from\": \"human\", \"text\": \"@ann two\"},"
           " {\"from\": \"human\", \"text\": \"@ann three\"}, {\"from\": \"human\", \"text\": \"@ann four\"}]}",
           base_url("openai"));
  llm_server_reset(srv);
  llm_server_rule(srv, "@ann four", too_long_plan("openai", 1));
  const char *args[] = {"run", suite_file(tmp, "e.json", json), "--json", "--no-save", NULL};
  const char *env[] = {"AGORA_TEST_KEY=sk-test-0123456789", NULL};
  proc_result r;
  CHECK_INT(proc_agora(args, NULL, env, &r), 0);
  CHECK_INT(r.status, 0);
  CHECK_INT(unit_count(r.out, "\"event\":\"context-shrunk\""), 1);
  CHECK(strstr(r.out, "\"window\":3") != NULL); /* half the six sent */
  CHECK_INT(unit_count(r.out, "\"event\":\"llm-error\""), 0);
  CHECK_INT(unit_count(r.out, "\"sender\":\"ann\""), 4);
  /* Seven entries at the fourth answer's turn (window 6): one folded, by one summariser call. */
  CHECK_INT(llm_server_request_count(srv), 6);
  proc_result_free(&r);
  /* A mode that is none is named with its path. */
  snprintf(json, sizeof json, "{\"name\": \"x\", \"agents\": [{\"name\": \"a\", \"memory\": {\"mode\": \"sideways\"}}]}");
  const char *bad[] = {"run", suite_file(tmp, "x.json", json), "--no-save", NULL};
  CHECK_INT(proc_agora(bad, NULL, NULL, &r), 0);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "agents[0].memory.mode: must be one of 'window', 'summary', 'stream'") != NULL);
  proc_result_free(&r);
}

static const unit_test tests[] = {
    {"estimate_and_window", estimate_and_window},
    {"each_provider_classified", each_provider_classified},
    {"fold_is_bounded", fold_is_bounded},
    {"settings_read_and_written", settings_read_and_written},
    {"too_long_shrinks_and_retries_once", too_long_shrinks_and_retries_once},
    {"too_long_twice_is_an_llm_error", too_long_twice_is_an_llm_error},
    {"context_tokens_bound_the_prompt", context_tokens_bound_the_prompt},
    {"stream_memories_count_in_the_budget", stream_memories_count_in_the_budget},
    {"summary_bounded_over_1000_messages", summary_bounded_over_1000_messages},
    {"summary_by_the_summariser_model", summary_by_the_summariser_model},
    {"summary_calls_count", summary_calls_count},
    {"through_the_binary", through_the_binary},
};

int main(int argc, char **argv) {
  static const char *const env[] = {"AGORA_TEST_KEY=sk-test-key", "AGORA_LLM_BACKOFF_MS=5", NULL};
  return suite_main(argc, argv, &(suite){SUITE_TESTS(tests), .env = env, .tmp = &tmp, .srv = &srv});
}
