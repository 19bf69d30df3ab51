/* Tool calling in the four HTTP providers, streamed and not, against the loopback server: the tools
 * offered in each provider's exact shape (and no tools field without tools), tool-call replies read
 * into llm_call_tool_calls (several calls, arguments split over many events, text and calls
 * together), the follow-up request with an assistant's calls and the tool results in each provider's
 * exact shape, malformed argument text passed through, and arguments past the reply cap. The wire
 * formats' piece assembly on its own is in test_llm_wire_tools. */
#include "llm/wire.h"
#include "support/llm_drive.h"
#include "support/llm_server.h"
#include "support/suite.h"
#include "support/unit.h"

#include <cjson/cJSON.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static llm_server *srv;

static const llm_provider_kind kinds[] = {LLM_OPENAI, LLM_ANTHROPIC, LLM_GEMINI, LLM_OLLAMA};
#define N_KINDS (sizeof kinds / sizeof *kinds)

#define EACH_CASE                                                                                        \
  for (size_t ki_ = 0; ki_ < N_KINDS; ki_++)                                                             \
    for (int stream = 0; stream < 2; stream++)                                                           \
      for (llm_provider_kind kind = kinds[ki_], once_ = 1; once_; once_ = 0)

#define WEATHER_SCHEMA "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}"
#define EMPTY_SCHEMA "{\"type\":\"object\",\"properties\":{}}"

static const llm_tool tools[] = {
    {"get_weather", "Current weather for a city", WEATHER_SCHEMA},
    {"now", NULL, NULL}, /* no description, no parameters: an empty object schema is sent */
};

static void config_for(llm_config *cfg, llm_provider_kind kind, int stream) {
  llm_drive_config(cfg, srv, kind, stream, 10000);
  if (kind == LLM_OLLAMA) cfg->api_key_env = NULL;
}

static const char *name_of(llm_provider_kind k, int stream) {
  static char buf[64];
  snprintf(buf, sizeof buf, "%s/%s", llm_provider_name(k), stream ? "stream" : "whole");
  return buf;
}

/* One call; returns llm_call_start's result (the outcome, tool calls included, is filled when it is AG_OK). */
static int run_call(const llm_config *cfg, const llm_request *req, llm_drive_result *o) {
  struct event_base *base = event_base_new();
  llm_client *c = NULL;
  llm_endpoint *e = NULL;
  int pending = 0;
  llm_drive_result_init(o);
  CHECK_INT(llm_client_new(base, &c), AG_OK);
  CHECK_INT(llm_endpoint_new(c, cfg, &e, NULL), AG_OK);
  int rc = llm_drive_start(e, req, o, base, &pending);
  if (rc == AG_OK) {
    CHECK_INT(o->done, 0); /* never from inside start */
    CHECK_INT(llm_drive_run(base, &pending, 30000), 0);
    CHECK_INT(o->done, 1);
    CHECK(o->err == AG_OK || o->n_calls == 0);
    CHECK_INT(llm_client_active(c), 0);
  }
  llm_endpoint_free(e);
  llm_client_free(c);
  event_base_free(base);
  return rc;
}

static void run_prompt(const llm_config *cfg, const char *system, const char *user, int with_tools, llm_drive_result *o) {
  llm_message msgs[2] = {{.role = "system", .content = system}, {.role = "user", .content = user}};
  llm_request req = {.messages = msgs, .n_messages = 2};
  if (with_tools) {
    req.tools = tools;
    req.n_tools = sizeof tools / sizeof *tools;
  }
  CHECK_INT(run_call(cfg, &req, o), AG_OK);
}

static int json_equal(const char *a, const char *b) {
  cJSON *x = cJSON_Parse(a), *y = cJSON_Parse(b);
  int eq = x && y && cJSON_Compare(x, y, 1);
  cJSON_Delete(x);
  cJSON_Delete(y);
  return eq;
}

#define CHECK_JSON(got, want)                                                                            \
  do {                                                                                                   \
    const char *g_ = (got), *w_ = (want);                                                                \
    if (!g_ || !json_equal(g_, w_)) {                                                                    \
      fprintf(stderr, "  got:      %s\n  expected: %s\n", g_ ? g_ : "(null)", w_);                      \
      CHECK(!"JSON differs");                                                                            \
    }                                                                                                    \
  } while (0)

/* The body of recorded request i, parsed (the caller deletes it). */
static cJSON *request_body(size_t i) {
  llm_server_request q;
  if (llm_server_request_get(srv, i, &q) != 0) return NULL;
  cJSON *body = cJSON_Parse(q.body);
  llm_server_request_free(&q);
  return body;
}

/* ---- (1) the tools in each provider's shape; none without tools ---- */

static const char *tools_json(llm_provider_kind kind) {
  switch (kind) {
  case LLM_ANTHROPIC:
    return "[{\"name\":\"get_weather\",\"description\":\"Current weather for a city\",\"input_schema\":" WEATHER_SCHEMA
           "},{\"name\":\"now\",\"input_schema\":" EMPTY_SCHEMA "}]";
  case LLM_GEMINI:
    return "[{\"functionDeclarations\":[{\"name\":\"get_weather\",\"description\":\"Current weather for a city\","
           "\"parameters\":" WEATHER_SCHEMA "},{\"name\":\"now\",\"parameters\":" EMPTY_SCHEMA "}]}]";
  default: /* OpenAI, Ollama */
    return "[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"description\":\"Current weather for a "
           "city\",\"parameters\":" WEATHER_SCHEMA "}},{\"type\":\"function\",\"function\":{\"name\":\"now\","
           "\"parameters\":" EMPTY_SCHEMA "}}]";
  }
}

/* The whole body a request with these messages (provider-shaped JSON) and tools must have, with
 * config_for's settings. sys is the system prompt, for the providers that send it apart. */
static void expected_body(ag_buf *b, llm_provider_kind kind, int stream, const char *sys, const char *msgs,
                          const char *tools_arr) {
  const char *st = stream ? "true" : "false";
  switch (kind) {
  case LLM_OPENAI:
    ag_buf_printf(b, "{\"model\":\"test-model\",\"messages\":%s", msgs);
    if (tools_arr) ag_buf_printf(b, ",\"tools\":%s", tools_arr);
    ag_buf_printf(b, ",\"stream\":%s%s}", st, stream ? ",\"stream_options\":{\"include_usage\":true}" : "");
    break;
  case LLM_ANTHROPIC:
    ag_buf_printf(b, "{\"model\":\"test-model\",\"max_tokens\":1024,\"system\":\"%s\",\"messages\":%s", sys, msgs);
    if (tools_arr) ag_buf_printf(b, ",\"tools\":%s", tools_arr);
    ag_buf_printf(b, ",\"stream\":%s}", st);
    break;
  case LLM_GEMINI:
    ag_buf_printf(b, "{\"contents\":%s,\"systemInstruction\":{\"parts\":[{\"text\":\"%s\"}]}", msgs, sys);
    if (tools_arr) ag_buf_printf(b, ",\"tools\":%s", tools_arr);
    ag_buf_appends(b, "}");
    break;
  default:
    ag_buf_printf(b, "{\"model\":\"test-model\",\"messages\":%s", msgs);
    if (tools_arr) ag_buf_printf(b, ",\"tools\":%s", tools_arr);
    ag_buf_printf(b, ",\"stream\":%s}", st);
    break;
  }
}

static const char *simple_msgs(llm_provider_kind kind) {
  switch (kind) {
  case LLM_ANTHROPIC: return "[{\"role\":\"user\",\"content\":\"Weather?\"}]";
  case LLM_GEMINI: return "[{\"role\":\"user\",\"parts\":[{\"text\":\"Weather?\"}]}]";
  default: return "[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Weather?\"}]";
  }
}

static void expect_body(const char *want) {
  llm_server_request q;
  CHECK_INT(llm_server_request_get(srv, 0, &q), 0);
  CHECK_JSON(q.body, want);
  llm_server_request_free(&q);
}

static void test_request_carries_tools(void) {
  EACH_CASE {
    llm_server_reset(srv);
    llm_config cfg;
    config_for(&cfg, kind, stream);
    llm_drive_result o;
    run_prompt(&cfg, "Be brief.", "Weather?", 1, &o);
    CHECK_INT(o.err, AG_OK);
    ag_buf want;
    ag_buf_init(&want, 1 << 20);
    expected_body(&want, kind, stream, "Be brief.", simple_msgs(kind), tools_json(kind));
    expect_body(ag_buf_str(&want));
    ag_buf_free(&want);
    llm_drive_result_free(&o);
  }
}

static void test_no_tools_field_without_tools(void) {
  EACH_CASE {
    llm_server_reset(srv);
    llm_config cfg;
    config_for(&cfg, kind, stream);
    /* A tools pointer with n_tools 0 offers nothing either. */
    llm_message msgs[2] = {{.role = "system", .content = "Be brief."}, {.role = "user", .content = "Weather?"}};
    llm_request req = {.messages = msgs, .n_messages = 2, .tools = tools, .n_tools = 0};
    llm_drive_result o;
    CHECK_INT(run_call(&cfg, &req, &o), AG_OK);
    CHECK_INT(o.err, AG_OK);
    ag_buf want;
    ag_buf_init(&want, 1 << 20);
    expected_body(&want, kind, stream, "Be brief.", simple_msgs(kind), NULL);
    expect_body(ag_buf_str(&want));
    cJSON *body = request_body(0);
    CHECK(body && !cJSON_GetObjectItemCaseSensitive(body, "tools"));
    cJSON_Delete(body);
    ag_buf_free(&want);
    llm_drive_result_free(&o);
  }
}

static void test_invalid_schema_refused(void) {
  EACH_CASE {
    llm_server_reset(srv);
    llm_config cfg;
    config_for(&cfg, kind, stream);
    llm_tool bad[] = {{"broken", "x", "{\"type\": \"object\""}, {"array", "x", "[1]"}};
    for (int i = 0; i < 2; i++) {
      llm_message msgs[1] = {{.role = "user", .content = "hi"}};
      llm_request req = {.messages = msgs, .n_messages = 1, .tools = &bad[i], .n_tools = 1};
      llm_drive_result o;
      CHECK_INT(run_call(&cfg, &req, &o), AG_ERR_INVALID);
      llm_drive_result_free(&o);
    }
    CHECK_INT(llm_server_request_count(srv), 0);
  }
}

/* ---- (2) tool-call replies ---- */

/* The id a provider's call i (from 0) gets from the loopback server: Gemini and Ollama send none,
 * so the library numbers them. */
static const char *expected_id(llm_provider_kind kind, int i) {
  static char buf[32];
  if (kind == LLM_OPENAI) snprintf(buf, sizeof buf, "call_mock_%d", i + 1);
  else if (kind == LLM_ANTHROPIC) snprintf(buf, sizeof buf, "toolu_mock_%d", i + 1);
  else snprintf(buf, sizeof buf, "call_%d", i + 1);
  return buf;
}

static void expect_call(const llm_drive_result *o, llm_provider_kind kind, size_t i, const char *name, const char *args) {
  if (i >= o->n_calls) {
    CHECK(!"missing call");
    return;
  }
  CHECK_STR(o->calls[i].id, expected_id(kind, (int)i));
  CHECK_STR(o->calls[i].name, name);
  CHECK_JSON(o->calls[i].args_json, args);
}

static void test_tool_call_reply(void) {
  EACH_CASE {
    llm_server_reset(srv);
    llm_config cfg;
    config_for(&cfg, kind, stream);
    llm_drive_result o;
    run_prompt(&cfg, "[[mock tool=get_weather args=\"{\\\"city\\\": \\\"Paris\\\", \\\"days\\\": [1, 2]}\"]]", "hi", 1,
               &o);
    if (o.err) fprintf(stderr, "  %s: %s\n", name_of(kind, stream), o.info.message);
    CHECK_INT(o.err, AG_OK);
    CHECK_STR(o.text, "");
    CHECK_INT(o.n_chunks, 0); /* arguments are never delivered as text */
    CHECK_INT(o.n_calls, 1);
    expect_call(&o, kind, 0, "get_weather", "{\"city\":\"Paris\",\"days\":[1,2]}");
    llm_drive_result_free(&o);
  }
}

static void test_several_tool_calls(void) {
  /* Arguments one byte per event, with a multi-byte character among them. */
  EACH_CASE {
    llm_server_reset(srv);
    llm_config cfg;
    config_for(&cfg, kind, stream);
    llm_drive_result o;
    run_prompt(&cfg,
               "[[mock args_chunk=1 tool=get_weather args=\"{\\\"city\\\": \\\"Bogot\xc3\xa1\\\"}\" tool2=now "
               "tool3=get_weather args3=\"{\\\"city\\\": \\\"Lyon\\\"}\"]]",
               "hi", 1, &o);
    if (o.err) fprintf(stderr, "  %s: %s\n", name_of(kind, stream), o.info.message);
    CHECK_INT(o.err, AG_OK);
    CHECK_STR(o.text, "");
    CHECK_INT(o.n_chunks, 0);
    CHECK_INT(o.n_calls, 3);
    expect_call(&o, kind, 0, "get_weather", "{\"city\":\"Bogot\xc3\xa1\"}");
    expect_call(&o, kind, 1, "now", "{}");
    expect_call(&o, kind, 2, "get_weather", "{\"city\":\"Lyon\"}");
    llm_drive_result_free(&o);
  }
}

/* ---- (4) text and calls together ---- */

static void test_text_and_tool_call(void) {
  EACH_CASE {
    llm_server_reset(srv);
    llm_config cfg;
    config_for(&cfg, kind, stream);
    llm_drive_result o;
    run_prompt(&cfg, "[[mock reply=\"Let me look that up.\" tool=get_weather args={\"city\":\"Oslo\"}]]", "hi", 1, &o);
    if (o.err) fprintf(stderr, "  %s: %s\n", name_of(kind, stream), o.info.message);
    CHECK_INT(o.err, AG_OK);
    CHECK_STR(o.text, "Let me look that up.");
    if (stream) CHECK_STR(ag_buf_str(&o.chunks), "Let me look that up.");
    else CHECK_INT(o.n_chunks, 0);
    CHECK_INT(o.n_calls, 1);
    expect_call(&o, kind, 0, "get_weather", "{\"city\":\"Oslo\"}");
    llm_drive_result_free(&o);
  }
}

static void test_tool_call_after_retry(void) {
  /* A failed first attempt leaves no calls behind: the retry's calls are the only ones. */
  EACH_CASE {
    llm_server_reset(srv);
    llm_config cfg;
    config_for(&cfg, kind, stream);
    llm_drive_result o;
    run_prompt(&cfg, "[[mock tool=now status=500 times=1]]", "hi", 1, &o);
    CHECK_INT(o.err, AG_OK);
    CHECK_INT(llm_server_request_count(srv), 2);
    CHECK_INT(o.n_calls, 1);
    expect_call(&o, kind, 0, "now", "{}");
    llm_drive_result_free(&o);
  }
}

/* ---- (3) the follow-up request: an assistant's calls and the tool results ---- */

static const char *followup_msgs(llm_provider_kind kind) {
  switch (kind) {
  case LLM_OPENAI:
    return "[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Weather in Paris?\"},"
           "{\"role\":\"assistant\",\"content\":\"Checking.\",\"tool_calls\":["
           "{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":"
           "\"{\\\"city\\\":\\\"Paris\\\"}\"}},"
           "{\"id\":\"call_2\",\"type\":\"function\",\"function\":{\"name\":\"now\",\"arguments\":\"{}\"}}]},"
           "{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"{\\\"temp_c\\\":21}\"},"
           "{\"role\":\"tool\",\"tool_call_id\":\"call_2\",\"content\":\"\\\"12:00\\\"\"},"
           "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":["
           "{\"id\":\"call_3\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":"
           "\"{\\\"city\\\": \\\"Ly\"}}]},"
           "{\"role\":\"tool\",\"tool_call_id\":\"call_3\",\"content\":\"not json\"},"
           "{\"role\":\"user\",\"content\":\"Thanks\"}]";
  case LLM_ANTHROPIC:
    return "[{\"role\":\"user\",\"content\":\"Weather in Paris?\"},"
           "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Checking.\"},"
           "{\"type\":\"tool_use\",\"id\":\"call_1\",\"name\":\"get_weather\",\"input\":{\"city\":\"Paris\"}},"
           "{\"type\":\"tool_use\",\"id\":\"call_2\",\"name\":\"now\",\"input\":{}}]},"
           "{\"role\":\"user\",\"content\":["
           "{\"type\":\"tool_result\",\"tool_use_id\":\"call_1\",\"content\":\"{\\\"temp_c\\\":21}\"},"
           "{\"type\":\"tool_result\",\"tool_use_id\":\"call_2\",\"content\":\"\\\"12:00\\\"\"}]},"
           "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"call_3\",\"name\":\"get_weather\","
           "\"input\":{}}]},"
           "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"call_3\",\"content\":\"not json\"},"
           "{\"type\":\"text\",\"text\":\"Thanks\"}]}]";
  case LLM_GEMINI:
    return "[{\"role\":\"user\",\"parts\":[{\"text\":\"Weather in Paris?\"}]},"
           "{\"role\":\"model\",\"parts\":[{\"text\":\"Checking.\"},"
           "{\"functionCall\":{\"name\":\"get_weather\",\"args\":{\"city\":\"Paris\"}}},"
           "{\"functionCall\":{\"name\":\"now\",\"args\":{}}}]},"
           "{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"name\":\"get_weather\",\"response\":{\"temp_c\":21}}},"
           "{\"functionResponse\":{\"name\":\"now\",\"response\":{\"result\":\"12:00\"}}}]},"
           "{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"get_weather\",\"args\":{}}}]},"
           "{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"name\":\"get_weather\",\"response\":{\"result\":"
           "\"not json\"}}},{\"text\":\"Thanks\"}]}]";
  default:
    return "[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Weather in Paris?\"},"
           "{\"role\":\"assistant\",\"content\":\"Checking.\",\"tool_calls\":["
           "{\"function\":{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}},"
           "{\"function\":{\"name\":\"now\",\"arguments\":{}}}]},"
           "{\"role\":\"tool\",\"content\":\"{\\\"temp_c\\\":21}\",\"tool_name\":\"get_weather\"},"
           "{\"role\":\"tool\",\"content\":\"\\\"12:00\\\"\",\"tool_name\":\"now\"},"
           "{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":["
           "{\"function\":{\"name\":\"get_weather\",\"arguments\":{}}}]},"
           "{\"role\":\"tool\",\"content\":\"not json\",\"tool_name\":\"get_weather\"},"
           "{\"role\":\"user\",\"content\":\"Thanks\"}]";
  }
}

/* A conversation through two rounds of calls: text with two calls, their results (an object and a
 * bare string), then a call whose arguments were malformed (sent back as {} where the format wants
 * an object, as they were where it wants text) and its non-JSON result, then the user again. */
static void test_followup_request(void) {
  const llm_tool_call round1[] = {{"call_1", "get_weather", "{\"city\":\"Paris\"}", NULL}, {"call_2", "now", "{}", NULL}};
  const llm_tool_call round2[] = {{"call_3", "get_weather", "{\"city\": \"Ly", NULL}};
  const llm_message msgs[] = {
      {.role = "system", .content = "Be brief."},
      {.role = "user", .content = "Weather in Paris?"},
      {.role = "assistant", .content = "Checking.", .tool_calls = round1, .n_tool_calls = 2},
      {.role = "tool", .content = "{\"temp_c\":21}", .tool_call_id = "call_1", .tool_name = "get_weather"},
      {.role = "tool", .content = "\"12:00\"", .tool_call_id = "call_2", .tool_name = "now"},
      {.role = "assistant", .content = NULL, .tool_calls = round2, .n_tool_calls = 1},
      {.role = "tool", .content = "not json", .tool_call_id = "call_3", .tool_name = "get_weather"},
      {.role = "user", .content = "Thanks"},
  };
  EACH_CASE {
    llm_server_reset(srv);
    llm_config cfg;
    config_for(&cfg, kind, stream);
    llm_request req = {.messages = msgs, .n_messages = sizeof msgs / sizeof *msgs, .tools = tools, .n_tools = 2};
    llm_drive_result o;
    CHECK_INT(run_call(&cfg, &req, &o), AG_OK);
    CHECK_INT(o.err, AG_OK);
    CHECK_STR(o.text, "mock reply");
    ag_buf want;
    ag_buf_init(&want, 1 << 20);
    expected_body(&want, kind, stream, "Be brief.", followup_msgs(kind), tools_json(kind));
    expect_body(ag_buf_str(&want));
    ag_buf_free(&want);
    llm_drive_result_free(&o);
  }
}

/* The loop an agent runs: a call, then the request with its result, answered with text
 * (the server's after_tool directive). */
static void test_round_trip(void) {
  EACH_CASE {
    llm_server_reset(srv);
    llm_config cfg;
    config_for(&cfg, kind, stream);
    const char *sys = "[[mock tool=now after_tool=\"It is noon.\"]]";
    llm_drive_result first;
    run_prompt(&cfg, sys, "What time is it?", 1, &first);
    CHECK_INT(first.err, AG_OK);
    CHECK_INT(first.n_calls, 1);
    if (first.n_calls != 1) {
      llm_drive_result_free(&first);
      continue;
    }
    llm_tool_call call = first.calls[0];
    llm_message msgs[] = {
        {.role = "system", .content = sys},
        {.role = "user", .content = "What time is it?"},
        {.role = "assistant", .content = first.text, .tool_calls = &call, .n_tool_calls = 1},
        {.role = "tool", .content = "{\"time\":\"12:00\"}", .tool_call_id = call.id, .tool_name = call.name},
    };
    llm_request req = {.messages = msgs, .n_messages = 4, .tools = tools, .n_tools = 2};
    llm_drive_result second;
    CHECK_INT(run_call(&cfg, &req, &second), AG_OK);
    CHECK_INT(second.err, AG_OK);
    CHECK_STR(second.text, "It is noon.");
    CHECK_INT(second.n_calls, 0);
    /* The result went back tied to its call: by id, or by name for Gemini. */
    llm_server_request q;
    CHECK_INT(llm_server_request_get(srv, 1, &q), 0);
    const char *tie = kind == LLM_OPENAI      ? "\"tool_call_id\":\"call_mock_1\""
                      : kind == LLM_ANTHROPIC ? "\"tool_use_id\":\"toolu_mock_1\""
                      : kind == LLM_GEMINI    ? "\"functionResponse\":{\"name\":\"now\""
                                              : "\"tool_name\":\"now\"";
    if (!strstr(q.body, tie)) fprintf(stderr, "  %s: no %s in %s\n", name_of(kind, stream), tie, q.body);
    CHECK(strstr(q.body, tie) != NULL);
    llm_server_request_free(&q);
    llm_drive_result_free(&second);
    llm_drive_result_free(&first);
  }
}

/* ---- (5) malformed arguments ---- */

static void test_malformed_arguments(void) {
  /* Invalid JSON as arguments: OpenAI and Anthropic stream it in pieces, whole replies and the other
   * formats carry it as a JSON string. It reaches the caller as the text it was. */
  const char *raw[] = {"{\"city\": \"Par", "}{", "[1, 2", "{\"a\": \"\\u12\"}", "nul"};
  EACH_CASE {
    for (size_t i = 0; i < sizeof raw / sizeof *raw; i++) {
      llm_server_reset(srv);
      llm_config cfg;
      config_for(&cfg, kind, stream);
      cJSON *quoted = cJSON_CreateString(raw[i]); /* the directive's quoting is JSON's */
      char *q = cJSON_PrintUnformatted(quoted);
      char sys[256];
      snprintf(sys, sizeof sys, "[[mock args_chunk=2 tool=get_weather args=%s tool2=now]]", q);
      free(q);
      cJSON_Delete(quoted);
      llm_drive_result o;
      run_prompt(&cfg, sys, "hi", 1, &o);
      if (o.err) fprintf(stderr, "  %s: %s\n", name_of(kind, stream), o.info.message);
      CHECK_INT(o.err, AG_OK);
      CHECK_INT(o.n_calls, 2);
      if (o.n_calls == 2) {
        CHECK_STR(o.calls[0].args_json, raw[i]);
        CHECK_STR(o.calls[1].args_json, "{}");
      }
      llm_drive_result_free(&o);
    }
  }
}

static void test_streamed_args_over_cap(void) {
  /* A reply whose arguments are past the 4 MiB reply cap fails cleanly (for the formats that stream
   * arguments in pieces, each event stays small). */
  llm_provider_kind ks[] = {LLM_OPENAI, LLM_ANTHROPIC};
  for (int i = 0; i < 2; i++) {
    llm_server_reset(srv);
    llm_config cfg;
    config_for(&cfg, ks[i], 1);
    cfg.max_retries = 0;
    /* The directive is too big for a system prompt literal: a rule supplies it. */
    ag_buf d;
    ag_buf_init(&d, (size_t)16 << 20);
    ag_buf_appends(&d, "args_chunk=65536 tool=f args=\"{\\\"x\\\": \\\"");
    for (int j = 0; j < (5 << 20) / 64; j++) ag_buf_appends(&d, "0123456789012345678901234567890123456789012345678901234567890123");
    ag_buf_appends(&d, "\\\"}\"");
    CHECK_INT(llm_server_rule(srv, "BIGARGS", ag_buf_str(&d)), 0);
    ag_buf_free(&d);
    llm_drive_result o;
    run_prompt(&cfg, "BIGARGS", "hi", 1, &o);
    CHECK_INT(o.err, AG_ERR_LLM);
    CHECK_STR(o.info.type, "too_big");
    CHECK_INT(o.n_calls, 0);
    llm_drive_result_free(&o);
  }
}

static const unit_test tests_[] = {
  UNIT(test_request_carries_tools), UNIT(test_no_tools_field_without_tools), UNIT(test_invalid_schema_refused),
  UNIT(test_tool_call_reply), UNIT(test_several_tool_calls), UNIT(test_text_and_tool_call),
  UNIT(test_tool_call_after_retry), UNIT(test_followup_request), UNIT(test_round_trip),
  UNIT(test_malformed_arguments), UNIT(test_streamed_args_over_cap)
};

int main(int argc, char **argv) {
  static const char *const env[] = {"AGORA_TEST_KEY=sk-test-key", "AGORA_LLM_BACKOFF_MS=5", NULL};
  return suite_main(argc, argv, &(suite){SUITE_TESTS(tests_), .env = env, .srv = &srv});
}
