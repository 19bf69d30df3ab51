/* GET /api/worlds/{w}/chats/{c}/agents/{name}/memory[?query=TEXT] (docs/serve.md, docs/memory.md): what an
 * agent remembers, read from the world the server has open, in the chat it has open. A GET changes
 * nothing: a world that is not loaded is not loaded for it, and another chat is not opened for it; a
 * hosted embedder is not sent the query (relevance_left_out says so: docs/decisions.md). */
#include "serve/serve_int.h"

#include "chat/id_prefix.h"
#include "world/world_memory.h"

#include <string.h>

void serve_memory_reply(serve *s, struct evhttp_request *req, const serve_match *m) {
  char query[SERVE_QUERY_MAX], err[SERVE_ERR_MAX], chat[CHAT_ID_MAX];
  int has_query = 0;
  if (serve_query_str(m->query, "query", query, &has_query, err)) return serve_reply_error(req, 400, "%s", err);
  serve_world *sw = serve_world_find(s, m->world);
  if (!sw) return serve_reply_error(req, 409, "world '%s' is not open: memories are read from an open world", m->world);
  ag_errmsg em = {""};
  int rc = chat_id_resolve(s->st, m->chat, chat, &em);
  if (rc) return serve_reply_error(req, serve_status_of(rc), "%s", em.text);
  const char *current = chat_session_current(sw->cs);
  if (!current || strcmp(current, chat))
    return serve_reply_error(req, 409, "chat '%s' is not the one world '%s' has open (%s): select it first", chat,
                             m->world, current ? current : "none");
  cJSON *list = NULL;
  if ((rc = world_memory_list(sw->w, m->name, has_query && query[0] ? query : NULL, NULL, &list, &em)))
    return serve_reply_error(req, serve_status_of(rc), "%s", em.text);
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "chat", chat);
  cJSON_AddStringToObject(j, "agent", m->name);
  if (has_query && query[0]) cJSON_AddStringToObject(j, "query", query);
  const char *why = has_query && query[0] ? world_memory_no_relevance(sw->w, m->name) : NULL;
  if (why) cJSON_AddStringToObject(j, "relevance_left_out", why);
  cJSON_AddItemToObject(j, "memories", list);
  serve_reply_json(req, 200, j);
}
