/* A stored chat's graph as JSON, cut to a size a page can draw whatever the chat's length (agora serve's
 * GET …/chats/{chat}/graph and libagora's agora_db_chat_graph, docs/serve.md): the busiest senders and
 * the edges among them, tokens over time at a fixed number of points, the last simulated-time ticks. */
#ifndef AG_CHAT_GRAPH_JSON_H
#define AG_CHAT_GRAPH_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "chat/archive.h"

#define GRAPH_NODES 50   /* senders drawn by default (1 to GRAPH_NODES_MAX) */
#define GRAPH_NODES_MAX 500
#define GRAPH_POINTS 100 /* points of tokens over time by default (1 to GRAPH_POINTS_MAX) */
#define GRAPH_POINTS_MAX 1000

/* chat_id's (a full id) graph into *out (the caller's): {"chat","last_seq","nodes":[{"id","messages",
 * "input_tokens","output_tokens"}],"more_nodes","edges":[{"from","to","messages"}],"tokens":{"seqs",
 * "agents":[{"id","tokens"}]},"timeline":null|{"count","ticks":[{"seq","sim_ms","fire"}]}} with at most
 * nodes senders and points points (both within their bounds above). AG_ERR_NOT_FOUND for no such chat,
 * AG_ERR_NOMEM. */
int chat_graph_json(store *st, const char *chat_id, size_t nodes, size_t points, cJSON **out, ag_errmsg *em);

#endif
