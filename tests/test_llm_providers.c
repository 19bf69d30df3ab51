/* The four HTTP providers against the loopback server, each streamed and not: replies (word
 * chunks, split and merged events), retries (429 with retry-after-ms, 500), failures that must not
 * be retried (401, reset after a chunk, malformed JSON, oversized events, mid-stream error objects),
 * timeouts on a stall, the exact request JSON and headers, and keys kept out of error messages. */
#include "support/llm_drive.h"
#include "support/llm_server.h"
#include "support/suite.h"
#include "support/unit.h"

#include <cjson/cJSON.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TEST_KEY "sk-canary-0123456789abcdefXYZ"

static llm_server *srv;

static const llm_provider_kind kinds[] = {LLM_OPENAI, LLM_ANTHROPIC, LLM_GEMINI, LLM_OLLAMA};
#define N_KINDS (sizeof kinds / sizeof *kinds)

static void config_for(llm_config *cfg, llm_provider_kind kind, int stream) {
  llm_drive_config(cfg, srv, kind, stream, 10000);
}

/* One call with the given prompt; the result is the caller's to free. */
static void run_one(const llm_config *cfg, const char *system, const char *user, llm_drive_result *r) {
  struct event_base *base = event_base_new();
  llm_client *c = NULL;
  llm_endpoint *e = NULL;
  llm_drive_result_init(r);
  CHECK_INT(llm_client_new(base, &c), AG_OK);
  CHECK_INT(llm_endpoint_new(c, cfg, &e, NULL), AG_OK);
  llm_message msgs[2] = {{.role = "system", .content = system}, {.role = "user", .content = user}};
  llm_request req = {.messages = msgs, .n_messages = 2};
  int pending = 0;
  CHECK_INT(llm_drive_start(e, &req, r, base, &pending), AG_OK);
  CHECK_INT(r->done, 0); /* never from inside start */
  CHECK_INT(llm_drive_run(base, &pending, 30000), 0);
  CHECK_INT(r->done, 1);
  CHECK_INT(llm_client_active(c), 0);
  llm_endpoint_free(e);
  llm_client_free(c);
  event_base_free(base);
}

static const char *name_of(llm_provider_kind k, int stream) {
  static char buf[64];
  snprintf(buf, sizeof buf, "%s/%s", llm_provider_name(k), stream ? "stream" : "whole");
  return buf;
}

#define EACH_CASE                                                                                        \
  for (size_t ki_ = 0; ki_ < N_KINDS; ki_++)                                                             \
    for (int stream = 0; stream < 2; stream++)                                                           \
      for (llm_provider_kind kind = kinds[ki_], once_ = 1; once_; once_ = 0)

/* One call, saying "hello", with the provider's default settings to a freshly reset loopback server. */
static void run_default(llm_provider_kind kind, int stream, const char *system, llm_drive_result *r) {
  llm_server_reset(srv);
  llm_config cfg;
  config_for(&cfg, kind, stream);
  run_one(&cfg, system, "hello", r);
}

/* Runs one call per provider and mode with directives in the system prompt. */
static void expect_ok(const char *directives, const char *reply, int requests) {
  EACH_CASE {
    char system[512];
    snprintf(system, sizeof system, "You are a test. [[mock %s]]", directives);
    llm_drive_result r;
    run_default(kind, stream, system, &r);
    if (r.err != AG_OK || !r.text || strcmp(r.text, reply) != 0)
      fprintf(stderr, "  %s: err %d text '%s' (%s)\n", name_of(kind, stream), r.err, r.text, r.info.message);
    CHECK_INT(r.err, AG_OK);
    CHECK_STR(r.text, reply);
    if (stream) {
      CHECK(r.n_chunks >= 1);
      CHECK_STR(ag_buf_str(&r.chunks), reply);
    } else {
      CHECK_INT(r.n_chunks, 0);
    }
    CHECK_INT(llm_server_request_count(srv), requests);
    llm_drive_result_free(&r);
  }
}

static void test_reply_words(void) { expect_ok("reply=\"The quick brown fox jumps.\"", "The quick brown fox jumps.", 1); }

static void test_reply_split_events(void) {
  expect_ok("reply=\"Split across many reads, byte by byte.\" chunk=5 split=16", "Split across many reads, byte by byte.", 1);
}

static void test_reply_merged_events(void) {
  expect_ok("reply=\"Several events arrive in one read.\" chunk=2 merge=1", "Several events arrive in one read.", 1);
}

static void test_reply_unicode_and_escapes(void) {
  expect_ok("reply=\"caf\xc3\xa9 \\\"quoted\\\" line\\nbreak \xe2\x9c\x93\"", "caf\xc3\xa9 \"quoted\" line\nbreak \xe2\x9c\x93", 1);
}

static void test_retry_429_then_ok(void) { expect_ok("reply=ok status=429 retry_after_ms=20 times=1", "ok", 2); }

static void test_retry_500_then_ok(void) { expect_ok("reply=ok status=500 times=2", "ok", 3); }

static void test_retry_after_seconds(void) {
  /* One case only: Retry-After is in whole seconds. */
  llm_server_reset(srv);
  llm_config cfg;
  config_for(&cfg, LLM_OPENAI, 1);
  llm_drive_result r;
  run_one(&cfg, "[[mock reply=ok status=503 retry_after=1 times=1]]", "hi", &r);
  CHECK_INT(r.err, AG_OK);
  CHECK_STR(r.text, "ok");
  CHECK_INT(llm_server_request_count(srv), 2);
  llm_drive_result_free(&r);
}

/* Runs one failing call per provider and mode; checks the error's shape. */
typedef struct fail_case {
  const char *directives;
  long timeout_ms;
  int max_retries;
  long status;          /* expected http_status */
  int attempts_stream;  /* expected attempts when streaming */
  int attempts_whole;   /* and when not */
  const char *type;     /* expected type, or NULL: not checked */
  int chunks;           /* streamed: chunks expected before the failure (-1: not checked) */
} fail_case;

static void expect_fail(const fail_case *fc) {
  EACH_CASE {
    llm_server_reset(srv);
    llm_config cfg;
    config_for(&cfg, kind, stream);
    if (fc->timeout_ms) cfg.timeout_ms = fc->timeout_ms;
    cfg.max_retries = fc->max_retries;
    char system[512];
    snprintf(system, sizeof system, "[[mock %s]]", fc->directives);
    llm_drive_result r;
    run_one(&cfg, system, "hello", &r);
    int attempts = stream ? fc->attempts_stream : fc->attempts_whole;
    if (r.err != AG_ERR_LLM || r.info.attempts != attempts || r.info.http_status != fc->status)
      fprintf(stderr, "  %s: err %d attempts %d status %ld type '%s' message '%s'\n", name_of(kind, stream), r.err,
              r.info.attempts, r.info.http_status, r.info.type, r.info.message);
    CHECK_INT(r.err, AG_ERR_LLM);
    CHECK_INT(r.info.attempts, attempts);
    CHECK_INT(r.info.http_status, fc->status);
    CHECK_INT(llm_server_request_count(srv), attempts);
    CHECK(r.info.message[0] != '\0');
    if (fc->type) CHECK_STR(r.info.type, fc->type);
    if (stream && fc->chunks >= 0) CHECK_INT(r.n_chunks, fc->chunks);
    llm_drive_result_free(&r);
  }
}

static void test_500_past_max_retries(void) {
  fail_case fc = {"status=500", 0, 2, 500, 3, 3, NULL, 0};
  expect_fail(&fc);
}

static void test_401_not_retried(void) {
  fail_case fc = {"status=401", 0, 3, 401, 1, 1, NULL, 0};
  expect_fail(&fc);
}

static void test_400_not_retried(void) {
  fail_case fc = {"status=400", 0, 3, 400, 1, 1, NULL, 0};
  expect_fail(&fc);
}

static void test_quota_429_not_retried(void) {
  llm_server_reset(srv);
  llm_config cfg;
  config_for(&cfg, LLM_OPENAI, 1);
  llm_drive_result r;
  run_one(&cfg, "[[mock status=429 error_type=insufficient_quota error_message=\"You exceeded your current quota\"]]",
          "hi", &r);
  CHECK_INT(r.err, AG_ERR_LLM);
  CHECK_INT(r.info.attempts, 1);
  CHECK_INT(r.info.http_status, 429);
  CHECK_STR(r.info.type, "insufficient_quota");
  CHECK(strstr(r.info.message, "exceeded your current quota") != NULL);
  llm_drive_result_free(&r);
}

static void test_stall_times_out(void) {
  /* Streamed: one chunk, then silence; whole: headers, then silence. */
  fail_case fc = {"reply=\"one two three\" stall=1", 400, 2, 200, 1, 1, "timeout", 1};
  expect_fail(&fc);
}

static void test_reset_after_chunk(void) {
  /* Streamed: a chunk was delivered, so no retry. Whole: nothing was delivered, so it is retried. */
  fail_case fc = {"reply=\"one two three\" reset=1", 0, 1, 200, 1, 2, "connection", 1};
  expect_fail(&fc);
}

static void test_malformed_json(void) {
  fail_case fc = {"reply=\"one two\" malformed=1", 0, 2, 200, 1, 1, "malformed", 1};
  expect_fail(&fc);
}

/* A 200 whose body is no reply (a proxy's HTML page, garbage, nothing) is a malformed reply for
 * every provider and mode, never an empty success (issue 17, defect 10: Gemini took it for one). */
static void test_bad_200_body(void) {
  static const char *const kinds_of_body[] = {"body=html", "body=garbage", "body=empty"};
  for (size_t i = 0; i < sizeof kinds_of_body / sizeof *kinds_of_body; i++) {
    fail_case fc = {kinds_of_body[i], 0, 0, 200, 1, 1, "malformed", 0};
    expect_fail(&fc);
  }
}

static void test_oversized_event(void) {
  /* Streamed: one event past 1 MiB; whole: a reply past 4 MiB. */
  fail_case fc = {"reply=\"one two\" oversize=5000000", 0, 2, 200, 1, 1, "too_big", 1};
  expect_fail(&fc);
}

static void test_midstream_error_object(void) {
  /* overloaded_error is transient: whole replies retry it (nothing delivered yet), streams that
   * delivered a chunk do not. Ollama's errors carry no type, so they are not retried. */
  EACH_CASE {
    llm_server_reset(srv);
    llm_config cfg;
    config_for(&cfg, kind, stream);
    cfg.max_retries = 1;
    llm_drive_result r;
    run_one(&cfg, "[[mock reply=\"one two\" midstream_error=overloaded_error]]", "hello", &r);
    int attempts = stream || kind == LLM_OLLAMA ? 1 : 2;
    CHECK_INT(r.err, AG_ERR_LLM);
    CHECK_INT(r.info.attempts, attempts);
    CHECK_INT(r.info.http_status, 200);
    CHECK(strstr(r.info.message, "mock error") != NULL);
    if (kind != LLM_OLLAMA) CHECK_STR(r.info.type, "overloaded_error");
    if (stream) {
      CHECK_INT(r.n_chunks, 1);
      CHECK_STR(ag_buf_str(&r.chunks), "one ");
    }
    llm_drive_result_free(&r);
  }
}

static void test_connection_refused(void) {
  llm_config cfg;
  config_for(&cfg, LLM_OPENAI, 1);
  cfg.base_url = "http://127.0.0.1:1/v1"; /* nothing listens on port 1 */
  cfg.max_retries = 2;
  llm_drive_result r;
  run_one(&cfg, "s", "u", &r);
  CHECK_INT(r.err, AG_ERR_LLM);
  CHECK_INT(r.info.attempts, 3);
  CHECK_INT(r.info.http_status, 0);
  CHECK_STR(r.info.type, "connection");
  llm_drive_result_free(&r);
}

static void test_connect_timeout(void) {
  /* A listener that never accepts, its queue filled: the client's handshake gets no answer. */
  int lfd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sin;
  memset(&sin, 0, sizeof sin);
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t sl = sizeof sin;
  CHECK_INT(bind(lfd, (struct sockaddr *)&sin, sizeof sin), 0);
  CHECK_INT(listen(lfd, 0), 0);
  getsockname(lfd, (struct sockaddr *)&sin, &sl);
  int fillers[4];
  for (int i = 0; i < 4; i++) {
    fillers[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    connect(fillers[i], (struct sockaddr *)&sin, sizeof sin);
  }
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", ntohs(sin.sin_port));
  llm_config cfg;
  config_for(&cfg, LLM_OPENAI, 1);
  cfg.base_url = url;
  cfg.timeout_ms = 600;
  llm_drive_result r;
  run_one(&cfg, "s", "u", &r);
  CHECK_INT(r.err, AG_ERR_LLM);
  CHECK_INT(r.info.http_status, 0);
  CHECK_STR(r.info.type, "timeout");
  llm_drive_result_free(&r);
  for (int i = 0; i < 4; i++) close(fillers[i]);
  close(lfd);
}

static void test_usage_reported(void) {
  EACH_CASE {
    llm_drive_result r;
    run_default(kind, stream, "[[mock reply=\"a b c\"]]", &r);
    CHECK_INT(r.err, AG_OK);
    CHECK(r.usage.input_tokens > 0);
    CHECK(r.usage.output_tokens > 0);
    llm_drive_result_free(&r);
  }
}

static void test_tool_call_reply_is_not_text(void) {
  EACH_CASE {
    llm_drive_result r;
    run_default(kind, stream, "[[mock tool=get_weather args={\"city\":\"Paris\"}]]", &r);
    CHECK_INT(r.err, AG_OK);
    CHECK_STR(r.text, "");
    llm_drive_result_free(&r);
  }
}

/* ---- the request on the wire ---- */

static void expect_request(llm_provider_kind kind, int stream, const llm_config *cfg_in, const char *path,
                           const char *json, const char *const *headers) {
  llm_server_reset(srv);
  llm_config cfg = *cfg_in;
  (void)kind;
  (void)stream;
  struct event_base *base = event_base_new();
  llm_client *c = NULL;
  llm_endpoint *e = NULL;
  CHECK_INT(llm_client_new(base, &c), AG_OK);
  CHECK_INT(llm_endpoint_new(c, &cfg, &e, NULL), AG_OK);
  llm_message msgs[4] = {{.role = "system", .content = "You are terse."}, {.role = "user", .content = "Hello"}, {.role = "assistant", .content = "Hi!"}, {.role = "user", .content = "Bye"}};
  llm_request req = {.messages = msgs, .n_messages = 4};
  llm_drive_result r;
  llm_drive_result_init(&r);
  int pending = 0;
  CHECK_INT(llm_drive_start(e, &req, &r, base, &pending), AG_OK);
  CHECK_INT(llm_drive_run(base, &pending, 10000), 0);
  CHECK_INT(r.err, AG_OK);
  llm_server_request q;
  CHECK_INT(llm_server_request_get(srv, 0, &q), 0);
  CHECK_STR(q.method, "POST");
  CHECK_STR(q.path, path);
  cJSON *got = cJSON_Parse(q.body), *want = cJSON_Parse(json);
  CHECK(want != NULL);
  if (!cJSON_Compare(got, want, 1)) {
    fprintf(stderr, "  body sent: %s\n  expected:  %s\n", q.body, json);
    CHECK(0);
  }
  cJSON_Delete(got);
  cJSON_Delete(want);
  for (size_t i = 0; headers[i]; i += 2) {
    char *v = llm_server_request_header(&q, headers[i]);
    if (headers[i + 1]) CHECK_STR(v, headers[i + 1]);
    else CHECK(v == NULL);
    free(v);
  }
  llm_server_request_free(&q);
  llm_drive_result_free(&r);
  llm_endpoint_free(e);
  llm_client_free(c);
  event_base_free(base);
}

static void full_config(llm_config *cfg, llm_provider_kind kind, int stream) {
  config_for(cfg, kind, stream);
  cfg->temperature = 0.5;
  cfg->has_temperature = 1;
  cfg->max_tokens = 100;
}

static void test_request_openai(void) {
  const char *h[] = {"authorization", "Bearer " TEST_KEY, "content-type", "application/json", NULL};
  llm_config cfg;
  for (int stream = 0; stream < 2; stream++) {
    full_config(&cfg, LLM_OPENAI, stream);
    char json[1024];
    snprintf(json, sizeof json,
             "{\"model\":\"test-model\",\"messages\":[{\"role\":\"system\",\"content\":\"You are terse.\"},"
             "{\"role\":\"user\",\"content\":\"Hello\"},{\"role\":\"assistant\",\"content\":\"Hi!\"},"
             "{\"role\":\"user\",\"content\":\"Bye\"}],\"temperature\":0.5,\"max_tokens\":100,\"stream\":%s%s}",
             stream ? "true" : "false", stream ? ",\"stream_options\":{\"include_usage\":true}" : "");
    expect_request(LLM_OPENAI, stream, &cfg, "/v1/chat/completions", json, h);
  }
}

static void test_request_anthropic(void) {
  const char *h[] = {"x-api-key", TEST_KEY, "anthropic-version", "2023-06-01", "authorization", NULL, NULL};
  llm_config cfg;
  for (int stream = 0; stream < 2; stream++) {
    full_config(&cfg, LLM_ANTHROPIC, stream);
    char json[1024];
    snprintf(json, sizeof json,
             "{\"model\":\"test-model\",\"max_tokens\":100,\"system\":\"You are terse.\",\"messages\":["
             "{\"role\":\"user\",\"content\":\"Hello\"},{\"role\":\"assistant\",\"content\":\"Hi!\"},"
             "{\"role\":\"user\",\"content\":\"Bye\"}],\"temperature\":0.5,\"stream\":%s}",
             stream ? "true" : "false");
    expect_request(LLM_ANTHROPIC, stream, &cfg, "/v1/messages", json, h);
  }
  /* max_tokens is required by the API: 1024 when the config has none; no temperature unless set. */
  config_for(&cfg, LLM_ANTHROPIC, 1);
  expect_request(LLM_ANTHROPIC, 1, &cfg, "/v1/messages",
                 "{\"model\":\"test-model\",\"max_tokens\":1024,\"system\":\"You are terse.\",\"messages\":["
                 "{\"role\":\"user\",\"content\":\"Hello\"},{\"role\":\"assistant\",\"content\":\"Hi!\"},"
                 "{\"role\":\"user\",\"content\":\"Bye\"}],\"stream\":true}",
                 h);
}

static void test_request_gemini(void) {
  const char *h[] = {"x-goog-api-key", TEST_KEY, "authorization", NULL, NULL};
  const char *json =
      "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Hello\"}]},{\"role\":\"model\",\"parts\":[{\"text\":"
      "\"Hi!\"}]},{\"role\":\"user\",\"parts\":[{\"text\":\"Bye\"}]}],\"systemInstruction\":{\"parts\":[{\"text\":"
      "\"You are terse.\"}]},\"generationConfig\":{\"temperature\":0.5,\"maxOutputTokens\":100}}";
  llm_config cfg;
  full_config(&cfg, LLM_GEMINI, 1);
  expect_request(LLM_GEMINI, 1, &cfg, "/v1beta/models/test-model:streamGenerateContent?alt=sse", json, h);
  full_config(&cfg, LLM_GEMINI, 0);
  expect_request(LLM_GEMINI, 0, &cfg, "/v1beta/models/test-model:generateContent", json, h);
}

static void test_request_ollama(void) {
  const char *h[] = {"authorization", NULL, "content-type", "application/json", NULL};
  llm_config cfg;
  for (int stream = 0; stream < 2; stream++) {
    full_config(&cfg, LLM_OLLAMA, stream);
    cfg.api_key_env = NULL; /* Ollama needs no key, and none is sent */
    char json[1024];
    snprintf(json, sizeof json,
             "{\"model\":\"test-model\",\"messages\":[{\"role\":\"system\",\"content\":\"You are terse.\"},"
             "{\"role\":\"user\",\"content\":\"Hello\"},{\"role\":\"assistant\",\"content\":\"Hi!\"},"
             "{\"role\":\"user\",\"content\":\"Bye\"}],\"stream\":%s,\"options\":{\"temperature\":0.5,"
             "\"num_predict\":100}}",
             stream ? "true" : "false");
    expect_request(LLM_OLLAMA, stream, &cfg, "/api/chat", json, h);
  }
}

/* ---- keys ---- */

static void test_missing_key(void) {
  EACH_CASE {
    if (kind == LLM_OLLAMA) continue;
    llm_server_reset(srv);
    llm_config cfg;
    config_for(&cfg, kind, stream);
    cfg.api_key_env = "AGORA_TEST_NO_SUCH_KEY";
    llm_drive_result r;
    run_one(&cfg, "s", "u", &r);
    CHECK_INT(r.err, AG_ERR_LLM);
    CHECK_INT(r.info.attempts, 0);
    CHECK(strstr(r.info.message, "AGORA_TEST_NO_SUCH_KEY") != NULL);
    CHECK_INT(llm_server_request_count(srv), 0);
    llm_drive_result_free(&r);
  }
}

static void test_key_never_in_errors(void) {
  /* The server quotes the key it received in its 401 message, as OpenAI does (masked, partly). */
  const char *prefix = "sk-canar";
  EACH_CASE {
    llm_server_reset(srv);
    llm_config cfg;
    config_for(&cfg, kind, stream);
    if (kind == LLM_OLLAMA) cfg.api_key_env = "AGORA_TEST_KEY"; /* sent as a Bearer token when named */
    llm_drive_result r;
    run_one(&cfg, "[[mock status=401]]", "u", &r);
    CHECK_INT(r.err, AG_ERR_LLM);
    CHECK_INT(r.info.http_status, 401);
    CHECK(strstr(r.info.message, TEST_KEY) == NULL);
    CHECK(strstr(r.info.message, prefix) == NULL);
    CHECK(strstr(r.info.type, prefix) == NULL);
    llm_drive_result_free(&r);
  }
  /* A masked echo ("sk-canar****wxyz") is caught too. */
  llm_server_reset(srv);
  llm_config cfg;
  config_for(&cfg, LLM_OPENAI, 1);
  llm_drive_result r;
  run_one(&cfg, "[[mock status=401 error_message=\"Incorrect API key provided: sk-canar********XYZ. See docs.\"]]", "u",
          &r);
  CHECK(strstr(r.info.message, prefix) == NULL);
  CHECK(strstr(r.info.message, "See docs.") != NULL);
  llm_drive_result_free(&r);
}

static const unit_test tests[] = {
    UNIT(test_reply_words),
    UNIT(test_reply_split_events),
    UNIT(test_reply_merged_events),
    UNIT(test_reply_unicode_and_escapes),
    UNIT(test_retry_429_then_ok),
    UNIT(test_retry_500_then_ok),
    UNIT(test_retry_after_seconds),
    UNIT(test_500_past_max_retries),
    UNIT(test_401_not_retried),
    UNIT(test_400_not_retried),
    UNIT(test_quota_429_not_retried),
    UNIT(test_stall_times_out),
    UNIT(test_reset_after_chunk),
    UNIT(test_malformed_json),
    UNIT(test_bad_200_body),
    UNIT(test_oversized_event),
    UNIT(test_midstream_error_object),
    UNIT(test_connection_refused),
    UNIT(test_connect_timeout),
    UNIT(test_usage_reported),
    UNIT(test_tool_call_reply_is_not_text),
    UNIT(test_request_openai),
    UNIT(test_request_anthropic),
    UNIT(test_request_gemini),
    UNIT(test_request_ollama),
    UNIT(test_missing_key),
    UNIT(test_key_never_in_errors),
};

int main(int argc, char **argv) {
  /* retries without the real 250 ms backoff */
  static const char *const env[] = {"AGORA_TEST_KEY=" TEST_KEY, "AGORA_LLM_BACKOFF_MS=5", "AGORA_TEST_NO_SUCH_KEY", NULL};
  return suite_main(argc, argv, &(suite){SUITE_TESTS(tests), .env = env, .srv = &srv});
}
