/* A world's MCP servers over HTTP (issue 24): GET /api/worlds/{id}/mcp says which servers it has, whether
 * they were started (only for a world named as a file on the command line), each one's state, tools and
 * last error; POST …/mcp/{server}/restart starts one again. A world from the database never starts a
 * program (docs/architecture.md "The runtime"), so for it the route says why, and a restart is a 409. */
#include "serve/serve_int.h"

#include "runtime/mcp_status.h"

#include <stdlib.h>
#include <string.h>

/* GET: {"started", "reason", "servers": [{"name", "transport", "state", "tools", "error"}]}. */
static void get_mcp(serve *s, serve_world *sw, struct evhttp_request *req, const char *id) {
  world_spec stored;
  ag_errmsg em = {""};
  int rc = sw ? AG_OK : chat_world_spec(s->st, id, &stored, &em);
  if (rc) return serve_reply_fail(req, rc, &em);
  cJSON *j = sw ? rt_mcp_status_json(sw->rt, world_time_spec(sw->w)) : rt_mcp_status_json(NULL, &stored);
  if (!sw) world_spec_free(&stored);
  if (!j) return serve_reply_error(req, 500, "out of memory");
  serve_reply_json(req, 200, j);
}

/* POST …/restart: 202 with the server's row (its state "starting"); the outcome comes on the stream. */
static void restart(serve_world *sw, struct evhttp_request *req, const serve_match *m) {
  cJSON *row = NULL;
  ag_errmsg em = {""};
  int rc = rt_mcp_restart(sw->rt, m->world, m->name, &row, &em);
  if (rc) return serve_reply_fail(req, rc, &em);
  serve_reply_json(req, 202, row);
}

void serve_mcp_reply(serve *s, serve_world *sw, struct evhttp_request *req, const serve_match *m) {
  if (m->route == SR_MCP) return get_mcp(s, sw, req, m->world);
  restart(sw, req, m);
}
