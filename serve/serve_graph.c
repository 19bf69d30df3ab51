/* GET /api/worlds/{w}/chats/{c}/graph: what the page's pictures draw of a stored chat (docs/serve.md),
 * made by libagora's agora_db_chat_graph (chat/graph_json.c). No world is loaded for it. */
#include "serve/serve_int.h"

/* Nodes and points per picture: the defaults and the most agora_db_chat_graph takes. */
enum { GRAPH_NODES = 50, GRAPH_NODES_MAX = 500, GRAPH_POINTS = 100, GRAPH_POINTS_MAX = 1000 };

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
  char chat[AGORA_ID_MAX], *text = NULL;
  uint64_t n_nodes, points;
  if (query_count(m, "nodes", GRAPH_NODES, GRAPH_NODES_MAX, &n_nodes, req) ||
      query_count(m, "points", GRAPH_POINTS, GRAPH_POINTS_MAX, &points, req) ||
      serve_chat_of(s, m->world, m->chat, chat, NULL, req))
    return;
  int rc = agora_db_chat_graph(s->db, chat, (size_t)n_nodes, (size_t)points, &text);
  if (rc) return serve_reply_lib(req, rc, m->world);
  cJSON *j = serve_lib_json(text);
  if (!j) return serve_reply_error(req, 500, "out of memory");
  serve_reply_json(req, 200, j);
}
