/* The MCP Streamable HTTP transport (mcp/http.c), driven with hand-written JSON-RPC: against the real
 * @modelcontextprotocol/server-everything in streamableHttp mode (from AGORA_PEERS: handshake, session
 * and protocol version kept, tools/list, echo, add, structured content, error results, progress over
 * SSE, the GET stream, 40 calls in flight, DELETE at close), and against a loopback server that
 * misbehaves (tests/support/mcp_fault.c): a stream that never ends, garbage, HTTP 500, session expiry
 * (404), a dropped SSE stream resumed with Last-Event-ID after the server's retry, no server at all. */
#include "support/mcp_drive.h"
#include "support/mcp_fault.h"
#include "support/suite.h"
#include "support/tls_front.h"
#include "support/unit.h"

#include "net/net_fetch.h"
#include "mcp/http_msg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mcp_everything everything;
static mcp_fault *fault;

static void open_url(mcp_drive *d, const char *url, long timeout_ms) {
  mcp_http_header auth = {"Authorization", "Bearer test-token-123"};
  mcp_http_options opt = {.url = url, .headers = &auth, .n_headers = 1, .timeout_ms = timeout_ms};
  CHECK_INT(mcp_drive_open(d, &opt), AG_OK);
}

static void call_tool(mcp_drive *d, long id, const char *name, const char *args) {
  CHECK_INT(mcp_drive_send(d, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":"
                              "{\"name\":\"%s\",\"arguments\":%s}}", id, name, args), AG_OK);
}

static int get_stream_open(mcp_drive *d, void *arg) {
  (void)arg;
  return d->t && mcp_http_get_stream(d->t) == 1;
}

static void test_everything_session(void) {
  mcp_drive d;
  open_url(&d, everything.url, 20000);
  CHECK_INT(mcp_drive_handshake(&d, 20000), AG_OK);
  CHECK(mcp_http_session(d.t)[0] != '\0');
  CHECK_STR(mcp_http_protocol_version(d.t), "2025-06-18");
  CHECK_INT(mcp_drive_send(&d, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}"), AG_OK);
  const char *a = mcp_drive_answer(&d, 2, 10000);
  CHECK(a && strstr(a, "\"name\":\"echo\"") && strstr(a, "\"name\":\"trigger-long-running-operation\""));
  call_tool(&d, 3, "echo", "{\"message\":\"hello over http\"}");
  a = mcp_drive_answer(&d, 3, 10000);
  CHECK(a && strstr(a, "Echo: hello over http"));
  call_tool(&d, 4, "get-sum", "{\"a\":2,\"b\":40}");
  a = mcp_drive_answer(&d, 4, 10000);
  CHECK(a && strstr(a, "42"));
  call_tool(&d, 5, "get-structured-content", "{\"location\":\"Chicago\"}");
  a = mcp_drive_answer(&d, 5, 10000);
  CHECK(a && strstr(a, "\"structuredContent\":{") && strstr(a, "\"temperature\""));
  call_tool(&d, 6, "no-such-tool", "{}");
  a = mcp_drive_answer(&d, 6, 10000);
  CHECK(a && (strstr(a, "\"isError\":true") || strstr(a, "\"error\":{")));
  CHECK(a && strstr(a, "no-such-tool"));
  call_tool(&d, 7, "get-sum", "{\"a\":\"not a number\"}");
  a = mcp_drive_answer(&d, 7, 10000);
  CHECK(a && (strstr(a, "\"isError\":true") || strstr(a, "\"error\":{")));
  char session[256];
  snprintf(session, sizeof session, "%s", mcp_http_session(d.t));
  CHECK(!d.closed);
  mcp_drive_close(&d);
  /* close DELETEd the session: the server says so in its log. */
  char *log = unit_read_file(everything.log);
  char want[400];
  snprintf(want, sizeof want, "session termination request for session %s", session);
  CHECK(log && strstr(log, want));
  free(log);
}

static int server_log_message(mcp_drive *d, void *arg) {
  (void)arg;
  return mcp_drive_count_method(d, "notifications/message") > 0;
}

/* The server's own messages (simulated logging, not tied to a request) come over the GET stream. */
static void test_everything_get_stream(void) {
  mcp_drive d;
  open_url(&d, everything.url, 20000);
  CHECK_INT(mcp_drive_handshake(&d, 20000), AG_OK);
  CHECK_INT(mcp_drive_send(&d, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"logging/setLevel\",\"params\":"
                               "{\"level\":\"debug\"}}"), AG_OK);
  CHECK(mcp_drive_answer(&d, 2, 10000) != NULL);
  mcp_drive_run(&d, 300, NULL, NULL); /* the GET stream is on its way */
  call_tool(&d, 3, "toggle-simulated-logging", "{}");
  CHECK(mcp_drive_answer(&d, 3, 10000) != NULL);
  CHECK(mcp_drive_run(&d, 8000, server_log_message, NULL));
  CHECK(mcp_drive_run(&d, 100, get_stream_open, NULL));
  call_tool(&d, 4, "toggle-simulated-logging", "{}"); /* off again */
  CHECK(mcp_drive_answer(&d, 4, 10000) != NULL);
  mcp_drive_close(&d);
}

/* Progress notifications arrive over the call's SSE stream, before its answer. */
static void test_everything_progress(void) {
  mcp_drive d;
  open_url(&d, everything.url, 20000);
  CHECK_INT(mcp_drive_handshake(&d, 20000), AG_OK);
  CHECK_INT(mcp_drive_send(&d, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":"
                               "\"trigger-long-running-operation\",\"arguments\":{\"duration\":0.6,\"steps\":3},"
                               "\"_meta\":{\"progressToken\":\"tok-9\"}}}"), AG_OK);
  const char *a = mcp_drive_answer(&d, 9, 15000);
  CHECK(a && strstr(a, "Long running operation completed"));
  size_t progress = 0, answer_at = 0;
  for (size_t i = 0; i < d.n_msgs; i++) {
    if (strstr(d.msgs[i], "notifications/progress") && strstr(d.msgs[i], "tok-9")) progress++;
    if (d.msgs[i] == a) answer_at = progress;
  }
  CHECK_INT(progress, 3);
  CHECK_INT(answer_at, 3); /* all three came before the answer */
  mcp_drive_close(&d);
}

typedef struct many {
  long first, n;
} many;

static int all_answered(mcp_drive *d, void *arg) {
  many *m = arg;
  size_t n = 0;
  for (size_t i = 0; i < d->n_msgs; i++) n += strstr(d->msgs[i], "Echo: call ") != NULL;
  return (long)n == m->n;
}

/* Many calls in flight on one session, each answered with its own text. */
static void test_everything_concurrent(void) {
  mcp_drive d;
  open_url(&d, everything.url, 20000);
  CHECK_INT(mcp_drive_handshake(&d, 20000), AG_OK);
  many m = {100, 40};
  for (long i = 0; i < m.n; i++) {
    char args[64];
    snprintf(args, sizeof args, "{\"message\":\"call %ld\"}", m.first + i);
    call_tool(&d, m.first + i, "echo", args);
  }
  CHECK(mcp_drive_run(&d, 20000, all_answered, &m));
  for (long i = 0; i < m.n; i++) {
    const char *a = mcp_drive_answer(&d, m.first + i, 0);
    char want[64];
    snprintf(want, sizeof want, "Echo: call %ld\"", m.first + i);
    CHECK(a && strstr(a, want));
  }
  mcp_drive_close(&d);
}

/* The client closes the transport from inside on_message, in the middle of a progress stream: no
 * message after it, nothing leaked (ASan). */
static void test_everything_close_in_message(void) {
  mcp_drive d;
  open_url(&d, everything.url, 20000);
  CHECK_INT(mcp_drive_handshake(&d, 20000), AG_OK);
  size_t before = d.n_msgs;
  d.close_in_message = 1;
  CHECK_INT(mcp_drive_send(&d, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":"
                               "\"trigger-long-running-operation\",\"arguments\":{\"duration\":0.4,\"steps\":4},"
                               "\"_meta\":{\"progressToken\":11}}}"), AG_OK);
  mcp_drive_run(&d, 1500, NULL, NULL);
  CHECK(d.t == NULL);
  CHECK_INT(d.n_msgs, before + 1);
  mcp_drive_close(&d);
}

/* An error answer made up by the transport, naming why. */
static void check_transport_error(const char *a, const char *why) {
  CHECK(a && strstr(a, "\"code\":-32000") && strstr(a, "HTTP transport: "));
  CHECK(a && strstr(a, why));
  if (!a || !strstr(a, why)) fprintf(stderr, "  answer: %s\n", a ? a : "(none)");
}

/* A hosted server over HTTPS + HTTP/2 (nghttpx in front of server-everything), verified with the CA of
 * the server's config, like a hosted LLM; with another CA every request fails with a TLS error answer. */
static void test_everything_https(void) {
  tls_front *front = NULL;
  if (tls_front_start(everything.port, 0, &front) != 0) {
    CHECK(!"nghttpx and openssl are needed (README packages)");
    return;
  }
  net_opts net = {.ca_file = (char *)tls_front_ca(front)};
  mcp_http_options opt = {.url = tls_front_url(front, "/mcp"), .timeout_ms = 20000, .net = &net};
  mcp_drive d;
  CHECK_INT(mcp_drive_open(&d, &opt), AG_OK);
  CHECK_INT(mcp_drive_handshake(&d, 20000), AG_OK);
  CHECK(mcp_http_session(d.t)[0] != '\0');
  CHECK_INT(mcp_drive_send(&d, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":"
                               "\"trigger-long-running-operation\",\"arguments\":{\"duration\":0.3,\"steps\":2},"
                               "\"_meta\":{\"progressToken\":5}}}"), AG_OK);
  const char *a = mcp_drive_answer(&d, 5, 15000);
  CHECK(a && strstr(a, "Long running operation completed"));
  CHECK_INT(mcp_drive_count_method(&d, "notifications/progress"), 2);
  mcp_drive_close(&d);
  tls_front_stats st;
  CHECK_INT(tls_front_read_stats(front, 4, &st), 0);
  CHECK(st.h2 >= 4); /* initialize, initialized, the call, the DELETE (and the GET stream) over HTTP/2 */

  net.ca_file = (char *)tls_front_other_ca(front);
  CHECK_INT(mcp_drive_open(&d, &opt), AG_OK);
  CHECK_INT(mcp_drive_send(&d, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}"), AG_OK);
  a = mcp_drive_answer(&d, 1, 10000);
  check_transport_error(a, "certificate");
  mcp_drive_close(&d);
  tls_front_stop(front);
}

/* 404 to a request carrying the session: on_closed("session expired"), no answer, no DELETE; a new
 * transport initializes again. */
static void test_fault_session_expired(void) {
  mcp_fault_mode_set(fault, MF_EXPIRE);
  mcp_drive d;
  open_url(&d, mcp_fault_url(fault), 5000);
  CHECK_INT(mcp_drive_handshake(&d, 5000), AG_OK);
  CHECK_STR(mcp_http_session(d.t), "fault-session-1");
  CHECK_INT(mcp_drive_send(&d, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}"), AG_OK);
  CHECK(mcp_drive_answer(&d, 2, 3000) == NULL);
  CHECK(d.closed);
  CHECK_STR(d.why, MCP_HTTP_SESSION_EXPIRED);
  CHECK_INT(mcp_drive_send(&d, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}"), AG_ERR_STATE);
  size_t n = mcp_fault_count(fault);
  mcp_fault_req r;
  int seen = 0;
  for (size_t i = 0; i < n && mcp_fault_request(fault, i, &r) == 0; i++) {
    if (strcmp(r.rpc_method, "initialize") == 0) CHECK_STR(r.session, "");
    if (strcmp(r.rpc_method, "tools/list") != 0) continue;
    seen = 1;
    CHECK_STR(r.session, "fault-session-1");
    CHECK_STR(r.protocol_version, "2025-06-18");
    CHECK_STR(r.accept, "application/json, text/event-stream");
    CHECK_STR(r.authorization, "Bearer test-token-123");
  }
  CHECK(seen);
  mcp_drive_close(&d);
  CHECK_INT(mcp_fault_count_method(fault, "DELETE"), 0);
  open_url(&d, mcp_fault_url(fault), 5000); /* the client's re-initialize */
  CHECK_INT(mcp_drive_handshake(&d, 5000), AG_OK);
  CHECK_STR(mcp_http_session(d.t), "fault-session-1");
  mcp_drive_close(&d);
  CHECK_INT(mcp_fault_count_method(fault, "DELETE"), 1);
}

static double elapsed_since(double t0) { return mcp_fault_now_ms() - t0; }

static void test_fault_stream_never_ends(void) {
  mcp_fault_mode_set(fault, MF_STALL);
  mcp_drive d;
  open_url(&d, mcp_fault_url(fault), 300);
  CHECK_INT(mcp_drive_handshake(&d, 5000), AG_OK);
  double t0 = mcp_fault_now_ms();
  call_tool(&d, 2, "slow", "{}");
  const char *a = mcp_drive_answer(&d, 2, 5000);
  check_transport_error(a, "no answer within 300 ms");
  CHECK(elapsed_since(t0) >= 250 && elapsed_since(t0) < 3000);
  CHECK(!d.closed);
  /* A call still hanging when the client closes: no callback afterwards. */
  call_tool(&d, 3, "slow", "{}");
  mcp_drive_run(&d, 50, NULL, NULL);
  size_t n = d.n_msgs;
  d.t->ops->close(d.t);
  d.t = NULL;
  mcp_drive_run(&d, 400, NULL, NULL);
  CHECK_INT(d.n_msgs, n);
  mcp_drive_close(&d);
}

static void test_fault_garbage(void) {
  mcp_drive d;
  mcp_fault_mode_set(fault, MF_GARBAGE);
  open_url(&d, mcp_fault_url(fault), 5000);
  CHECK_INT(mcp_drive_handshake(&d, 5000), AG_OK);
  call_tool(&d, 2, "x", "{}");
  check_transport_error(mcp_drive_answer(&d, 2, 5000), "a response that is not JSON-RPC");
  mcp_fault_mode_set(fault, MF_SSE_GARBAGE);
  call_tool(&d, 3, "x", "{}");
  check_transport_error(mcp_drive_answer(&d, 3, 5000), "an event that is not JSON-RPC");
  mcp_fault_mode_set(fault, MF_STATUS500);
  call_tool(&d, 4, "x", "{}");
  check_transport_error(mcp_drive_answer(&d, 4, 5000), "HTTP 500 from http://127.0.0.1:");
  /* The transport goes on. */
  mcp_fault_mode_set(fault, MF_ANSWER);
  call_tool(&d, 5, "x", "{}");
  const char *a = mcp_drive_answer(&d, 5, 5000);
  CHECK(a && strstr(a, "\"ok\":true"));
  CHECK(!d.closed);
  mcp_drive_close(&d);
}

/* The call's stream is reset after an event with id ev-1 and retry 60: the transport GETs with
 * Last-Event-ID: ev-1 (and the session) after at least 60 ms and gets the answer there. */
static void test_fault_dropped_stream_resumed(void) {
  mcp_fault_mode_set(fault, MF_DROP);
  mcp_drive d;
  open_url(&d, mcp_fault_url(fault), 5000);
  CHECK_INT(mcp_drive_handshake(&d, 5000), AG_OK);
  call_tool(&d, 2, "long", "{}");
  const char *a = mcp_drive_answer(&d, 2, 5000);
  CHECK(a && strstr(a, "resumed"));
  CHECK_INT(mcp_drive_count_method(&d, "notifications/progress"), 1);
  mcp_fault_req r, post = {0};
  int resumed = 0;
  for (size_t i = 0; mcp_fault_request(fault, i, &r) == 0; i++) {
    if (strcmp(r.rpc_method, "tools/call") == 0) post = r;
    if (strcmp(r.method, "GET") != 0 || !r.last_event_id[0]) continue;
    resumed++;
    CHECK_STR(r.last_event_id, "ev-1");
    CHECK_STR(r.session, "fault-session-1");
    CHECK_STR(r.accept, "text/event-stream");
    CHECK(r.at_ms - post.at_ms >= 55);
  }
  CHECK_INT(resumed, 1);
  mcp_drive_close(&d);
}

static int two_server_messages(mcp_drive *d, void *arg) {
  (void)arg;
  return mcp_drive_count_method(d, "notifications/message") >= 2;
}

/* The GET stream carries the server's own messages; when it ends it is reopened after the server's
 * retry with Last-Event-ID. A server without one (405) is not asked again. */
static void test_fault_get_stream(void) {
  mcp_fault_mode_set(fault, MF_GET_STREAM);
  mcp_drive d;
  open_url(&d, mcp_fault_url(fault), 5000);
  CHECK_INT(mcp_drive_handshake(&d, 5000), AG_OK);
  CHECK(mcp_drive_run(&d, 5000, two_server_messages, NULL));
  mcp_fault_req r;
  int second = 0;
  for (size_t i = 0; mcp_fault_request(fault, i, &r) == 0; i++)
    if (strcmp(r.method, "GET") == 0 && strcmp(r.last_event_id, "g-1") == 0) second = 1;
  CHECK(second);
  mcp_drive_close(&d);

  mcp_fault_mode_set(fault, MF_ANSWER);
  open_url(&d, mcp_fault_url(fault), 5000);
  CHECK_INT(mcp_drive_handshake(&d, 5000), AG_OK);
  call_tool(&d, 2, "x", "{}");
  CHECK(mcp_drive_answer(&d, 2, 5000) != NULL);
  mcp_drive_run(&d, 200, NULL, NULL);
  CHECK_INT(mcp_http_get_stream(d.t), -1);
  CHECK_INT(mcp_fault_count_method(fault, "GET"), 1);
  mcp_drive_close(&d);
}

/* Nobody listening: the request gets an error answer naming the server's origin (never the path or
 * query, which may hold a token); the transport stays. */
static void test_unreachable(void) {
  mcp_drive d;
  mcp_fault *gone = NULL;
  CHECK_INT(mcp_fault_start(&gone), 0);
  char url[128], origin[64];
  snprintf(origin, sizeof origin, "%s", mcp_fault_url(gone));
  snprintf(url, sizeof url, "http://user:pw-secret@%s?key=query-secret", origin + 7);
  *strrchr(origin, '/') = '\0';
  mcp_fault_stop(gone);
  open_url(&d, url, 5000);
  CHECK_INT(mcp_drive_send(&d, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}"), AG_OK);
  const char *a = mcp_drive_answer(&d, 1, 5000);
  check_transport_error(a, origin);
  CHECK(a && !strstr(a, "secret") && !strstr(a, "/mcp"));
  CHECK(!d.closed);
  mcp_drive_close(&d);
}

static void test_open_rejects(void) {
  mcp_drive d;
  mcp_http_options opt = {.url = "ftp://127.0.0.1/mcp"};
  CHECK_INT(mcp_drive_open(&d, &opt), AG_ERR_INVALID);
  mcp_drive_close(&d);
  mcp_http_header bad[] = {{"X-Ok", "fine"}, {"X-Bad", "a\r\nInjected: yes"}};
  opt = (mcp_http_options){.url = "http://127.0.0.1:1/mcp", .headers = bad, .n_headers = 2};
  CHECK_INT(mcp_drive_open(&d, &opt), AG_ERR_INVALID);
  mcp_drive_close(&d);
  mcp_http_header bad_name[] = {{"X:Bad", "v"}};
  opt.headers = bad_name;
  opt.n_headers = 1;
  CHECK_INT(mcp_drive_open(&d, &opt), AG_ERR_INVALID);
  mcp_drive_close(&d);
  opt.n_headers = 0;
  CHECK_INT(mcp_drive_open(&d, &opt), AG_OK);
  CHECK_INT(d.t->ops->send(d.t, "not json", 8), AG_ERR_INVALID);
  mcp_drive_close(&d);
}

/* The pure half: batches split in order, ids and versions read, made-up answers well formed. */
static int collect(void *ud, const char *json, size_t len, const mcp_http_peek *pk) {
  char *log = ud;
  (void)len;
  strcat(log, pk->id[0] ? pk->id : "-");
  strcat(log, pk->is_response ? "R" : pk->is_request ? "Q" : "N");
  strcat(log, json[0] == '{' ? ";" : "?");
  return 0;
}

static void test_split_and_peek(void) {
  char log[256] = "";
  const char *batch = " [{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}},{\"jsonrpc\":\"2.0\",\"method\":\"n\"},"
                      "{\"id\":\"a\",\"method\":\"ping\"}] ";
  CHECK_INT(mcp_http_split(batch, strlen(batch), collect, log), AG_OK);
  CHECK_STR(log, "1R;-N;\"a\"Q;");
  log[0] = '\0';
  CHECK_INT(mcp_http_split("[1,{}]", 6, collect, log), AG_ERR_INVALID);
  CHECK_STR(log, "");
  CHECK_INT(mcp_http_split("<html>", 6, collect, log), AG_ERR_INVALID);
  mcp_http_peek pk;
  const char *init = "{\"id\":7,\"result\":{\"protocolVersion\":\"2025-03-26\"}}";
  CHECK_INT(mcp_http_peek_text(init, strlen(init), &pk), AG_OK);
  CHECK_STR(pk.id, "7");
  CHECK_STR(pk.protocol_version, "2025-03-26");
  char *e = mcp_http_error_answer("\"x\"", "why \"quoted\"");
  CHECK_STR(e, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"error\":{\"code\":-32000,\"message\":\"why \\\"quoted\\\"\"}}");
  free(e);
}

/* Ids an answer must echo exactly (fuzz/corpus/mcp_http/regress-id-minus-1e999: -1e999 is -Infinity,
 * which cJSON prints as null, so the made-up answer's id read back as none). A numeric id is a whole
 * number within +-(2^53-1), handed on as its exact integer; any other is refused with the whole body. */
static void test_ids_echoed_exactly_or_refused(void) {
  char log[256] = "";
  const char *big = "{\"jsonrpc\":\"2.0\",\"id\":9000000001999981,\"method\":\"ping\"}";
  CHECK_INT(mcp_http_split(big, strlen(big), collect, log), AG_OK);
  CHECK_STR(log, "9000000001999981Q;"); /* not 9.00000000199998e+15 */
  char *e = mcp_http_error_answer("9000000001999981", "why");
  CHECK_STR(e, "{\"jsonrpc\":\"2.0\",\"id\":9000000001999981,\"error\":{\"code\":-32000,\"message\":\"why\"}}");
  free(e);
  log[0] = '\0';
  const char *neg = "[{\"id\":-9007199254740991,\"result\":{}},{\"id\":1.0,\"error\":{}},{\"id\":-0,\"result\":1}]";
  CHECK_INT(mcp_http_split(neg, strlen(neg), collect, log), AG_OK);
  CHECK_STR(log, "-9007199254740991R;1R;0R;");
  const char *bad[] = {"-1e999",           "1e999", "9007199254740992", "9007199254740993",
                       "-9007199254740992", "1.5",   "1e300",            "true", "{}", "[1]"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char msg[128], batch[256];
    snprintf(msg, sizeof msg, "{\"UUUprc\":\"\x04\",\"id\":%s}", bad[i]);
    mcp_http_peek pk;
    CHECK_INT(mcp_http_peek_text(msg, strlen(msg), &pk), AG_OK);
    if (!pk.bad_id || pk.id[0] || pk.is_request || pk.is_response)
      unit_fail_(__FILE__, __LINE__, "peek of id %s", bad[i]);
    snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}", bad[i]);
    snprintf(batch, sizeof batch, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}},%s]", msg);
    log[0] = '\0';
    CHECK_INT(mcp_http_split(msg, strlen(msg), collect, log), AG_ERR_INVALID);
    CHECK_INT(mcp_http_split(batch, strlen(batch), collect, log), AG_ERR_INVALID);
    if (log[0]) unit_fail_(__FILE__, __LINE__, "id %s: delivered %s", bad[i], log);
    CHECK(mcp_http_error_answer(bad[i], "why") == NULL);
  }
  /* null and absent ids are no ids, not bad ones: an error answer may carry null */
  log[0] = '\0';
  const char *null_id = "[{\"id\":null,\"error\":{\"code\":-32600,\"message\":\"m\"}},{\"method\":\"n\"}]";
  CHECK_INT(mcp_http_split(null_id, strlen(null_id), collect, log), AG_OK);
  CHECK_STR(log, "-N;-N;");
}

static char *tmp;

static int start_servers(void) {
  if (mcp_everything_start(&everything, tmp) == 0 && mcp_fault_start(&fault) == 0) return 0;
  fprintf(stderr, "test_mcp_http: could not start the servers (AGORA_PEERS=%s)\n",
          getenv("AGORA_PEERS") ? getenv("AGORA_PEERS") : "");
  return -1;
}

static void stop_servers(void) {
  mcp_everything_stop(&everything);
  if (fault) mcp_fault_stop(fault);
}

SUITE_RUN((UNIT(test_split_and_peek), UNIT(test_ids_echoed_exactly_or_refused), UNIT(test_open_rejects),
  UNIT(test_unreachable), UNIT(test_fault_session_expired), UNIT(test_fault_stream_never_ends),
  UNIT(test_fault_garbage), UNIT(test_fault_dropped_stream_resumed), UNIT(test_fault_get_stream),
  UNIT(test_everything_session), UNIT(test_everything_get_stream), UNIT(test_everything_https),
  UNIT(test_everything_progress), UNIT(test_everything_concurrent),
  UNIT(test_everything_close_in_message)), .tmp = &tmp, .before = start_servers, .after = stop_servers)
