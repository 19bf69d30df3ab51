/* What `agora serve` makes of a request before anything is done with it: the route and its ids from the
 * method and URI, query numbers, and each route's JSON body checked field by field. Pure (no loop, no
 * store): the libFuzzer harness fuzz/fuzz_http_api.c drives it directly. */
#ifndef AG_CLI_SERVE_ROUTE_H
#define AG_CLI_SERVE_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#define SERVE_ID_MAX 65          /* a world or chat id in a path, NUL included (CHAT_ID_MAX) */
#define SERVE_BODY_MAX (1u << 20) /* bytes of a request body (a larger one is 413) */
#define SERVE_ERR_MAX 256

/* Methods as a mask, so that a route can say which ones it takes (the Allow header of a 405). */
enum { SERVE_GET = 1, SERVE_POST = 2, SERVE_PATCH = 4, SERVE_DELETE = 8, SERVE_HEAD = 16, SERVE_OTHER = 32,
       SERVE_PUT = 64 };

typedef enum serve_route_id {
  SR_NONE = 0,
  SR_PAGE,          /* GET / */
  SR_HEALTHZ,       /* GET /healthz */
  SR_METRICS,       /* GET /metrics */
  SR_WORLDS,        /* GET, POST /api/worlds */
  SR_WORLD,         /* GET, PATCH, DELETE /api/worlds/{w} */
  SR_WORLD_LOAD,    /* POST /api/worlds/{w}/load */
  SR_CHATS,         /* GET, POST /api/worlds/{w}/chats */
  SR_CHAT,          /* DELETE, PATCH /api/worlds/{w}/chats/{c} */
  SR_CHAT_SELECT,   /* POST /api/worlds/{w}/chats/{c}/select */
  SR_CHAT_MESSAGES, /* GET /api/worlds/{w}/chats/{c}/messages */
  SR_CHAT_SNAPSHOT, /* GET /api/worlds/{w}/chats/{c}/snapshot */
  SR_CHAT_BRANCH,   /* POST /api/worlds/{w}/chats/{c}/branch */
  SR_MESSAGES,      /* POST /api/worlds/{w}/messages */
  SR_CANCEL,        /* POST /api/worlds/{w}/cancel */
  SR_EVENTS,        /* GET /api/worlds/{w}/events (SSE) */
  SR_SNAPSHOTS,     /* POST /api/snapshots */
  SR_APPROVAL,      /* POST /api/approvals/{id} */
  SR_ASSET,         /* GET /assets/{name}: the page's scripts (embedded at build time) */
  SR_OPENAPI,       /* GET /api/openapi.json: docs/openapi.json (embedded at build time) */
  SR_WORLD_EXPORT,  /* GET /api/worlds/{w}/export?format=md */
  SR_CHAT_EXPORT,   /* GET /api/worlds/{w}/chats/{c}/export?format=md */
  SR_CHAT_SEARCH,   /* GET /api/worlds/{w}/chats/{c}/search?q=TEXT */
  SR_CHAT_USAGE,    /* GET /api/worlds/{w}/chats/{c}/usage */
  SR_AGENTS,        /* POST /api/worlds/{w}/agents */
  SR_AGENT,         /* PATCH, DELETE /api/worlds/{w}/agents/{name} */
  SR_CHAT_MESSAGE,  /* PUT, DELETE /api/worlds/{w}/chats/{c}/messages/{seq} */
  SR_CHAT_RETRY,    /* POST /api/worlds/{w}/chats/{c}/retry */
  SR_MCP,           /* GET /api/worlds/{w}/mcp */
  SR_MCP_RESTART,   /* POST /api/worlds/{w}/mcp/{server}/restart */
  SR_CHAT_GRAPH     /* GET /api/worlds/{w}/chats/{c}/graph: what the page's pictures draw */
} serve_route_id;

typedef struct serve_match {
  serve_route_id route;
  int allowed;                /* the methods the route takes */
  char world[SERVE_ID_MAX];   /* percent-decoded path segments ("" when the route has none) */
  char chat[SERVE_ID_MAX];
  uint64_t approval;
  char asset[SERVE_ID_MAX];   /* SR_ASSET: the file's name */
  char name[SERVE_ID_MAX];    /* SR_AGENT: the agent (name or id); SR_MCP_RESTART: the server */
  uint64_t seq;               /* SR_CHAT_MESSAGE: the message number (1 or more) */
  const char *query;          /* into the URI given (after '?'), or NULL */
} serve_match;

/* The method's mask bit from its name ("GET", ...); SERVE_OTHER for any other. */
int serve_method_parse(const char *name);

/* Matches method (a mask bit) and uri (borrowed: out->query points into it) against the routes.
 * Returns 0, 404 (no route; out->route SR_NONE), 405 (the route exists, not with this method:
 * out->allowed says which) or 400 (a bad path segment: bad escape, empty, too long, a NUL or '/');
 * err (SERVE_ERR_MAX bytes) says why for 400/404/405. HEAD is taken wherever GET is. */
int serve_route_match(int method, const char *uri, serve_match *out, char *err);

/* The query parameter key of query (may be NULL) as a number into *out; *present says whether it was
 * there. 0, or 400 with err naming the parameter when its value is no decimal number in [0, 2^53]. */
int serve_query_u64(const char *query, const char *key, uint64_t *out, int *present, char *err);

/* A request body, checked for its route; strings owned (serve_body_free). */
typedef struct serve_body {
  char *text;      /* SR_MESSAGES: the message (non-empty, at most 1 MiB, valid UTF-8, no NUL) */
  char *chat;      /* SR_MESSAGES: the chat to post in (NULL: the current one) */
  char *title;     /* SR_CHAT (PATCH): the new title */
  uint64_t at;     /* SR_CHAT_BRANCH: the last message the branch keeps (1 or more) */
  int allow;       /* SR_APPROVAL: the answer */
  char *answer;    /* SR_APPROVAL: an ask_human question's answer text (NULL: none given) */
  /* SR_WORLD (PATCH) {"budget": {"tokens": N, "usd": X}}: the limits given (has_*), 0 meaning none */
  int has_budget_tokens, has_budget_usd;
  int64_t budget_tokens;
  double budget_usd;
  /* SR_WORLDS (POST): the world document; SR_AGENTS (POST): the agent; SR_AGENT (PATCH): the fields
   * given; SR_WORLD (PATCH): its settings fields but budget (NULL when none). Owned; checked later by
   * the world file's own readers (world/world_file.h), which name the JSON path. */
  struct cJSON *doc;
} serve_body;

#define SERVE_QUERY_MAX 256 /* bytes of a decoded query string value (a search), NUL included */
/* The value of key in query (may be NULL), percent-decoded ('+' is a space) into out (SERVE_QUERY_MAX);
 * *present says whether it was there (the last one counts). 0, or 400 with err for a bad escape, a NUL,
 * invalid UTF-8 or a value too long. */
int serve_query_str(const char *query, const char *key, char out[SERVE_QUERY_MAX], int *present, char *err);

/* Parses and checks body (len bytes, need not be NUL-terminated) for route and method (a mask bit). Returns 0; 400 when it is
 * not one JSON object (malformed, trailing bytes, a NUL, duplicate keys); 422 when a field is missing,
 * unknown or of the wrong type or value; 413 past SERVE_BODY_MAX; AG_ERR_NOMEM (<0). err says which
 * field and why. Routes that take no body accept an empty one or "{}". */
int serve_body_parse(serve_route_id route, int method, const char *body, size_t len, serve_body *out, char *err);
/* body as one strict JSON document (the rules above) into *out (caller frees); 0, 400 or 413. */
struct cJSON;
int serve_json_parse(const char *body, size_t len, struct cJSON **out, char *err);
void serve_body_free(serve_body *b);

/* Cross-site and DNS-rebinding checks of a request's headers (either may be NULL when absent): 0 when
 * it may go on, else 403 with err saying why. An Origin must be "http://" + Host (a page of another
 * site cannot drive the server through the visitor's browser); without a token (loopback_only 1) Host
 * must name a loopback address (127.0.0.0/8, localhost, [::1], with or without a port), so that a
 * hostile name resolved to 127.0.0.1 gets nothing. */
int serve_check_origin(const char *host, const char *origin, int loopback_only, char *err);

/* The Sec-Fetch-Site header of a request (NULL when absent, as from curl and scripts): 0 when it may go
 * on, else 403 with err saying why. A browser says "cross-site" or "same-site" for a request another
 * site's page made (an <img>, a form, a script): refused on every route but the page, since even a
 * GET of a stranger's page must not reach the API. "same-site" is refused too: another port of
 * 127.0.0.1 is the same site. */
int serve_check_fetch_site(const char *site, char *err);

/* The HTTP reason phrase of the statuses the server answers with. */
const char *serve_status_reason(int status);
/* The error code word of an error status ("bad_request", "not_found", ...). */
const char *serve_status_code(int status);

#endif
