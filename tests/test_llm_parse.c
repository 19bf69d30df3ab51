/* The pure parts of the HTTP providers, without a server: the SSE and NDJSON parsers (events split
 * at every byte, several per read, line-end variants, size caps), the retry policy, and each wire
 * format's reading of streamed events, whole replies and error bodies. */
#include "llm/retry.h"
#include "net/net_stream.h"
#include "llm/wire.h"
#include "support/suite.h"
#include "support/unit.h"
#include "support/wire_sink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- stream parsers ---- */

typedef struct events {
  char log[4096]; /* "event|data;" per event */
  int n;
  int fail_at; /* on_event returns an error at this event (1-based), 0: never */
} events;

static int collect(void *ud, const char *event, const char *data, size_t len) {
  events *ev = ud;
  ev->n++;
  CHECK_INT(strlen(data), len); /* NUL-terminated, no embedded NULs here */
  size_t used = strlen(ev->log);
  snprintf(ev->log + used, sizeof ev->log - used, "%s|%s;", event, data);
  return ev->n == ev->fail_at ? AG_ERR_LLM : AG_OK;
}

/* Feeds input in pieces of size step (0: all at once), then finishes. */
static int feed(net_stream_kind kind, const char *input, size_t step, events *ev, size_t event_cap, size_t total_cap) {
  net_stream s;
  net_stream_init(&s, kind, event_cap, total_cap, collect, ev);
  size_t len = strlen(input);
  int rc = AG_OK;
  for (size_t off = 0; rc == AG_OK && off < len;) {
    size_t n = step && len - off > step ? step : len - off;
    rc = net_stream_feed(&s, input + off, n);
    off += n;
  }
  if (rc == AG_OK) rc = net_stream_finish(&s);
  net_stream_free(&s);
  return rc;
}

static void expect_events(net_stream_kind kind, const char *input, const char *want) {
  /* Every split: all at once, then every piece size down to one byte. */
  size_t len = strlen(input);
  for (size_t step = 0; step <= len; step++) {
    events ev;
    memset(&ev, 0, sizeof ev);
    CHECK_INT(feed(kind, input, step, &ev, 1 << 20, 1 << 22), AG_OK);
    if (strcmp(ev.log, want) != 0) {
      fprintf(stderr, "  step %zu: got '%s'\n", step, ev.log);
      CHECK_STR(ev.log, want);
      return;
    }
  }
}

static void test_sse_events(void) {
  expect_events(NET_STREAM_SSE, "data: one\n\ndata: two\n\n", "|one;|two;");
  expect_events(NET_STREAM_SSE, "event: message_start\ndata: {\"a\":1}\n\nevent: ping\ndata: {}\n\n",
                "message_start|{\"a\":1};ping|{};");
  /* CRLF (Gemini), lone CR, no space after the colon, comments, unknown fields. */
  expect_events(NET_STREAM_SSE, "data: a\r\n\r\ndata:b\r\r: keep-alive\n\nid: 7\nretry: 10\ndata: c\n\n", "|a;|b;|c;");
  /* Several data lines join with a newline; an event with no data is no event. */
  expect_events(NET_STREAM_SSE, "data: x\ndata: y\n\nevent: empty\n\ndata: z\n\n", "|x\ny;|z;");
  /* The event name belongs to one event only. */
  expect_events(NET_STREAM_SSE, "event: error\ndata: e\n\ndata: f\n\n", "error|e;|f;");
  /* An unterminated last event is delivered at the end. */
  expect_events(NET_STREAM_SSE, "data: [DONE]", "|[DONE];");
}

static void test_ndjson_lines(void) {
  expect_events(NET_STREAM_NDJSON, "{\"a\":1}\n{\"b\":2}\n", "|{\"a\":1};|{\"b\":2};");
  expect_events(NET_STREAM_NDJSON, "{\"a\":1}\r\n\n  \n{\"b\":2}", "|{\"a\":1};|{\"b\":2};");
}

static void test_stream_caps(void) {
  events ev;
  char big[200];
  memset(&ev, 0, sizeof ev);
  /* One event past the event cap, whether in one line or spread over data lines. */
  memset(big, 'x', sizeof big);
  snprintf(big, sizeof big, "data: %0150d\n\n", 1);
  CHECK_INT(feed(NET_STREAM_SSE, big, 7, &ev, 100, 1 << 20), AG_ERR_TOO_BIG);
  memset(&ev, 0, sizeof ev);
  CHECK_INT(feed(NET_STREAM_SSE, "data: 0123456789\ndata: 0123456789\ndata: 0123456789\n\n", 5, &ev, 30, 1 << 20),
            AG_ERR_TOO_BIG);
  CHECK_INT(ev.n, 0);
  /* The whole reply past its cap, even with small events. */
  memset(&ev, 0, sizeof ev);
  CHECK_INT(feed(NET_STREAM_NDJSON, "{}\n{}\n{}\n{}\n{}\n{}\n", 3, &ev, 100, 10), AG_ERR_TOO_BIG);
  CHECK(ev.n < 6);
  /* A failed stream stays failed. */
  net_stream s;
  net_stream_init(&s, NET_STREAM_NDJSON, 4, 100, collect, &ev);
  CHECK_INT(net_stream_feed(&s, "123456\n", 7), AG_ERR_TOO_BIG);
  CHECK_INT(net_stream_feed(&s, "1\n", 2), AG_ERR_TOO_BIG);
  CHECK_INT(net_stream_finish(&s), AG_ERR_TOO_BIG);
  net_stream_free(&s);
}

static void test_stream_callback_error_stops(void) {
  events ev;
  memset(&ev, 0, sizeof ev);
  ev.fail_at = 2;
  CHECK_INT(feed(NET_STREAM_SSE, "data: 1\n\ndata: 2\n\ndata: 3\n\n", 0, &ev, 100, 1000), AG_ERR_LLM);
  CHECK_INT(ev.n, 2);
}

/* ---- retry policy ---- */

static void test_retry_status(void) {
  long yes[] = {408, 409, 429, 500, 502, 503, 504, 529};
  long no[] = {200, 400, 401, 403, 404, 422};
  for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) CHECK_INT(llm_retry_status(yes[i], NULL, NULL), 1);
  for (size_t i = 0; i < sizeof no / sizeof *no; i++) CHECK_INT(llm_retry_status(no[i], NULL, NULL), 0);
  CHECK_INT(llm_retry_status(429, "insufficient_quota", NULL), 0);
  CHECK_INT(llm_retry_status(429, "requests", "insufficient_quota"), 0);
  CHECK_INT(llm_retry_status(429, "rate_limit_error", NULL), 1);
  CHECK_INT(llm_retry_error_type("overloaded_error"), 1);
  CHECK_INT(llm_retry_error_type("invalid_request_error"), 0);
  CHECK_INT(llm_retry_error_type(NULL), 0);
}

static void test_retry_backoff(void) {
  CHECK_INT(llm_retry_backoff_ms(250, 1, 0), 125);
  CHECK_INT(llm_retry_backoff_ms(250, 1, 125), 250);
  CHECK_INT(llm_retry_backoff_ms(250, 2, 0), 250);
  CHECK_INT(llm_retry_backoff_ms(250, 3, 0), 500);
  for (int n = 1; n < 40; n++) {
    long lo = llm_retry_backoff_ms(250, n, 0), hi = llm_retry_backoff_ms(250, n, 0xffffffffu);
    CHECK(lo >= 125 && hi <= LLM_RETRY_MAX_BACKOFF_MS && lo <= hi);
  }
  CHECK_INT(llm_retry_backoff_ms(250, 30, 0), LLM_RETRY_MAX_BACKOFF_MS / 2);
  CHECK_INT(llm_retry_backoff_ms(0, 3, 12345), 0);
}

static void test_retry_after_parse(void) {
  long ms = -1;
  CHECK_INT(llm_retry_parse_after(" 2\r\n", 4, 0, &ms), 1);
  CHECK_INT(ms, 2000);
  CHECK_INT(llm_retry_parse_after("1.5", 3, 0, &ms), 1);
  CHECK_INT(ms, 1500);
  CHECK_INT(llm_retry_parse_after("3600", 4, 0, &ms), 1);
  CHECK_INT(ms, LLM_RETRY_MAX_AFTER_MS);
  CHECK_INT(llm_retry_parse_after("250", 3, 1, &ms), 1);
  CHECK_INT(ms, 250);
  const char *date = "Wed, 21 Oct 2015 07:28:00 GMT";
  CHECK_INT(llm_retry_parse_after(date, strlen(date), 0, &ms), 0);
  CHECK_INT(llm_retry_parse_after("", 0, 0, &ms), 0);
  CHECK_INT(llm_retry_parse_after("-1", 2, 0, &ms), 0);
}

/* ---- wire formats ---- */

typedef wire_sink sink;

static void sink_init(sink *k) { wire_sink_init(k, 0); }
static int event(const llm_wire *w, sink *k, const char *name, const char *data) {
  return wire_sink_event(w, k, name, data);
}

static void test_wire_openai(void) {
  const llm_wire *w = &llm_openai_wire;
  sink k;
  sink_init(&k);
  CHECK_INT(event(w, &k, "", "{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}"), AG_OK);
  CHECK_INT(event(w, &k, "", "{\"choices\":[{\"delta\":{\"content\":\"Hel\"},\"finish_reason\":null}]}"), AG_OK);
  CHECK_INT(event(w, &k, "", "{\"choices\":[{\"delta\":{\"content\":\"lo\"},\"finish_reason\":null}]}"), AG_OK);
  CHECK_INT(k.out.done, 0);
  CHECK_INT(event(w, &k, "", "{\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}"), AG_OK);
  CHECK_INT(event(w, &k, "", "{\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":2}}"), AG_OK);
  CHECK_INT(event(w, &k, "", "[DONE]"), AG_OK);
  CHECK_STR(k.text, "Hello");
  CHECK_INT(k.out.done, 1);
  CHECK_INT(k.out.input_tokens, 7);
  CHECK_INT(k.out.output_tokens, 2);
  sink_init(&k);
  CHECK_INT(event(w, &k, "", "{\"error\":{\"message\":\"boom\",\"type\":\"server_error\",\"code\":null}}"), AG_ERR_LLM);
  CHECK_STR(k.err.type, "server_error");
  CHECK_STR(k.err.message, "boom");
  sink_init(&k);
  CHECK_INT(event(w, &k, "", "{\"choices\":[{\"delta\":"), AG_ERR_INVALID);
  CHECK_STR(k.err.type, "malformed");
  sink_init(&k);
  const char *body = "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"Whole\"},\"finish_reason\":\"stop\"}],"
                     "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}";
  CHECK_INT(w->parse_body(body, strlen(body), &k.out), AG_OK);
  CHECK_STR(k.text, "Whole");
  CHECK_INT(k.out.done, 1);
}

static void test_wire_anthropic(void) {
  const llm_wire *w = &llm_anthropic_wire;
  sink k;
  sink_init(&k);
  CHECK_INT(event(w, &k, "message_start", "{\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":11,\"output_tokens\":1}}}"), AG_OK);
  CHECK_INT(event(w, &k, "content_block_start", "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}"), AG_OK);
  CHECK_INT(event(w, &k, "ping", "{\"type\":\"ping\"}"), AG_OK);
  CHECK_INT(event(w, &k, "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi \"}}"), AG_OK);
  CHECK_INT(event(w, &k, "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"there\"}}"), AG_OK);
  CHECK_INT(event(w, &k, "content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}"), AG_OK);
  CHECK_INT(event(w, &k, "message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":5}}"), AG_OK);
  CHECK_INT(k.out.done, 0);
  CHECK_INT(event(w, &k, "message_stop", "{\"type\":\"message_stop\"}"), AG_OK);
  CHECK_STR(k.text, "Hi there");
  CHECK_INT(k.out.done, 1);
  CHECK_INT(k.out.input_tokens, 11);
  CHECK_INT(k.out.output_tokens, 5);
  sink_init(&k);
  CHECK_INT(event(w, &k, "error", "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"), AG_ERR_LLM);
  CHECK_STR(k.err.type, "overloaded_error");
  CHECK_STR(k.err.message, "Overloaded");
  sink_init(&k);
  /* Tool input arrives as JSON fragments, which are not text. */
  CHECK_INT(event(w, &k, "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\"\"}}"), AG_OK);
  CHECK_STR(k.text, "");
  sink_init(&k);
  const char *body = "{\"type\":\"message\",\"content\":[{\"type\":\"text\",\"text\":\"A\"},{\"type\":\"tool_use\",\"name\":\"t\"},"
                     "{\"type\":\"text\",\"text\":\"B\"}],\"usage\":{\"input_tokens\":2,\"output_tokens\":3}}";
  CHECK_INT(w->parse_body(body, strlen(body), &k.out), AG_OK);
  CHECK_STR(k.text, "AB");
  CHECK_INT(k.out.output_tokens, 3);
}

static void test_wire_gemini(void) {
  const llm_wire *w = &llm_gemini_wire;
  sink k;
  sink_init(&k);
  CHECK_INT(event(w, &k, "", "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Bon\"}],\"role\":\"model\"}}]}"), AG_OK);
  CHECK_INT(event(w, &k, "", "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"jour\"}],\"role\":\"model\"},\"finishReason\":\"STOP\"}],"
                              "\"usageMetadata\":{\"promptTokenCount\":4,\"candidatesTokenCount\":2}}"), AG_OK);
  CHECK_STR(k.text, "Bonjour");
  CHECK_INT(k.out.done, 1);
  CHECK_INT(k.out.input_tokens, 4);
  sink_init(&k);
  CHECK_INT(event(w, &k, "", "{\"promptFeedback\":{\"blockReason\":\"SAFETY\"}}"), AG_ERR_LLM);
  CHECK_STR(k.err.type, "blocked");
  sink_init(&k);
  CHECK_INT(event(w, &k, "", "{\"error\":{\"code\":503,\"message\":\"busy\",\"status\":\"UNAVAILABLE\"}}"), AG_ERR_LLM);
  CHECK_STR(k.err.type, "UNAVAILABLE");
}

static void test_wire_ollama(void) {
  const llm_wire *w = &llm_ollama_wire;
  sink k;
  sink_init(&k);
  CHECK_INT(event(w, &k, "", "{\"message\":{\"role\":\"assistant\",\"content\":\"Hey\"},\"done\":false}"), AG_OK);
  CHECK_INT(k.out.done, 0);
  CHECK_INT(event(w, &k, "", "{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"prompt_eval_count\":9,\"eval_count\":1}"), AG_OK);
  CHECK_STR(k.text, "Hey");
  CHECK_INT(k.out.done, 1);
  CHECK_INT(k.out.input_tokens, 9);
  sink_init(&k);
  CHECK_INT(event(w, &k, "", "{\"error\":\"model 'x' not found\"}"), AG_ERR_LLM);
  CHECK_STR(k.err.message, "model 'x' not found");
}

/* Issue 17: a value followed by anything but white space is malformed, in every wire format: a
 * whole-reply request answered with NDJSON lines, or a reply with an HTML tail, is not its first part. */
static void test_wire_trailing_junk(void) {
  const llm_wire *wires[] = {&llm_openai_wire, &llm_anthropic_wire, &llm_gemini_wire, &llm_ollama_wire};
  const char *bodies[] = {"{\"message\": 7}\n[1, 2, 3]\n", "{\"choices\": []}<html>", "{} {}", "{\"done\": true}\nx"};
  for (size_t i = 0; i < 4; i++) {
    for (size_t j = 0; j < 4; j++) {
      sink k;
      sink_init(&k);
      CHECK_INT(wires[i]->parse_body(bodies[j], strlen(bodies[j]), &k.out), AG_ERR_INVALID);
      CHECK_STR(k.err.type, "malformed");
    }
  }
  sink k;
  sink_init(&k);
  const char *ok = "{\"message\":{\"content\":\"Hi\"},\"done\":true}\r\n \n";
  CHECK_INT(llm_ollama_wire.parse_body(ok, strlen(ok), &k.out), AG_OK);
  CHECK_STR(k.text, "Hi");
}

static void test_wire_error_bodies(void) {
  llm_error_info e;
  const char *openai = "{\"error\":{\"message\":\"You exceeded your current quota\",\"type\":\"insufficient_quota\",\"param\":null,\"code\":\"insufficient_quota\"}}";
  memset(&e, 0, sizeof e);
  llm_wire_error_body(openai, strlen(openai), &e);
  CHECK_STR(e.type, "insufficient_quota");
  CHECK_STR(e.message, "You exceeded your current quota");
  const char *gemini = "[{\"error\":{\"code\":429,\"message\":\"Resource has been exhausted\",\"status\":\"RESOURCE_EXHAUSTED\"}}]";
  memset(&e, 0, sizeof e);
  llm_wire_error_body(gemini, strlen(gemini), &e);
  CHECK_STR(e.type, "RESOURCE_EXHAUSTED");
  const char *anthropic = "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}";
  memset(&e, 0, sizeof e);
  llm_wire_error_body(anthropic, strlen(anthropic), &e);
  CHECK_STR(e.type, "authentication_error");
  CHECK_STR(e.message, "invalid x-api-key");
  const char *html = "<html>\r\n<body>502 Bad Gateway</body></html>";
  memset(&e, 0, sizeof e);
  llm_wire_error_body(html, strlen(html), &e);
  CHECK_STR(e.type, "");
  CHECK_STR(e.message, "<html>  <body>502 Bad Gateway</body></html>");
}

static void test_wire_urls(void) {
  llm_config cfg;
  llm_config_init(&cfg);
  llm_message m = {.role = "user", .content = "hi"};
  llm_request req = {.messages = &m, .n_messages = 1};
  const llm_wire *ws[] = {&llm_openai_wire, &llm_anthropic_wire, &llm_gemini_wire, &llm_ollama_wire};
  const char *want[] = {"https://api.openai.com/v1/chat/completions", "https://api.anthropic.com/v1/messages",
                        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse",
                        "http://127.0.0.1:11434/api/chat"};
  for (int i = 0; i < 4; i++) {
    ag_buf url;
    ag_buf_init(&url, 4096);
    char *body = NULL;
    CHECK_INT(ws[i]->build(&cfg, &req, &url, &body), AG_OK);
    CHECK_STR(ag_buf_str(&url), want[i]);
    ag_buf_free(&url);
    free(body);
  }
  /* Trailing slashes on a configured base; a model name that needs escaping. */
  cfg.base_url = "http://localhost:8080/v1//";
  cfg.model = "models/my model";
  ag_buf url;
  ag_buf_init(&url, 4096);
  char *body = NULL;
  CHECK_INT(llm_gemini_wire.build(&cfg, &req, &url, &body), AG_OK);
  CHECK_STR(ag_buf_str(&url), "http://localhost:8080/v1/v1beta/models/my%20model:streamGenerateContent?alt=sse");
  ag_buf_free(&url);
  free(body);
}

static void test_wire_merges_roles(void) {
  /* Anthropic and Gemini want alternating turns: consecutive ones of a role are merged. */
  llm_config cfg;
  llm_config_init(&cfg);
  cfg.stream = 0;
  llm_message m[] = {{.role = "system", .content = "S1"}, {.role = "user", .content = "a"}, {.role = "user", .content = "b"}, {.role = "system", .content = "S2"}, {.role = "assistant", .content = "c"}};
  llm_request req = {.messages = m, .n_messages = 5};
  ag_buf url;
  ag_buf_init(&url, 4096);
  char *body = NULL;
  CHECK_INT(llm_anthropic_wire.build(&cfg, &req, &url, &body), AG_OK);
  CHECK_STR(body, "{\"model\":\"claude-3-5-haiku-latest\",\"max_tokens\":1024,\"system\":\"S1\\n\\nS2\",\"messages\":["
                  "{\"role\":\"user\",\"content\":\"a\\n\\nb\"},{\"role\":\"assistant\",\"content\":\"c\"}],\"stream\":false}");
  free(body);
  ag_buf_reset(&url);
  CHECK_INT(llm_gemini_wire.build(&cfg, &req, &url, &body), AG_OK);
  CHECK_STR(body, "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"a\"},{\"text\":\"b\"}]},{\"role\":\"model\",\"parts\":"
                  "[{\"text\":\"c\"}]}],\"systemInstruction\":{\"parts\":[{\"text\":\"S1\"},{\"text\":\"S2\"}]}}");
  free(body);
  ag_buf_free(&url);
}

SUITE_RUN((UNIT(test_sse_events), UNIT(test_ndjson_lines), UNIT(test_stream_caps),
  UNIT(test_stream_callback_error_stops), UNIT(test_retry_status), UNIT(test_retry_backoff),
  UNIT(test_retry_after_parse), UNIT(test_wire_openai), UNIT(test_wire_anthropic), UNIT(test_wire_gemini),
  UNIT(test_wire_ollama), UNIT(test_wire_trailing_junk), UNIT(test_wire_error_bodies), UNIT(test_wire_urls),
  UNIT(test_wire_merges_roles)))
