/* GET /api/worlds/{w}/chats/{c}/graph: what the page's pictures draw of a stored chat (docs/serve.md),
 * made by chat/graph_json.c (shared with libagora's agora_db_chat_graph). No world is loaded for it. */
#include "serve/serve_int.h"

#include "chat/graph_json.h"

/* ?name= as a number in [1, max], def when absent; 0, or a 400 was sent. */
static int query_count(const serve_match *m, const char *name, uint64_t def, uint64_t max, uint64_t *out,
                       struct evhttp_request *req) {
  char err[SERVE_ERR_MAX];
  int has;
  *out = def;
  if (serve_query_u64(m->query, name, out, &has, err)) return serve_reply_error(req, 400, "%s", err), -1;
  if (*out < 1 || *out > max) return serve_reply_error(req, 400, "%s: 1 to %llu", name, (unsigned long long)max), -1;
  return 0;
}

void serve_graph_handle(serve *s, struct evhttp_request *req, const serve_match *m) {
  chat_info c;
  uint64_t n_nodes, points;
  if (query_count(m, "nodes", GRAPH_NODES, GRAPH_NODES_MAX, &n_nodes, req) ||
      query_count(m, "points", GRAPH_POINTS, GRAPH_POINTS_MAX, &points, req) || serve_read_chat_of(s, m, &c, req))
    return;
  cJSON *j = NULL;
  ag_errmsg em = {""};
  int rc = chat_graph_json(s->st, c.id, (size_t)n_nodes, (size_t)points, &j, &em);
  if (rc) return serve_reply_error(req, serve_status_of(rc), "%s", em.text[0] ? em.text : "out of memory");
  serve_reply_json(req, 200, j);
}
