/* Fuzzes what an MCP server's stdout reaches (mcp/rpc.c, mcp/render.c): the input is fed to the line
 * reader whole and in random pieces derived from it; both must give the same lines, each within the
 * cap, NUL-terminated, never blank; each line is split (batches) and parsed, and a parsed message has
 * a consistent kind; a result is rendered within its cap plus the marker. */
#include "fuzz_util.h"

#include "common/buf.h"
#include "mcp/render.h"
#include "mcp/rpc.h"

#include <cjson/cJSON.h>
#include <stdio.h>

#define LINE_CAP 4096
#define RENDER_CAP 256

typedef struct record {
  ag_buf log;
  size_t lines, too_long;
} record;

/* A request's answer carries its id exactly: the same string, or the same whole number (never null,
 * never reprinted from a double: issue 17). */
static void check_echo(const mcp_msg *req) {
  char *text = mcp_rpc_result(req->id, NULL);
  mcp_msg a;
  const char *why;
  if (!text || mcp_msg_parse(text, strlen(text), &a, &why) || a.kind != MCP_MSG_RESULT || !a.id) abort();
  if (a.has_num_id != req->has_num_id || (a.has_num_id && a.num_id != req->num_id)) abort();
  if (cJSON_IsString(req->id) != cJSON_IsString(a.id)) abort();
  if (cJSON_IsString(req->id) && strcmp(req->id->valuestring, a.id->valuestring)) abort();
  if (req->has_num_id) {
    char want[32];
    snprintf(want, sizeof want, "\"id\":%lld,", req->num_id);
    if (!strstr(text, want)) abort();
  }
  mcp_msg_free(&a);
  free(text);
}

/* A request whose id cannot be echoed is answered with Invalid Request, id null. */
static void check_invalid_answer(const char *why) {
  char *text = mcp_rpc_invalid(why);
  mcp_msg a;
  if (!text || mcp_msg_parse(text, strlen(text), &a, &why) || a.kind != MCP_MSG_ERROR || a.id || a.error_code != -32600)
    abort();
  mcp_msg_free(&a);
  free(text);
}

static int check_msg(void *ud, const char *json, size_t len) {
  (void)ud;
  mcp_msg m;
  const char *why;
  if (mcp_msg_parse(json, len, &m, &why)) {
    if (!why) abort();
    if (why == mcp_rpc_bad_request_id) check_invalid_answer(why);
    return 0;
  }
  if (m.kind == MCP_MSG_REQUEST) check_echo(&m);
  if ((m.kind == MCP_MSG_REQUEST || m.kind == MCP_MSG_NOTIFICATION) && !m.method) abort();
  if ((m.kind == MCP_MSG_REQUEST || m.kind == MCP_MSG_RESULT) && !m.id) abort();
  if (m.kind == MCP_MSG_ERROR && !m.error_text) abort();
  if (m.kind == MCP_MSG_RESULT) {
    char *out;
    int is_error;
    if (mcp_render_result(m.result, RENDER_CAP, &out, &is_error)) abort();
    if (strlen(out) > RENDER_CAP + sizeof MCP_TRUNCATED - 1 || !out[0]) abort();
    free(out);
  }
  mcp_msg_free(&m);
  return 0;
}

static int on_line(void *ud, const char *line, size_t len, int too_long) {
  record *r = ud;
  if (too_long) {
    if (line) abort();
    r->too_long++;
    return 0;
  }
  /* Only the one \r of a CRLF is removed: "x\r\r" is the line "x\r". */
  if (!len || len > LINE_CAP || line[len] != '\0' || memchr(line, '\n', len)) abort();
  r->lines++;
  if (ag_buf_append(&r->log, line, len + 1)) abort();
  return 0;
}

static void run(const uint8_t *p, size_t n, uint32_t split, record *r) {
  mcp_lines l;
  mcp_lines_init(&l, LINE_CAP, on_line, r);
  for (size_t off = 0; off < n;) {
    size_t piece = split ? 1 + fuzz_rand(&split) % 17 : n;
    if (piece > n - off) piece = n - off;
    if (mcp_lines_feed(&l, (const char *)p + off, piece)) abort();
    off += piece;
  }
  mcp_lines_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_in in = {data, size};
  uint8_t ctl = fuzz_byte(&in);
  uint32_t seed = 0x9e3779b9u ^ ((uint32_t)ctl << 8) ^ (uint32_t)size;
  record whole = {{0}, 0, 0}, split = whole;
  ag_buf_init(&whole.log, 64u << 20);
  ag_buf_init(&split.log, 64u << 20);
  run(in.data, in.size, 0, &whole);
  run(in.data, in.size, seed | 1, &split);
  if (whole.lines != split.lines || whole.too_long != split.too_long || whole.log.len != split.log.len ||
      (whole.log.len && memcmp(whole.log.data, split.log.data, whole.log.len)))
    abort();
  for (size_t off = 0; off < whole.log.len;) {
    const char *line = whole.log.data + off;
    size_t len = strlen(line);
    int rc = mcp_rpc_split(line, len, check_msg, NULL);
    if (rc && rc != AG_ERR_INVALID) abort();
    off += len + 1;
  }
  ag_buf_free(&whole.log);
  ag_buf_free(&split.log);
  return 0;
}
