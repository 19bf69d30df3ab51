/* A chat's past changed over HTTP (issue 24): PUT …/messages/{seq} edits a human message and sends it
 * again, DELETE …/messages/{seq} takes it and those after it away, POST …/retry sends the last human
 * message again. The console's /edit and /retry semantics, from the same calls (agora_chat_edit, _retry,
 * _cut): only in the current chat, only when no reply is in flight (409 otherwise). */
#include "serve/serve_int.h"

#include <stdio.h>
#include <string.h>

/* The chat is this world's and its current one; else an error reply was sent (the library refuses a cut
 * of a world on NATS's stream itself). */
static int editable(serve *s, serve_world *sw, const serve_match *m, struct evhttp_request *req) {
  char chat[AGORA_ID_MAX];
  if (serve_chat_of(s, m->world, m->chat, chat, NULL, req)) return AGORA_ERR_NOT_FOUND;
  const char *cur = agora_chat_current(sw->w);
  if (!cur || strcmp(cur, chat))
    return serve_reply_error(req, 409, "chat '%s' is not the current chat: select it first", m->chat), AGORA_ERR_STATE;
  return AGORA_OK;
}

void serve_edit_handle(serve *s, serve_world *sw, struct evhttp_request *req, const serve_match *m, int method,
                       const serve_body *b) {
  if (editable(s, sw, m, req)) return;
  uint64_t kept = 0;
  int rc;
  if (m->route == SR_CHAT_RETRY) rc = agora_chat_retry(sw->w, &kept);
  else if (method == SERVE_PUT) rc = agora_chat_edit(sw->w, m->seq, b->text, &kept);
  else kept = m->seq - 1, rc = agora_chat_cut(sw->w, m->seq);
  if (rc) return serve_reply_lib(req, rc, m->world);
  /* Every page showing the chat shows it again (as after a select): the messages after the cut are gone. */
  serve_world_chat_loaded(sw);
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "chat", m->chat);
  cJSON_AddNumberToObject(j, "kept", (double)kept);
  /* The message sent again follows the last one kept (the world's seq was rewound to it). */
  if (method != SERVE_DELETE) cJSON_AddNumberToObject(j, "seq", (double)(kept + 1));
  serve_reply_json(req, method == SERVE_DELETE ? 200 : 202, j);
}
