/* A world's MCP servers over HTTP (issue 24): GET /api/worlds/{id}/mcp says which servers it has, whether
 * they were started (only for a world named as a file on the command line), each one's state, tools and
 * last error; POST …/mcp/{server}/restart starts one again. A world from the database never starts a
 * program (docs/architecture.md "The runtime"), so for it the route says why, and a restart is a 409. */
#include "serve/serve_int.h"

#include <string.h>

/* GET: {"started", "reason", "servers": [{"name", "transport", "state", "tools", "error"}]}. */
static void get_mcp(serve *s, serve_world *sw, struct evhttp_request *req, const char *id) {
  char *text = NULL;
  int rc = sw ? agora_mcp_servers(sw->w, &text) : agora_db_mcp_servers(s->db, id, &text);
  if (rc) return serve_reply_lib(req, rc, id);
  cJSON *j = serve_lib_json(text);
  if (!j) return serve_reply_error(req, 500, "out of memory");
  serve_reply_json(req, 200, j);
}

/* POST …/restart: 202 with the server's row (its state "starting"); the outcome comes on the stream. */
static void restart(serve_world *sw, struct evhttp_request *req, const serve_match *m) {
  char *text = NULL;
  int rc = agora_mcp_restart(sw->w, m->name);
  if (!rc) rc = agora_mcp_servers(sw->w, &text);
  if (rc) return serve_reply_lib(req, rc, m->world);
  cJSON *all = serve_lib_json(text), *row, *found = NULL;
  cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(all, "servers")) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(row, "name");
    if (!found && cJSON_IsString(name) && !strcmp(name->valuestring, m->name)) found = row;
  }
  if (found) cJSON_DetachItemViaPointer(cJSON_GetObjectItemCaseSensitive(all, "servers"), found);
  cJSON_Delete(all);
  if (!found) return serve_reply_error(req, 500, "out of memory");
  serve_reply_json(req, 202, found);
}

void serve_mcp_reply(serve *s, serve_world *sw, struct evhttp_request *req, const serve_match *m) {
  if (m->route == SR_MCP) return get_mcp(s, sw, req, m->world);
  restart(sw, req, m);
}
