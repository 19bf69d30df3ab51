/* A chat's past changed over HTTP (issue 24): PUT …/messages/{seq} edits a human message and sends it
 * again, DELETE …/messages/{seq} takes it and those after it away, POST …/retry sends the last human
 * message again. The console's /edit and /retry semantics, from the same code (chat/resend.h): only in
 * the current chat, only when no reply is in flight (409 otherwise). */
#include "serve/serve_int.h"

#include "chat/resend.h"

#include <stdio.h>
#include <string.h>

/* The chat is this world's and its current one, and may be cut; else an error reply was sent. */
static int editable(serve *s, serve_world *sw, const serve_match *m, struct evhttp_request *req) {
  chat_info c;
  ag_errmsg em = {""};
  int rc = chat_info_get(s->st, m->chat, &c, &em);
  if (!rc && strcmp(c.world_id, m->world)) rc = ag_fail(&em, AG_ERR_NOT_FOUND, "no chat '%s' in world '%s'", m->chat, m->world);
  if (rc) return serve_reply_fail(req, rc, &em), rc;
  const char *cur = chat_session_current(sw->cs), *refused = rt_nats_refuses(sw->nats, "truncate", m->chat);
  if (refused) return serve_reply_error(req, 409, "%s", refused), AG_ERR_STATE;
  if (!cur || strcmp(cur, m->chat))
    return serve_reply_error(req, 409, "chat '%s' is not the current chat: select it first", m->chat), AG_ERR_STATE;
  return AG_OK;
}

void serve_edit_handle(serve *s, serve_world *sw, struct evhttp_request *req, const serve_match *m, int method,
                       const serve_body *b) {
  if (editable(s, sw, m, req)) return;
  ag_errmsg em = {""};
  uint64_t kept = 0;
  int rc;
  if (m->route == SR_CHAT_RETRY) rc = chat_resend_retry(sw->cs, &kept, &em);
  else if (method == SERVE_PUT) rc = chat_resend_edit(sw->cs, m->seq, b->text, &kept, &em);
  else kept = m->seq - 1, rc = chat_resend_cut(sw->cs, m->seq, &em);
  if (rc) return serve_reply_fail(req, rc, &em);
  /* Every page showing the chat shows it again (as after a select): the messages after the cut are gone. */
  chat_info c;
  if (!chat_info_get(s->st, m->chat, &c, &em))
    serve_world_announce(sw, &(world_event){EV_CHAT_LOADED, .u.chat_open = {c.id, c.title, c.message_count}});
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "chat", m->chat);
  cJSON_AddNumberToObject(j, "kept", (double)kept);
  /* The message sent again follows the last one kept (the world's seq was rewound to it). */
  if (method != SERVE_DELETE) cJSON_AddNumberToObject(j, "seq", (double)(kept + 1));
  serve_reply_json(req, method == SERVE_DELETE ? 200 : 202, j);
}
