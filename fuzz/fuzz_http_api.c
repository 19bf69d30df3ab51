/* Fuzzes agora serve's request parsing (serve/serve_route.c): route matching of any method and URI, the
 * query numbers and strings, and every route's JSON body. Checks: each answer is one of the statuses the server
 * sends, with a reason; a matched route takes the method; ids are NUL-terminated and within their cap;
 * a query value is at most 2^53; an accepted body has its required fields, non-empty and valid UTF-8. */
#include "fuzz_util.h"

#include "serve/serve_route.h"
#include "common/utf8.h"

#include <stdio.h>

static const int methods[] = {SERVE_GET, SERVE_POST, SERVE_PATCH, SERVE_DELETE, SERVE_HEAD, SERVE_OTHER, SERVE_PUT};

static void check_utf8(const char *s) {
  size_t n = strlen(s);
  if (!n) abort();
  for (size_t i = 0; i < n;) {
    size_t k = ag_utf8_seq_len(s + i, n - i);
    if (!k) abort();
    i += k;
  }
}

static void route(int method, const char *uri) {
  serve_match m;
  char err[SERVE_ERR_MAX];
  int rc = serve_route_match(method, uri, &m, err);
  if (rc != 0 && rc != 400 && rc != 404 && rc != 405) abort();
  if (rc && !err[0]) abort();
  if (strnlen(m.world, SERVE_ID_MAX) >= SERVE_ID_MAX || strnlen(m.chat, SERVE_ID_MAX) >= SERVE_ID_MAX) abort();
  if (strnlen(m.name, SERVE_ID_MAX) >= SERVE_ID_MAX) abort();
  if (!rc && m.route == SR_CHAT_MESSAGE && !m.seq) abort(); /* message numbers start at 1 */
  if (rc == 0) {
    if (m.route == SR_NONE || !(m.allowed & (method == SERVE_HEAD ? SERVE_GET : method))) abort();
    if (m.query && (m.query < uri || m.query > uri + strlen(uri))) abort();
    uint64_t v;
    int present;
    static const char *keys[] = {"after", "before", "limit"};
    for (size_t i = 0; i < 3; i++) {
      int q = serve_query_u64(m.query, keys[i], &v, &present, err);
      if (q != 0 && q != 400) abort();
      if (!q && present && v > (1ull << 53)) abort();
    }
    char text[SERVE_QUERY_MAX];
    int q = serve_query_str(m.query, "q", text, &present, err);
    if (q != 0 && q != 400) abort();
    if (!q && strlen(text) >= SERVE_QUERY_MAX) abort();
  }
  if (rc == 405 && !m.allowed) abort();
  /* the same text as Host and Origin headers */
  const char *nl = strchr(uri, '\n');
  char host[300];
  snprintf(host, sizeof host, "%.*s", nl ? (int)(nl - uri) : 299, uri);
  int o = serve_check_origin(host, nl ? nl + 1 : NULL, method & 1, err);
  if (o != 0 && o != 403) abort();
  if (o && !err[0]) abort();
}

static void body(serve_route_id r, int method, const uint8_t *data, size_t size) {
  serve_body b;
  char err[SERVE_ERR_MAX];
  int rc = serve_body_parse(r, method, (const char *)data, size, &b, err);
  if (rc != 0 && rc != 400 && rc != 413 && rc != 422) abort();
  if (rc && !err[0]) abort();
  if (!rc && r == SR_MESSAGES) {
    if (!b.text) abort();
    check_utf8(b.text);
    if (b.chat) check_utf8(b.chat);
  }
  if (!rc && r == SR_CHAT && method == SERVE_PATCH) {
    if (!b.title) abort();
    check_utf8(b.title);
  }
  if (!rc && r == SR_APPROVAL && b.allow != 0 && b.allow != 1) abort();
  /* a world document or an agent is kept whole, for the world file's readers */
  if (!rc && (r == SR_WORLDS || r == SR_AGENTS) && method == SERVE_POST && !b.doc) abort();
  if (!rc && r == SR_CHAT_MESSAGE && method == SERVE_PUT && !b.text) abort();
  serve_body_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_in in = {data, size};
  uint8_t c = fuzz_byte(&in);
  int method = methods[c % 7];
  if (c & 0x80) {
    static const serve_route_id routes[] = {SR_MESSAGES, SR_CHAT, SR_APPROVAL, SR_CHATS, SR_CANCEL,
                                            SR_WORLDS, SR_WORLD, SR_AGENTS, SR_AGENT, SR_CHAT_MESSAGE};
    body(routes[(c >> 3) % 10], method, in.data, in.size);
  } else {
    char *uri = fuzz_cstr(in.data, in.size);
    route(method, uri);
    free(uri);
  }
  return 0;
}
