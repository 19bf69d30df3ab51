/* Tool calls in the wire formats on their own, with no server and no loop (llm/wire.h): the pieces of a
 * streamed call assembled (interleaved indexes, odd values), Gemini's thought signatures kept with their
 * calls, and the caps on calls and their arguments. The providers end to end are in test_llm_tools. */
#include "llm/wire.h"
#include "support/suite.h"
#include "support/unit.h"
#include "support/wire_sink.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

SUITE_RUN((UNIT(test_wire_openai_pieces), UNIT(test_wire_anthropic_pieces), UNIT(test_wire_gemini_ollama_calls),
  UNIT(test_wire_gemini_thought_signature), UNIT(test_wire_tool_caps)))
