/* GET /api/worlds/{w}/chats/{c}/agents/{name}/memory[?query=TEXT] (docs/serve.md, docs/memory.md): what an
 * agent remembers, read from the world the server has open, in the chat it has open. A GET changes
 * nothing: a world that is not loaded is not loaded for it, and another chat is not opened for it; a
 * hosted embedder is not sent the query (relevance_left_out says so: docs/decisions.md). */
#include "serve/serve_int.h"

#include <string.h>

void serve_memory_reply(serve *s, struct evhttp_request *req, const serve_match *m) {
  char query[SERVE_QUERY_MAX], err[SERVE_ERR_MAX], chat[AGORA_ID_MAX], *text = NULL;
  int has_query = 0;
  if (serve_query_str(m->query, "query", query, &has_query, err)) return serve_reply_error(req, 400, "%s", err);
  serve_world *sw = serve_world_find(s, m->world);
  if (!sw) return serve_reply_error(req, 409, "world '%s' is not open: memories are read from an open world", m->world);
  int rc = agora_db_chat_id(s->db, m->chat, chat);
  if (rc) return serve_reply_lib(req, rc, m->world);
  const char *current = agora_chat_current(sw->w);
  if (!current || strcmp(current, chat))
    return serve_reply_error(req, 409, "chat '%s' is not the one world '%s' has open (%s): select it first", chat,
                             m->world, current ? current : "none");
  if ((rc = agora_memories(sw->w, m->name, has_query && query[0] ? query : NULL, &text)))
    return serve_reply_lib(req, rc, m->world);
  cJSON *j = serve_lib_json(text);
  if (!j) return serve_reply_error(req, 500, "out of memory");
  serve_reply_json(req, 200, j);
}
