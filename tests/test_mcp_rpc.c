/* The pure MCP pieces: newline framing (any split, the cap, blank lines, \r\n), message kinds and ids,
 * batches, the messages a client writes, result rendering (text, images, structured content, the
 * "[truncated]" cap at a UTF-8 boundary) and ${VAR} expansion. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "mcp/expand.h"
#include "mcp/render.h"
#include "mcp/rpc.h"
#include "support/suite.h"
#include "support/unit.h"

typedef struct seen {
  char log[512];
  int lines, too_long;
} seen;

static int collect(void *ud, const char *line, size_t len, int too_long) {
  seen *s = ud;
  if (too_long) {
    s->too_long++;
    strcat(s->log, "<long>|");
    return 0;
  }
  CHECK_INT(strlen(line), len);
  s->lines++;
  strncat(s->log, line, sizeof s->log - strlen(s->log) - 2);
  strcat(s->log, "|");
  return 0;
}

static void lines_any_split(void) {
  const char *in = "{\"a\":1}\r\n\n   \n{\"b\":2}\n{\"c\"";
  for (size_t step = 1; step <= strlen(in); step++) {
    seen s = {{0}, 0, 0};
    mcp_lines l;
    mcp_lines_init(&l, 64, collect, &s);
    for (size_t off = 0; off < strlen(in); off += step) {
      size_t n = strlen(in) - off < step ? strlen(in) - off : step;
      CHECK_INT(mcp_lines_feed(&l, in + off, n), 0);
    }
    CHECK_STR(s.log, "{\"a\":1}|{\"b\":2}|");
    mcp_lines_free(&l);
  }
}

static void lines_over_cap_skipped(void) {
  seen s = {{0}, 0, 0};
  mcp_lines l;
  mcp_lines_init(&l, 8, collect, &s);
  CHECK_INT(mcp_lines_feed(&l, "short\n0123456789abcdef", 22), 0);
  CHECK_INT(mcp_lines_feed(&l, "more of the long line\nok\n", 25), 0);
  CHECK_STR(s.log, "short|<long>|ok|");
  CHECK_INT(s.too_long, 1);
  mcp_lines_free(&l);
}

static void message_kinds(void) {
  mcp_msg m;
  const char *why;
  const char *res = "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}";
  CHECK_INT(mcp_msg_parse(res, strlen(res), &m, &why), 0);
  CHECK_INT(m.kind, MCP_MSG_RESULT);
  CHECK(m.has_num_id && m.num_id == 7);
  mcp_msg_free(&m);
  const char *err = "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"error\":{\"code\":-32601,\"message\":\"nope\"}}";
  CHECK_INT(mcp_msg_parse(err, strlen(err), &m, &why), 0);
  CHECK_INT(m.kind, MCP_MSG_ERROR);
  CHECK(!m.has_num_id);
  CHECK_INT(m.error_code, -32601);
  CHECK_STR(m.error_text, "nope");
  mcp_msg_free(&m);
  const char *note = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}";
  CHECK_INT(mcp_msg_parse(note, strlen(note), &m, &why), 0);
  CHECK_INT(m.kind, MCP_MSG_NOTIFICATION);
  mcp_msg_free(&m);
  const char *req = "{\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"method\":\"ping\"}";
  CHECK_INT(mcp_msg_parse(req, strlen(req), &m, &why), 0);
  CHECK(m.kind == MCP_MSG_REQUEST && !m.has_num_id);
  mcp_msg_free(&m);
  const char *bad[] = {"nope", "[1]", "{\"id\":1,\"result\":{}}", "{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":1}",
                       "{\"jsonrpc\":\"2.0\",\"result\":1}", "{\"jsonrpc\":\"2.0\",\"method\":3}", "{\"jsonrpc\":\"2.0\"}"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    CHECK_INT(mcp_msg_parse(bad[i], strlen(bad[i]), &m, &why), AG_ERR_INVALID);
    CHECK(why != NULL);
  }
}

/* Ids are strings or whole numbers within +-(2^53-1), echoed exactly; anything else is refused, a request
 * with such an id with the reason that asks for an Invalid Request answer. */
static void ids_exact_or_refused(void) {
  mcp_msg m;
  const char *why;
  const char *ok[][2] = {{"9000000001999981", "9000000001999981"},   {"-9007199254740991", "-9007199254740991"},
                         {"9007199254740991", "9007199254740991"},   {"1.0", "1"},
                         {"-0", "0"},                                {"1e15", "1000000000000000"},
                         {"\"a\\\"b\"", "\"a\\\"b\""}};
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
    char in[128], want[160];
    snprintf(in, sizeof in, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}", ok[i][0]);
    CHECK_INT(mcp_msg_parse(in, strlen(in), &m, &why), AG_OK);
    CHECK_INT(m.kind, MCP_MSG_REQUEST);
    char *s = mcp_rpc_result(m.id, NULL);
    snprintf(want, sizeof want, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}", ok[i][1]);
    CHECK_STR(s, want);
    free(s);
    s = mcp_rpc_error(m.id, -32601, "x");
    snprintf(want, sizeof want, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-32601,\"message\":\"x\"}}", ok[i][1]);
    CHECK_STR(s, want);
    free(s);
    mcp_msg_free(&m);
  }
  const char *bad[] = {"-1e999", "1e999", "9007199254740992", "9007199254740993", "-9007199254740992", "1.5",
                       "1e300", "true", "{}", "[1]"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char in[128];
    snprintf(in, sizeof in, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}", bad[i]);
    CHECK_INT(mcp_msg_parse(in, strlen(in), &m, &why), AG_ERR_INVALID);
    if (why != mcp_rpc_bad_request_id) unit_fail_(__FILE__, __LINE__, "id %s: %s", bad[i], why ? why : "(null)");
    snprintf(in, sizeof in, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}", bad[i]);
    CHECK_INT(mcp_msg_parse(in, strlen(in), &m, &why), AG_ERR_INVALID);
    CHECK(why != NULL && why != mcp_rpc_bad_request_id); /* a response is never answered */
  }
  char *s = mcp_rpc_invalid(mcp_rpc_bad_request_id);
  CHECK_STR(s, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: a request "
               "whose id is not a string or a whole number within +-(2^53-1)\"}}");
  free(s);
  s = mcp_rpc_request(9000000001999981LL, "tools/list", NULL);
  CHECK_STR(s, "{\"jsonrpc\":\"2.0\",\"id\":9000000001999981,\"method\":\"tools/list\"}");
  free(s);
}

static int keep_split(void *ud, const char *json, size_t len) {
  char *log = ud;
  strncat(log, json, len);
  strcat(log, ";");
  return 0;
}

/* A batch's elements are printed anew: their ids and other integers stay exact. */
static void batch_split_exact(void) {
  char log[512] = "";
  const char *in = "[{\"jsonrpc\":\"2.0\",\"id\":9000000001999981,\"method\":\"ping\",\"params\":{\"n\":[-9007199254740991,0.5]}},"
                   "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}}]";
  CHECK_INT(mcp_rpc_split(in, strlen(in), keep_split, log), AG_OK);
  CHECK_STR(log, "{\"jsonrpc\":\"2.0\",\"id\":9000000001999981,\"method\":\"ping\",\"params\":{\"n\":[-9007199254740991,0.5]}};"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}};");
}

static int count_split(void *ud, const char *json, size_t len) {
  (void)json, (void)len;
  ++*(int *)ud;
  return 0;
}

static void batches_and_builders(void) {
  int n = 0;
  CHECK_INT(mcp_rpc_split("[{\"a\":1},{\"b\":2}]", 17, count_split, &n), 0);
  CHECK_INT(n, 2);
  n = 0;
  CHECK_INT(mcp_rpc_split("{\"a\":1}", 7, count_split, &n), 0);
  CHECK_INT(n, 1);
  CHECK_INT(mcp_rpc_split("[]", 2, count_split, &n), AG_ERR_INVALID);
  CHECK_INT(mcp_rpc_split("[1,", 3, count_split, &n), AG_ERR_INVALID);
  char *s = mcp_rpc_request(3, "tools/list", NULL);
  CHECK_STR(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
  free(s);
  s = mcp_rpc_error(NULL, -32601, "x");
  CHECK_STR(s, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32601,\"message\":\"x\"}}");
  free(s);
}

static char *render(const char *json, size_t cap, int *is_error) {
  cJSON *j = cJSON_Parse(json);
  char *out = NULL;
  CHECK_INT(mcp_render_result(j, cap, &out, is_error), 0);
  cJSON_Delete(j);
  return out;
}

static void rendering(void) {
  int err;
  char *s = render("{\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"image\",\"mimeType\":\"image/png\","
                   "\"data\":\"AAAA\"},{\"type\":\"resource_link\",\"uri\":\"file:///x\",\"name\":\"x\"}]}", 1000, &err);
  CHECK_STR(s, "a\n[image: image/png, 4 bytes of base64]\n[resource link: file:///x x]");
  CHECK_INT(err, 0);
  free(s);
  s = render("{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"t\\\": 1}\"}],\"structuredContent\":{\"t\":1}}", 1000, &err);
  CHECK_STR(s, "{\"t\":1}"); /* the text repeating the structured content is shown once */
  free(s);
  s = render("{\"content\":[],\"isError\":true}", 1000, &err);
  CHECK_INT(err, 1);
  CHECK_STR(s, "(the tool failed with no detail)");
  free(s);
  s = render("{\"content\":[{\"type\":\"text\",\"text\":\"ab\xc3\xa9" "cd\"}]}", 3, &err);
  CHECK_STR(s, "ab" MCP_TRUNCATED); /* not inside the two bytes of é */
  free(s);
}

static void expansion(void) {
  char *out;
  ag_errmsg em;
  setenv("AGORA_TEST_MCP_TOKEN", "s3cret", 1);
  unsetenv("AGORA_TEST_MCP_UNSET");
  CHECK_INT(mcp_expand("Bearer ${AGORA_TEST_MCP_TOKEN} $5", "headers.A", &out, &em), 0);
  CHECK_STR(out, "Bearer s3cret $5");
  free(out);
  CHECK_INT(mcp_expand("${AGORA_TEST_MCP_UNSET}", "env.X", &out, &em), AG_ERR_INVALID);
  CHECK(strstr(em.text, "env.X") && strstr(em.text, "AGORA_TEST_MCP_UNSET"));
  CHECK_INT(mcp_expand("${AGORA_TEST_MCP_TOKEN", "env.X", &out, &em), AG_ERR_INVALID);
  CHECK(!strstr(em.text, "s3cret"));
}

SUITE_RUN((UNIT(lines_any_split), UNIT(lines_over_cap_skipped), UNIT(message_kinds), UNIT(ids_exact_or_refused),
  UNIT(batch_split_exact), UNIT(batches_and_builders), UNIT(rendering), UNIT(expansion)))
