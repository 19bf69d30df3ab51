/* agora serve's insides, shared by its files: serve.c (the command, start and stop), serve_http.c
 * (requests: auth, routing, replies), serve_api.c (the JSON API: worlds, dispatch), serve_chats.c (chats,
 * messages, snapshots), serve_worlds.c (the hosted worlds, their streams and approvals), serve_lib.c
 * (libagora's answers in HTTP terms), serve_read.c (exports and search), serve_sse.c (event streams),
 * serve_conn.c (connections: caps and timeouts), serve_metrics.c (/healthz, /metrics). Everything of a
 * world goes through include/agora.h (test_layers checks it). Not for use outside these files. */
#ifndef AG_CLI_SERVE_INT_H
#define AG_CLI_SERVE_INT_H

#include "agora.h"
#include "common/error.h"
#include "serve/serve.h"
#include "serve/serve_route.h"
#include "serve/serve_sse.h"

#include <cjson/cJSON.h>
#include <event2/http.h>
#include <stdint.h>

typedef struct serve serve;
typedef struct serve_conns serve_conns;

/* A world the server hosts: opened with agora_world_open on the server's loop, with its event stream. */
typedef struct serve_world {
  serve *srv;
  agora_world *w; /* owned: closed by serve_world_unload and at the stop */
  sse_hub *hub;
  /* The stream's position: the chat of the last frame and its last message then (the frames' ids). */
  char chat[AGORA_ID_MAX];
  uint64_t seq;
  /* The last turns-resumed event (replies re-run after a crash, issue 23 item 6): a page that opens the
   * chat later still shows it (GET /api/worlds/ID "resumed"). resumed_chat "" when none. */
  char resumed_chat[AGORA_ID_MAX], resumed_agents[256];
  size_t resumed_replies;
  int named;          /* named on the command line (the page opens the first of those) */
} serve_world;

/* A tool approval (or ask_human question) waiting for an answer over HTTP. Ids are the server's own,
 * so that one number names a request whichever world asked it. */
typedef struct serve_ask {
  uint64_t id, local; /* the server's id, the world's */
  serve_world *sw;
  char *agent, *tool, *args, *question; /* owned; question NULL for an approval */
} serve_ask;

struct serve {
  struct event_base *base;
  struct evhttp *http;
  struct evhttp_bound_socket *bound;
  agora_db *db;     /* the database the worlds of the loop share (agora_loop_db; owned) */
  const char *db_dir; /* --db (NULL: the default) */
  agora_options open; /* the command line's library options (pointers borrowed from serve_opts) */
  char *token; /* owned; NULL: no token needed (loopback without one) */
  serve_world **worlds;
  size_t n_worlds;
  serve_ask *asks;
  size_t n_asks, cap_asks;
  uint64_t next_ask;
  uint64_t boot; /* this run's id in event ids */
  uint64_t requests;
  struct event *sig[2], *heartbeat;
  int stopping;
  struct serve_conns *conns; /* serve_conn.c */
  size_t max_conns, max_streams; /* --max-connections, --max-streams */
  long request_timeout_ms;       /* for a connection's first request to arrive whole */
  size_t unsaved;          /* messages the worlds could not save (a full disk): reported at stop */
  size_t closing;          /* worlds closing at the stop (agora_world_close_later) */
  int close_failed;        /* one of them could not store or sync what it had */
  char storage_error[256]; /* the last storage error, for that report */
};

/* serve_worlds.c */
/* The hosted world id: already loaded, or loaded from the database now (its current chat resumed).
 * A libagora code (agora_errmsg says why): AGORA_ERR_NOT_FOUND when the database has no such world. */
int serve_world_get(serve *s, const char *id, serve_world **out);
/* The hosted world id when it is loaded, else NULL (nothing is opened: a GET answers from storage). */
serve_world *serve_world_find(serve *s, const char *id);
/* Loads a world file (stored, its current chat resumed, a new one when it has none); as serve_world_get. */
int serve_world_add_file(serve *s, const char *path);
/* Stops serving sw, which must be quiet (no reply in flight, no MCP server running): its approvals and
 * streams end, and the world is closed and freed. */
void serve_world_unload(serve *s, serve_world *sw);
/* Cancels every reply in flight and runs the loop until every world is quiet (so saved). */
void serve_worlds_settle(serve *s);
/* Closes every world (settle first) and runs the loop until they are closed, their chats synced; what
 * could not be saved adds to s->unsaved (s->close_failed). Their streams stay, for the last frames. */
void serve_worlds_close(serve *s);
/* Frees the streams and records of the worlds closed. */
void serve_worlds_free(serve *s);
/* A frame of the server's own (j, taken: approval-ended, approval), into the world's stream like the
 * world's events, at the stream's position in the current chat. */
void serve_world_frame(serve_world *sw, cJSON *j);
/* A chat-loaded event for the world's current chat (after a select, an edit, a new chat): every page
 * showing the world shows that chat again. */
void serve_world_chat_loaded(serve_world *sw);
/* The number of the current chat's last stored message (0: none, or no current chat). */
uint64_t serve_world_last_seq(serve_world *sw);
/* Cancels sw's replies in flight (the library's cancelled event names the agents). */
void serve_world_cancel(serve_world *sw);
/* A pending request as the stream and GET /api/worlds/{id} show it (caller owns). */
cJSON *serve_ask_json(const serve_ask *a, const char *chat);
/* Answers approval id (text: an ask_human answer, may be NULL). 0, AG_ERR_NOT_FOUND (never asked),
 * AG_ERR_STATE (answered already, or withdrawn). */
int serve_approval_answer(serve *s, uint64_t id, int allow, const char *text);

/* serve_http.c */
#define SERVE_IDLE_S 60 /* seconds a connection may stay idle between requests */
int serve_http_start(serve *s, const char *listen, ag_errmsg *em);
/* Stops taking new connections. */
void serve_http_stop_accepting(serve *s);
void serve_reply_json(struct evhttp_request *req, int status, cJSON *j); /* takes j */
void serve_reply_error(struct evhttp_request *req, int status, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
/* The status an ag_err answers with (404 not found, 409 state, 422 invalid, 413 too big, else 500). */
int serve_status_of(int err);
/* ag_err rc as the error reply, em's text (or the code's words when em is empty) as its message. */
void serve_reply_fail(struct evhttp_request *req, int rc, const ag_errmsg *em);
/* A libagora call's failure rc as the error reply, with agora_errmsg()'s text said for HTTP: the
 * library's function name left out, its advice in the API's words (world: the request's world). */
void serve_reply_lib(struct evhttp_request *req, int rc, const char *world);
/* libagora's JSON text (taken: agora_free) parsed; NULL when it does not parse or memory ran out. */
cJSON *serve_lib_json(char *text);

/* serve_conn.c: the connections open, capped (s->max_conns), each cut when its first request has not
 * arrived whole within s->request_timeout_ms; accepting pauses while descriptors run out. */
/* Before binding: every connection evhttp accepts is seen. */
int serve_conns_start(serve *s, ag_errmsg *em);
/* After binding: accept errors (out of descriptors) pause accepting, logged once a second. */
void serve_conns_listen(serve *s);
/* A request arrived whole on its connection: 1 when the connection is past the cap (answer 503). */
int serve_conn_request(serve *s, struct evhttp_request *req);
/* The close callback of every connection (arg: the serve): an event stream's chains to it. */
void serve_conn_closed(struct evhttp_connection *evcon, void *arg);
size_t serve_conns_open(const serve *s);
/* After evhttp_free. */
void serve_conns_free(serve *s);

/* serve_api.c: the JSON API; body is the request's (len bytes). */
void serve_api_handle(serve *s, struct evhttp_request *req, const serve_match *m, int method, const char *body,
                      size_t len);
/* serve_chats.c: GET/POST …/chats, …/chats/{chat} (PATCH, DELETE, select, branch), GET …/messages and
 * …/snapshot, POST …/messages and …/cancel. sw is the world when it is loaded, else NULL (the reads only);
 * a reply is always sent. */
void serve_chats_handle(serve *s, serve_world *sw, struct evhttp_request *req, const serve_match *m, int method,
                        const serve_body *b);
/* POST /api/snapshots: a snapshot document imported as a new chat of its world. */
void serve_snapshot_post(serve *s, const char *body, size_t len, struct evhttp_request *req);

/* serve_read.c: GET …/export?format=md (a world, a chat), GET …/chats/{chat}/search and
 * GET …/chats/{chat}/usage, from the database alone (no world is loaded for them). */
void serve_read_handle(serve *s, struct evhttp_request *req, const serve_match *m);
/* The chat chat names (its id or a unique prefix), of world: its id into id and, when row is not NULL,
 * its row as agora_db_chat_info gives it into *row (the caller's). 0, or an error reply was sent (404
 * when it is another world's). */
int serve_chat_of(serve *s, const char *world, const char *chat, char id[AGORA_ID_MAX], cJSON **row,
                  struct evhttp_request *req);
/* GET …/chats/{chat}/graph (serve_graph.c). */
void serve_graph_handle(serve *s, struct evhttp_request *req, const serve_match *m);
/* serve_memory.c: GET .../chats/{c}/agents/{name}/memory?query=TEXT (docs/serve.md). */
void serve_memory_reply(serve *s, struct evhttp_request *req, const serve_match *m);

/* serve_build.c: building and changing worlds over HTTP (issue 24): POST /api/worlds, PATCH (its
 * settings) and DELETE /api/worlds/{id}, POST/PATCH/DELETE …/agents[/{name}], GET …/mcp and POST
 * …/mcp/{server}/restart. sw is the world when it is loaded, else NULL; a reply is always sent. */
void serve_build_handle(serve *s, serve_world *sw, struct evhttp_request *req, const serve_match *m, int method,
                        const serve_body *b);
/* PATCH /api/worlds/{id}'s settings but budget (doc, the body's) made to the loaded world sw: checked as
 * a world file, applied, stored (agora_settings_change). AGORA_ERR_STATE while replies are in flight,
 * AGORA_ERR_INVALID (agora_errmsg names the path). */
int serve_world_settings_set(serve_world *sw, const cJSON *doc);
/* serve_edit.c: PUT/DELETE …/chats/{chat}/messages/{seq} and POST …/chats/{chat}/retry (chat/resend.h). */
void serve_edit_handle(serve *s, serve_world *sw, struct evhttp_request *req, const serve_match *m, int method,
                       const serve_body *b);
/* serve_api.c: answers with world id, not loaded, as GET /api/worlds/{id} shows it, with status. */
void serve_world_reply_stored(serve *s, const char *id, int status, struct evhttp_request *req);
/* serve_mcp.c: GET /api/worlds/{id}/mcp (sw NULL: the world is not loaded, read from the database) and
 * POST …/mcp/{server}/restart. */
void serve_mcp_reply(serve *s, serve_world *sw, struct evhttp_request *req, const serve_match *m);

/* serve_metrics.c */
void serve_metrics_reply(serve *s, struct evhttp_request *req);

/* Generated at build time by cmake/embed.cmake: the page (serve/serve_page.html), its script
 * (serve/serve_app.js), and the Markdown renderer and sanitiser it uses (Debian's libjs-marked and
 * node-dompurify), served as /assets/NAME. */
extern const char serve_page_html[];
extern const unsigned long serve_page_html_len;
extern const char serve_app_js[];
extern const unsigned long serve_app_js_len;
extern const char serve_openapi_json[]; /* docs/openapi.json: the API's OpenAPI 3.1 document */
extern const unsigned long serve_openapi_json_len;
extern const char serve_actions_js[];
extern const unsigned long serve_actions_js_len;
extern const char serve_agents_js[]; /* the page's agents panel, windowed (serve/serve_agents.js) */
extern const unsigned long serve_agents_js_len;
extern const char serve_marked_js[];
extern const unsigned long serve_marked_js_len;
/* The page's pictures (serve/serve_graphs.js) and the library that draws them (Debian's node-d3). */
extern const char serve_graphs_js[], serve_d3_js[];
extern const unsigned long serve_graphs_js_len, serve_d3_js_len;
extern const char serve_purify_js[];
extern const unsigned long serve_purify_js_len;

#endif
