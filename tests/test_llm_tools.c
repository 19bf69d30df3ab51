/* Tool calling in the four HTTP providers, streamed and not, against the loopback server: the tools
 * offered in each provider's exact shape (and no tools field without tools), tool-call replies read
 * into llm_call_tool_calls (several calls, arguments split over many events, text and calls
 * together), the follow-up request with an assistant's calls and the tool results in each provider's
 * exact shape, malformed argument text passed through, and the wire formats' piece assembly on its
 * own (interleaved indexes, odd values, caps). */
#include "llm/wire.h"
#include "support/llm_drive.h"
#include "support/llm_server.h"
#include "support/suite.h"
#include "support/unit.h"
#include "support/wire_sink.h"

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

/* ---- the wire formats on their own ---- */

typedef wire_sink sink;

static void sink_init(sink *k, size_t cap) { wire_sink_init(k, cap); }
static int ev(const llm_wire *w, sink *k, const char *name, const char *data) {
  return wire_sink_event(w, k, name, data);
}

static void expect_wire_call(const sink *k, size_t i, const char *id, const char *name, const char *args) {
  if (i >= k->calls.n) {
    CHECK(!"missing call");
    return;
  }
  const llm_wire_call *c = &k->calls.v[i];
  if (id) CHECK_STR(c->id, id);
  else CHECK(c->id == NULL);
  CHECK_STR(c->name, name);
  CHECK_STR(ag_buf_str(&c->args), args);
}

/* Gemini's thinking models sign their calls: the signature is kept with the call and sent back. */
static void test_wire_gemini_thought_signature(void) {
  const llm_wire *w = &llm_gemini_wire;
  sink k;
  sink_init(&k, 1 << 20);
  const char *body = "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":["
                     "{\"functionCall\":{\"name\":\"f\",\"args\":{\"a\":1}},\"thoughtSignature\":\"c2lnLTE=\"},"
                     "{\"functionCall\":{\"name\":\"g\",\"args\":{}}}]},\"finishReason\":\"STOP\"}]}";
  CHECK_INT(w->parse_body(body, strlen(body), &k.out), AG_OK);
  CHECK_INT(k.calls.n, 2);
  CHECK_STR(k.calls.v[0].signature, "c2lnLTE=");
  CHECK(k.calls.v[1].signature == NULL);
  llm_wire_calls_free(&k.calls);
  llm_tool_call calls[] = {{"call_1", "f", "{\"a\":1}", "c2lnLTE="}, {"call_2", "g", "{}", NULL}};
  llm_message msgs[] = {{.role = "user", .content = "go"},
                        {.role = "assistant", .tool_calls = calls, .n_tool_calls = 2},
                        {.role = "tool", .content = "{\"ok\":true}", .tool_call_id = "call_1", .tool_name = "f"},
                        {.role = "tool", .content = "{}", .tool_call_id = "call_2", .tool_name = "g"}};
  llm_request req = {.messages = msgs, .n_messages = 4};
  llm_config cfg;
  llm_config_init(&cfg);
  cfg.provider = LLM_GEMINI;
  ag_buf url;
  ag_buf_init(&url, 4096);
  char *out = NULL;
  CHECK_INT(w->build(&cfg, &req, &url, &out), AG_OK);
  cJSON *j = cJSON_Parse(out);
  const cJSON *model = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "contents"), 1);
  const cJSON *p0 = cJSON_GetArrayItem(cJSON_GetObjectItem(model, "parts"), 0);
  const cJSON *p1 = cJSON_GetArrayItem(cJSON_GetObjectItem(model, "parts"), 1);
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(p0, "thoughtSignature")), "c2lnLTE=");
  CHECK(cJSON_GetObjectItem(p1, "functionCall") != NULL && cJSON_GetObjectItem(p1, "thoughtSignature") == NULL);
  cJSON_Delete(j);
  free(out);
  ag_buf_free(&url);
}

static void test_wire_openai_pieces(void) {
  const llm_wire *w = &llm_openai_wire;
  sink k;
  sink_init(&k, 1 << 20);
  /* Two calls interleaved by index, text among them, odd pieces ignored without harm. */
  CHECK_INT(ev(w, &k, "", "{\"choices\":[{\"delta\":{\"content\":\"Hm. \"}}]}"), AG_OK);
  CHECK_INT(ev(w, &k, "", "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"type\":\"function\","
                          "\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}}]}"), AG_OK);
  CHECK_INT(ev(w, &k, "", "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"b\",\"function\":{\"name\":\"g\","
                          "\"arguments\":\"[\"}}]}}]}"), AG_OK);
  CHECK_INT(ev(w, &k, "", "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"x\\\"\"}},"
                          "{\"index\":1,\"function\":{\"arguments\":\"1]\"}}]}}]}"), AG_OK);
  CHECK_INT(ev(w, &k, "", "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":2}\"}}]}}]}"), AG_OK);
  CHECK_INT(ev(w, &k, "", "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":7}},"
                          "{\"index\":0},{\"index\":0,\"function\":null},7,null]}}]}"), AG_OK);
  CHECK_INT(k.out.done, 0);
  CHECK_INT(ev(w, &k, "", "{\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}"), AG_OK);
  CHECK_INT(k.out.done, 1);
  CHECK_STR(k.text, "Hm. ");
  CHECK_INT(k.calls.n, 2);
  expect_wire_call(&k, 0, "a", "f", "{\"x\":2}");
  expect_wire_call(&k, 1, "b", "g", "[1]");
  llm_wire_calls_free(&k.calls);
  /* A huge index, a negative one, none at all, tool_calls that is not an array. */
  sink_init(&k, 1 << 20);
  CHECK_INT(ev(w, &k, "", "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1e300,\"id\":\"h\",\"function\":{\"name\":\"f\","
                          "\"arguments\":\"{}\"}},{\"index\":-5,\"function\":{\"name\":\"n\"}},{\"function\":{\"name\":\"z\"}}]}}]}"),
            AG_OK);
  CHECK_INT(ev(w, &k, "", "{\"choices\":[{\"delta\":{\"tool_calls\":{\"index\":0}}}]}"), AG_OK);
  CHECK_INT(ev(w, &k, "", "{\"choices\":[{\"delta\":{\"tool_calls\":\"x\"}}]}"), AG_OK);
  CHECK_INT(k.calls.n, 3);
  expect_wire_call(&k, 0, "h", "f", "{}");
  llm_wire_calls_free(&k.calls);
  /* Whole: arguments as text, or as an object from servers that send one. */
  sink_init(&k, 1 << 20);
  const char *body = "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":["
                     "{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\": 1\"}},"
                     "{\"id\":\"c2\",\"type\":\"function\",\"function\":{\"name\":\"g\",\"arguments\":{\"b\":[true]}}},"
                     "{\"id\":\"c3\",\"function\":{\"name\":\"h\"}}]},\"finish_reason\":\"tool_calls\"}]}";
  CHECK_INT(w->parse_body(body, strlen(body), &k.out), AG_OK);
  CHECK_INT(k.calls.n, 3);
  expect_wire_call(&k, 0, "c1", "f", "{\"a\": 1");
  expect_wire_call(&k, 1, "c2", "g", "{\"b\":[true]}");
  expect_wire_call(&k, 2, "c3", "h", "");
  llm_wire_calls_free(&k.calls);
}

static void test_wire_anthropic_pieces(void) {
  const llm_wire *w = &llm_anthropic_wire;
  sink k;
  sink_init(&k, 1 << 20);
  CHECK_INT(ev(w, &k, "content_block_start", "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}"), AG_OK);
  CHECK_INT(ev(w, &k, "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"On it.\"}}"), AG_OK);
  CHECK_INT(ev(w, &k, "content_block_start", "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"f\",\"input\":{}}}"), AG_OK);
  CHECK_INT(ev(w, &k, "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}"), AG_OK);
  CHECK_INT(ev(w, &k, "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"q\\\": \"}}"), AG_OK);
  CHECK_INT(ev(w, &k, "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"x\\\"}\"}}"), AG_OK);
  CHECK_INT(ev(w, &k, "content_block_stop", "{\"type\":\"content_block_stop\",\"index\":1}"), AG_OK);
  /* A block that starts with its whole input and streams none; one whose start input is replaced. */
  CHECK_INT(ev(w, &k, "content_block_start", "{\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t2\",\"name\":\"g\",\"input\":{\"n\":1}}}"), AG_OK);
  CHECK_INT(ev(w, &k, "content_block_start", "{\"type\":\"content_block_start\",\"index\":3,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t3\",\"name\":\"h\",\"input\":{\"old\":1}}}"), AG_OK);
  CHECK_INT(ev(w, &k, "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"new\\\":2}\"}}"), AG_OK);
  /* Odd events: a delta for a block never started, a start without a block. */
  CHECK_INT(ev(w, &k, "content_block_delta", "{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"]\"}}"), AG_OK);
  CHECK_INT(ev(w, &k, "content_block_start", "{\"type\":\"content_block_start\",\"index\":9}"), AG_OK);
  CHECK_INT(ev(w, &k, "message_stop", "{\"type\":\"message_stop\"}"), AG_OK);
  CHECK_STR(k.text, "On it.");
  CHECK_INT(k.calls.n, 3);
  expect_wire_call(&k, 0, "t1", "f", "{\"q\": \"x\"}");
  expect_wire_call(&k, 1, "t2", "g", "{\"n\":1}");
  expect_wire_call(&k, 2, "t3", "h", "{\"new\":2}");
  llm_wire_calls_free(&k.calls);
  sink_init(&k, 1 << 20);
  const char *body = "{\"type\":\"message\",\"content\":[{\"type\":\"text\",\"text\":\"A\"},"
                     "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"f\",\"input\":{\"a\":\"\xc3\xa9\"}},"
                     "{\"type\":\"tool_use\",\"id\":\"t2\",\"name\":\"g\"}],\"stop_reason\":\"tool_use\"}";
  CHECK_INT(w->parse_body(body, strlen(body), &k.out), AG_OK);
  CHECK_STR(k.text, "A");
  CHECK_INT(k.calls.n, 2);
  expect_wire_call(&k, 0, "t1", "f", "{\"a\":\"\xc3\xa9\"}");
  expect_wire_call(&k, 1, "t2", "g", "");
  llm_wire_calls_free(&k.calls);
}

static void test_wire_gemini_ollama_calls(void) {
  sink k;
  sink_init(&k, 1 << 20);
  /* Gemini: calls whole, several in one chunk and more in a later one, args of any type. */
  CHECK_INT(ev(&llm_gemini_wire, &k, "", "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Ok\"},"
                                         "{\"functionCall\":{\"name\":\"f\",\"args\":{\"a\":1}}},{\"functionCall\":{\"name\":\"g\"}}]}}]}"),
            AG_OK);
  CHECK_INT(ev(&llm_gemini_wire, &k, "", "{\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"h\",\"args\":[1]}},"
                                         "{\"functionCall\":7}]},\"finishReason\":\"STOP\"}]}"),
            AG_OK);
  CHECK_STR(k.text, "Ok");
  CHECK_INT(k.calls.n, 3);
  expect_wire_call(&k, 0, NULL, "f", "{\"a\":1}");
  expect_wire_call(&k, 1, NULL, "g", "");
  expect_wire_call(&k, 2, NULL, "h", "[1]");
  llm_wire_calls_free(&k.calls);
  /* Ollama: arguments an object (or, from odd servers, text). */
  sink_init(&k, 1 << 20);
  CHECK_INT(ev(&llm_ollama_wire, &k, "", "{\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":["
                                         "{\"function\":{\"name\":\"f\",\"arguments\":{\"city\":\"Rome\"}}},"
                                         "{\"id\":\"x1\",\"function\":{\"name\":\"g\",\"arguments\":\"{\\\"b\\\":2}\"}}]},\"done\":false}"),
            AG_OK);
  CHECK_INT(ev(&llm_ollama_wire, &k, "", "{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true}"), AG_OK);
  CHECK_INT(k.out.done, 1);
  CHECK_INT(k.calls.n, 2);
  expect_wire_call(&k, 0, NULL, "f", "{\"city\":\"Rome\"}");
  expect_wire_call(&k, 1, "x1", "g", "{\"b\":2}");
  llm_wire_calls_free(&k.calls);
}

static void test_wire_tool_caps(void) {
  /* Argument text counts against the reply's cap, across pieces and calls. */
  const llm_wire *w = &llm_openai_wire;
  sink k;
  sink_init(&k, 30);
  CHECK_INT(ev(w, &k, "", "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"0123456789\"}}]}}]}"), AG_OK);
  CHECK_INT(ev(w, &k, "", "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"0123456789\"}}]}}]}"), AG_OK);
  CHECK_INT(ev(w, &k, "", "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"0123456789\"}}]}}]}"), AG_ERR_TOO_BIG);
  CHECK_STR(k.err.type, "too_big");
  llm_wire_calls_free(&k.calls);
  /* So does the number of calls. */
  sink_init(&k, 1 << 20);
  ag_buf b;
  ag_buf_init(&b, 1 << 20);
  ag_buf_appends(&b, "{\"message\":{\"tool_calls\":[");
  for (int i = 0; i <= LLM_WIRE_MAX_CALLS; i++) ag_buf_printf(&b, "%s{\"function\":{\"name\":\"f\"}}", i ? "," : "");
  ag_buf_appends(&b, "]},\"done\":true}");
  CHECK_INT(ev(&llm_ollama_wire, &k, "", ag_buf_str(&b)), AG_ERR_TOO_BIG);
  CHECK_INT(k.calls.n, LLM_WIRE_MAX_CALLS);
  CHECK(strstr(k.err.message, "tool calls") != NULL);
  ag_buf_free(&b);
  llm_wire_calls_free(&k.calls);
  /* Without a place for calls (out.calls NULL), they are read and dropped. */
  sink_init(&k, 1 << 20);
  k.out.calls = NULL;
  CHECK_INT(ev(w, &k, "", "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}"), AG_OK);
  CHECK_INT(k.calls.n, 0);
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
    UNIT(test_request_carries_tools),
    UNIT(test_no_tools_field_without_tools),
    UNIT(test_invalid_schema_refused),
    UNIT(test_tool_call_reply),
    UNIT(test_several_tool_calls),
    UNIT(test_text_and_tool_call),
    UNIT(test_tool_call_after_retry),
    UNIT(test_followup_request),
    UNIT(test_round_trip),
    UNIT(test_malformed_arguments),
    UNIT(test_wire_openai_pieces),
    UNIT(test_wire_anthropic_pieces),
    UNIT(test_wire_gemini_ollama_calls),
    UNIT(test_wire_gemini_thought_signature),
    UNIT(test_wire_tool_caps),
    UNIT(test_streamed_args_over_cap),
};

int main(int argc, char **argv) {
  static const char *const env[] = {"AGORA_TEST_KEY=sk-test-key", "AGORA_LLM_BACKOFF_MS=5", NULL};
  return suite_main(argc, argv, &(suite){SUITE_TESTS(tests_), .env = env, .srv = &srv});
}
