/* Request parsing for `agora serve` (see serve_route.h): routes, query numbers, JSON bodies. Pure. */
#include "serve/serve_route.h"

#include "common/error.h"
#include "common/jsonnum.h"
#include "common/utf8.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SEGS_MAX 7

static int fail(char *err, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, SERVE_ERR_MAX, fmt, ap);
  va_end(ap);
  return status;
}

int serve_method_parse(const char *name) {
  static const struct { const char *name; int bit; } m[] = {
    {"GET", SERVE_GET}, {"POST", SERVE_POST}, {"PATCH", SERVE_PATCH}, {"DELETE", SERVE_DELETE}, {"HEAD", SERVE_HEAD},
    {"PUT", SERVE_PUT}};
  for (size_t i = 0; name && i < sizeof m / sizeof *m; i++)
    if (!strcmp(name, m[i].name)) return m[i].bit;
  return SERVE_OTHER;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Percent-decodes the n bytes at s into out (SERVE_ID_MAX); 0, or 400 for a bad escape, a decoded NUL
 * or '/', or a segment too long for an id. */
static int decode_segment(const char *s, size_t n, char *out, char *err) {
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    int c = (unsigned char)s[i];
    if (c == '%') {
      int hi = i + 2 < n ? hexval(s[i + 1]) : -1, lo = i + 2 < n ? hexval(s[i + 2]) : -1;
      if (hi < 0 || lo < 0) return fail(err, 400, "bad percent escape in the path");
      c = hi * 16 + lo;
      i += 2;
      if (c == 0 || c == '/') return fail(err, 400, "the path holds an escaped NUL or '/'");
    }
    if (o + 1 >= SERVE_ID_MAX) return fail(err, 400, "a path segment is longer than %d bytes", SERVE_ID_MAX - 1);
    out[o++] = (char)c;
  }
  out[o] = '\0';
  return 0;
}

/* A decimal number of 1 to 15 digits (an approval id, a message number); 0 when p is none. */
static uint64_t seg_number(const char *p) {
  uint64_t v = 0;
  if (!*p || strlen(p) > 15) return 0;
  for (; *p; p++) {
    if (*p < '0' || *p > '9') return 0;
    v = v * 10 + (uint64_t)(*p - '0');
  }
  return v;
}

/* The routes under /api/worlds/{w}/ that issue 24 added: agents, one message, retry, MCP. */
static serve_route_id route_of_more(char seg[][SERVE_ID_MAX], int n, serve_match *m) {
#define IS(i, s) (!strcmp(seg[i], s))
  if (n == 4 && IS(3, "agents")) return m->allowed = SERVE_POST, SR_AGENTS;
  if (n == 5 && IS(3, "agents")) {
    memcpy(m->name, seg[4], SERVE_ID_MAX);
    return m->allowed = SERVE_PATCH | SERVE_DELETE, SR_AGENT;
  }
  if (n == 4 && IS(3, "mcp")) return m->allowed = SERVE_GET, SR_MCP;
  if (n == 6 && IS(3, "mcp") && IS(5, "restart")) {
    memcpy(m->name, seg[4], SERVE_ID_MAX);
    return m->allowed = SERVE_POST, SR_MCP_RESTART;
  }
  if (n < 6 || !IS(3, "chats")) return SR_NONE;
  memcpy(m->chat, seg[4], SERVE_ID_MAX);
  if (n == 6 && IS(5, "retry")) return m->allowed = SERVE_POST, SR_CHAT_RETRY;
  if (n == 7 && IS(5, "messages") && (m->seq = seg_number(seg[6]))) return m->allowed = SERVE_PUT | SERVE_DELETE, SR_CHAT_MESSAGE;
#undef IS
  return SR_NONE;
}

/* The route of the (decoded) segments; sets allowed, and world/chat/approval from the segments. */
static serve_route_id route_of(char seg[SEGS_MAX][SERVE_ID_MAX], int n, serve_match *m) {
#define IS(i, s) (!strcmp(seg[i], s))
  if (n == 0) return m->allowed = SERVE_GET, SR_PAGE;
  if (n == 1 && IS(0, "healthz")) return m->allowed = SERVE_GET, SR_HEALTHZ;
  if (n == 1 && IS(0, "metrics")) return m->allowed = SERVE_GET, SR_METRICS;
  if (n == 2 && IS(0, "assets")) {
    memcpy(m->asset, seg[1], SERVE_ID_MAX);
    return m->allowed = SERVE_GET, SR_ASSET;
  }
  if (n < 2 || !IS(0, "api")) return SR_NONE;
  if (n == 2 && IS(1, "snapshots")) return m->allowed = SERVE_POST, SR_SNAPSHOTS;
  if (n == 2 && IS(1, "openapi.json")) return m->allowed = SERVE_GET, SR_OPENAPI;
  if (n == 3 && IS(1, "approvals")) {
    if (!(m->approval = seg_number(seg[2])) && strcmp(seg[2], "0")) return SR_NONE;
    return m->allowed = SERVE_POST, SR_APPROVAL;
  }
  if (!IS(1, "worlds")) return SR_NONE;
  if (n == 2) return m->allowed = SERVE_GET | SERVE_POST, SR_WORLDS;
  memcpy(m->world, seg[2], SERVE_ID_MAX);
  if (n == 3) return m->allowed = SERVE_GET | SERVE_PATCH | SERVE_DELETE, SR_WORLD;
  if (n == 4 && IS(3, "chats")) return m->allowed = SERVE_GET | SERVE_POST, SR_CHATS;
  if (n == 4 && IS(3, "messages")) return m->allowed = SERVE_POST, SR_MESSAGES;
  if (n == 4 && IS(3, "cancel")) return m->allowed = SERVE_POST, SR_CANCEL;
  if (n == 4 && IS(3, "load")) return m->allowed = SERVE_POST, SR_WORLD_LOAD;
  if (n == 4 && IS(3, "events")) return m->allowed = SERVE_GET, SR_EVENTS;
  if (n == 4 && IS(3, "export")) return m->allowed = SERVE_GET, SR_WORLD_EXPORT;
  serve_route_id more = route_of_more(seg, n, m);
  if (more != SR_NONE) return more;
  if (n < 5 || !IS(3, "chats")) return SR_NONE;
  memcpy(m->chat, seg[4], SERVE_ID_MAX);
  if (n == 5) return m->allowed = SERVE_DELETE | SERVE_PATCH, SR_CHAT;
  if (n == 6 && IS(5, "select")) return m->allowed = SERVE_POST, SR_CHAT_SELECT;
  if (n == 6 && IS(5, "messages")) return m->allowed = SERVE_GET, SR_CHAT_MESSAGES;
  if (n == 6 && IS(5, "snapshot")) return m->allowed = SERVE_GET, SR_CHAT_SNAPSHOT;
  if (n == 6 && IS(5, "branch")) return m->allowed = SERVE_POST, SR_CHAT_BRANCH;
  if (n == 6 && IS(5, "export")) return m->allowed = SERVE_GET, SR_CHAT_EXPORT;
  if (n == 6 && IS(5, "search")) return m->allowed = SERVE_GET, SR_CHAT_SEARCH;
  if (n == 6 && IS(5, "usage")) return m->allowed = SERVE_GET, SR_CHAT_USAGE;
  if (n == 6 && IS(5, "graph")) return m->allowed = SERVE_GET, SR_CHAT_GRAPH;
#undef IS
  return SR_NONE;
}

int serve_route_match(int method, const char *uri, serve_match *out, char *err) {
  memset(out, 0, sizeof *out);
  err[0] = '\0';
  if (!uri || uri[0] != '/') return fail(err, 404, "no such route");
  const char *q = strchr(uri, '?');
  size_t plen = q ? (size_t)(q - uri) : strlen(uri);
  out->query = q ? q + 1 : NULL;
  char seg[SEGS_MAX][SERVE_ID_MAX];
  int n = 0;
  for (size_t i = 1; plen > 1 && i <= plen;) {
    size_t j = i;
    while (j < plen && uri[j] != '/') j++;
    if (j == i) return fail(err, 404, "no such route"); /* an empty segment: "//", a trailing '/' */
    if (n == SEGS_MAX) return fail(err, 404, "no such route");
    int rc = decode_segment(uri + i, j - i, seg[n++], err);
    if (rc) return rc;
    i = j + 1;
  }
  out->route = route_of(seg, n, out);
  if (out->route == SR_NONE) {
    out->allowed = 0;
    return fail(err, 404, "no such route");
  }
  int m = method == SERVE_HEAD ? SERVE_GET : method;
  if (!(out->allowed & m)) return fail(err, 405, "this route does not take that method");
  return 0;
}

int serve_query_u64(const char *query, const char *key, uint64_t *out, int *present, char *err) {
  size_t klen = strlen(key);
  *present = 0;
  for (const char *p = query; p && *p;) {
    const char *end = strchr(p, '&');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len > klen && !strncmp(p, key, klen) && p[klen] == '=') {
      const char *v = p + klen + 1;
      size_t vlen = len - klen - 1;
      uint64_t x = 0;
      if (vlen == 0 || vlen > 16) return fail(err, 400, "query parameter '%s' is not a number", key);
      for (size_t i = 0; i < vlen; i++) {
        if (v[i] < '0' || v[i] > '9') return fail(err, 400, "query parameter '%s' is not a number", key);
        x = x * 10 + (uint64_t)(v[i] - '0');
      }
      if (x > (1ull << 53)) return fail(err, 400, "query parameter '%s' is too large", key);
      *out = x;
      *present = 1;
    }
    p = end ? end + 1 : NULL;
  }
  return 0;
}

int serve_query_str(const char *query, const char *key, char out[SERVE_QUERY_MAX], int *present, char *err) {
  size_t klen = strlen(key);
  *present = 0;
  out[0] = '\0';
  for (const char *p = query; p && *p;) {
    const char *end = strchr(p, '&');
    size_t len = end ? (size_t)(end - p) : strlen(p), o = 0;
    if (len > klen && !strncmp(p, key, klen) && p[klen] == '=') {
      for (size_t i = klen + 1; i < len; i++) {
        int c = (unsigned char)p[i];
        if (c == '+') c = ' ';
        else if (c == '%') {
          int hi = i + 2 < len ? hexval(p[i + 1]) : -1, lo = i + 2 < len ? hexval(p[i + 2]) : -1;
          if (hi < 0 || lo < 0) return fail(err, 400, "query parameter '%s': bad percent escape", key);
          c = hi * 16 + lo;
          i += 2;
        }
        if (c == 0) return fail(err, 400, "query parameter '%s' holds a NUL", key);
        if (o + 1 >= SERVE_QUERY_MAX) return fail(err, 400, "query parameter '%s' is longer than %d bytes", key, SERVE_QUERY_MAX - 1);
        out[o++] = (char)c;
      }
      out[o] = '\0';
      for (size_t i = 0; i < o;) {
        size_t k = ag_utf8_seq_len(out + i, o - i);
        if (!k) return fail(err, 400, "query parameter '%s' is not valid UTF-8", key);
        i += k;
      }
      *present = 1;
    }
    p = end ? end + 1 : NULL;
  }
  return 0;
}

int serve_json_parse(const char *body, size_t len, cJSON **out, char *err) {
  *out = NULL;
  if (len > SERVE_BODY_MAX) return fail(err, 413, "the request body is larger than %u bytes", SERVE_BODY_MAX);
  if (memchr(body, '\0', len)) return fail(err, 400, "the request body holds a NUL byte");
  /* A "\u0000" escape would end its string once parsed into a C string: the rest would be cut without a
   * word (as `chats import` refuses it, so does the API). */
  long nul = ag_json_find_nul(body, len);
  if (nul >= 0) {
    size_t line, col;
    ag_json_line_col(body, (size_t)nul, &line, &col);
    return fail(err, 400, "the request body: line %zu, column %zu: a string holds \\u0000 (a NUL character), which Agora cannot keep", line, col);
  }
  const char *end = NULL;
  cJSON *j = cJSON_ParseWithLengthOpts(body, len, &end, 0);
  if (!j) return fail(err, 400, "the request body is not valid JSON (near byte %zu)",
                      end && end >= body ? (size_t)(end - body) : (size_t)0);
  for (; end && (size_t)(end - body) < len; end++) {
    if (*end != ' ' && *end != '\t' && *end != '\n' && *end != '\r') {
      cJSON_Delete(j);
      return fail(err, 400, "the request body has bytes after its JSON value");
    }
  }
  *out = j;
  return 0;
}

/* A string field: valid UTF-8 of 1..max bytes; copied into *dst. */
static int take_string(const cJSON *v, const char *name, size_t max, char **dst, char *err) {
  if (!cJSON_IsString(v)) return fail(err, 422, "%s: must be a string", name);
  const char *s = v->valuestring;
  size_t n = strlen(s);
  if (n == 0) return fail(err, 422, "%s: must not be empty", name);
  if (n > max) return fail(err, 422, "%s: longer than %zu bytes", name, max);
  for (size_t i = 0; i < n;) {
    size_t k = ag_utf8_seq_len(s + i, n - i);
    if (!k) return fail(err, 422, "%s: not valid UTF-8", name);
    i += k;
  }
  if (!(*dst = strdup(s))) return AG_ERR_NOMEM;
  return 0;
}

/* The fields a route's body may have: the names, and which of them must be there (any: at least one of
 * them; open: any field, the world file's readers check them later). */
typedef struct body_shape { const char *names[6]; unsigned required; int any, open; } body_shape;

static body_shape shape_of(serve_route_id route, int method) {
  if (route == SR_MESSAGES) return (body_shape){.names = {"text", "chat"}, .required = 1u};
  if (route == SR_CHAT && method == SERVE_PATCH) return (body_shape){.names = {"title"}, .required = 1u};
  if (route == SR_APPROVAL) return (body_shape){.names = {"allow", "answer"}, .required = 1u};
  if (route == SR_CHAT_BRANCH) return (body_shape){.names = {"at"}, .required = 1u};
  if (route == SR_WORLD && method == SERVE_PATCH)
    return (body_shape){.names = {"budget", "turn_limit", "main_agent", "memory_window", "variables"}, .any = 1};
  if ((route == SR_WORLDS && method == SERVE_POST) || route == SR_AGENTS) return (body_shape){.open = 1};
  if (route == SR_AGENT && method == SERVE_PATCH)
    return (body_shape){.names = {"provider", "model", "system_prompt", "temperature", "tools"}, .any = 1};
  if (route == SR_CHAT_MESSAGE && method == SERVE_PUT) return (body_shape){.names = {"text"}, .required = 1u};
  return (body_shape){.required = 0};
}

static int check_keys(const cJSON *j, const body_shape *sh, char *err) {
  unsigned seen = 0;
  if (sh->open) return j->child ? 0 : fail(err, 422, "the request body is an empty object");
  for (const cJSON *c = j->child; c; c = c->next) {
    int k = -1;
    for (int i = 0; i < 6 && sh->names[i]; i++)
      if (!strcmp(c->string, sh->names[i])) k = i;
    if (k < 0) return fail(err, 422, "unknown field '%.64s'", c->string);
    if (seen & (1u << k)) return fail(err, 400, "field '%s' appears twice", sh->names[k]);
    seen |= 1u << k;
  }
  for (int i = 0; i < 6 && sh->names[i]; i++)
    if ((sh->required & (1u << i)) && !(seen & (1u << i))) return fail(err, 422, "missing field '%s'", sh->names[i]);
  if (sh->any && !seen) return fail(err, 422, "give at least one of the fields (%s, ...)", sh->names[0]);
  return 0;
}

/* {"tokens": N, "usd": X}, either or both, 0 meaning no limit (docs/serve.md). */
static int take_budget(const cJSON *b, serve_body *out, char *err) {
  if (!cJSON_IsObject(b) || !b->child) return fail(err, 422, "budget: must be an object with tokens, usd or both");
  for (const cJSON *c = b->child; c; c = c->next) {
    if (!strcmp(c->string, "tokens") && !out->has_budget_tokens) {
      if (ag_json_int(c, 0, AG_JSON_INT_MAX, &out->budget_tokens))
        return fail(err, 422, "budget.tokens: must be a whole number of tokens, 0 (no limit) or more");
      out->has_budget_tokens = 1;
    } else if (!strcmp(c->string, "usd") && !out->has_budget_usd) {
      if (!cJSON_IsNumber(c) || !(c->valuedouble >= 0) || c->valuedouble > 1e15)
        return fail(err, 422, "budget.usd: must be a number of dollars, 0 (no limit) or more");
      out->budget_usd = c->valuedouble;
      out->has_budget_usd = 1;
    } else {
      return fail(err, 422, "budget.%.64s: unknown or repeated field (expected tokens, usd)", c->string);
    }
  }
  return 0;
}

/* The body (or, for PATCH of a world, its fields but budget) kept whole for the world file's readers. */
static int take_doc(serve_route_id route, const cJSON *j, serve_body *out) {
  if (!(out->doc = cJSON_Duplicate(j, 1))) return AG_ERR_NOMEM;
  if (route == SR_WORLD) cJSON_DeleteItemFromObjectCaseSensitive(out->doc, "budget");
  if (route == SR_WORLD && !out->doc->child) cJSON_Delete(out->doc), out->doc = NULL;
  return 0;
}

static int take_fields(serve_route_id route, const cJSON *j, serve_body *out, char *err) {
  const cJSON *v;
  int rc = 0;
  if (route == SR_WORLDS || route == SR_AGENTS || route == SR_AGENT) return take_doc(route, j, out);
  if (route == SR_MESSAGES || route == SR_CHAT_MESSAGE) {
    rc = take_string(cJSON_GetObjectItemCaseSensitive(j, "text"), "text", SERVE_BODY_MAX, &out->text, err);
    if (!rc && (v = cJSON_GetObjectItemCaseSensitive(j, "chat")))
      rc = take_string(v, "chat", SERVE_ID_MAX - 1, &out->chat, err);
  } else if (route == SR_CHAT) {
    rc = take_string(cJSON_GetObjectItemCaseSensitive(j, "title"), "title", 512, &out->title, err);
  } else if (route == SR_CHAT_BRANCH) {
    int64_t at = 0;
    if (ag_json_int(cJSON_GetObjectItemCaseSensitive(j, "at"), 1, INT64_MAX, &at))
      return fail(err, 422, "at: must be a message number (a whole number, 1 or more)");
    out->at = (uint64_t)at;
  } else if (route == SR_WORLD) {
    if ((v = cJSON_GetObjectItemCaseSensitive(j, "budget"))) rc = take_budget(v, out, err);
    if (!rc) rc = take_doc(route, j, out);
  } else if (route == SR_APPROVAL) {
    v = cJSON_GetObjectItemCaseSensitive(j, "allow");
    if (!cJSON_IsBool(v)) return fail(err, 422, "allow: must be true or false");
    out->allow = cJSON_IsTrue(v);
    if ((v = cJSON_GetObjectItemCaseSensitive(j, "answer")))
      rc = take_string(v, "answer", SERVE_BODY_MAX, &out->answer, err);
  }
  return rc;
}

int serve_body_parse(serve_route_id route, int method, const char *body, size_t len, serve_body *out, char *err) {
  memset(out, 0, sizeof *out);
  err[0] = '\0';
  body_shape sh = shape_of(route, method);
  size_t i = 0;
  while (i < len && (body[i] == ' ' || body[i] == '\n' || body[i] == '\r' || body[i] == '\t')) i++;
  if (i == len && !sh.required && !sh.any && !sh.open) return 0; /* no body where none is needed */
  cJSON *j = NULL;
  int rc = serve_json_parse(body, len, &j, err);
  if (rc) return rc;
  if (!cJSON_IsObject(j)) rc = fail(err, 400, "the request body must be a JSON object");
  if (!rc) rc = check_keys(j, &sh, err);
  if (!rc) rc = take_fields(route, j, out, err);
  cJSON_Delete(j);
  if (rc) serve_body_free(out);
  if (rc == AG_ERR_NOMEM) fail(err, 500, "out of memory");
  return rc;
}

void serve_body_free(serve_body *b) {
  free(b->text);
  free(b->chat);
  free(b->title);
  free(b->answer);
  cJSON_Delete(b->doc);
  memset(b, 0, sizeof *b);
}

/* host without its port: "127.0.0.1:8080" -> "127.0.0.1", "[::1]:80" -> "::1"; into out (cap bytes). */
static void host_name(const char *host, char *out, size_t cap) {
  size_t n;
  if (host[0] == '[') {
    host++;
    n = strcspn(host, "]");
  } else {
    n = strcspn(host, ":");
  }
  if (n >= cap) n = cap - 1;
  memcpy(out, host, n);
  out[n] = '\0';
}

static int name_is_loopback(const char *name) {
  if (!strcasecmp(name, "localhost") || !strcmp(name, "::1")) return 1;
  unsigned a, b, c, d;
  char extra;
  return sscanf(name, "%u.%u.%u.%u%c", &a, &b, &c, &d, &extra) == 4 && a == 127 && b < 256 && c < 256 && d < 256;
}

int serve_check_origin(const char *host, const char *origin, int loopback_only, char *err) {
  if (!host || !host[0]) return fail(err, 403, "the request has no Host header");
  if (strlen(host) > 255) return fail(err, 403, "the Host header is too long");
  char name[256];
  host_name(host, name, sizeof name);
  if (loopback_only && !name_is_loopback(name))
    return fail(err, 403, "Host '%.64s' is not a loopback address (a token is needed to serve other names)", host);
  if (origin && (strncmp(origin, "http://", 7) || strcmp(origin + 7, host)))
    return fail(err, 403, "requests from another site (Origin '%.64s') are refused", origin);
  return 0;
}

int serve_check_fetch_site(const char *site, char *err) {
  if (site && (!strcasecmp(site, "cross-site") || !strcasecmp(site, "same-site")))
    return fail(err, 403, "requests made by another site's page (Sec-Fetch-Site: %.16s) are refused", site);
  return 0;
}

const char *serve_status_reason(int status) {
  switch (status) {
  case 200: return "OK";
  case 201: return "Created";
  case 202: return "Accepted";
  case 204: return "No Content";
  case 400: return "Bad Request";
  case 401: return "Unauthorized";
  case 403: return "Forbidden";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 409: return "Conflict";
  case 413: return "Payload Too Large";
  case 422: return "Unprocessable Entity";
  case 503: return "Service Unavailable";
  default: return "Internal Server Error";
  }
}

const char *serve_status_code(int status) {
  switch (status) {
  case 400: return "bad_request";
  case 401: return "unauthorized";
  case 403: return "forbidden";
  case 404: return "not_found";
  case 405: return "method_not_allowed";
  case 409: return "conflict";
  case 413: return "payload_too_large";
  case 422: return "invalid";
  case 503: return "unavailable";
  default: return "internal";
  }
}
