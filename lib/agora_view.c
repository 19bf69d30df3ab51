/* libagora: a world joined over NATS JetStream as a viewer (AGORA_VIEW, API version 7; what `agora
 * console --nats` does, docs/distributed.md): the stream's chat is current and followed, a person's chat
 * operations are refused where the other processes would not follow, and the ones that may run are
 * recorded for every process (runtime/nats_join.h). */
#include "lib/agora_int.h"

#include "chat/archive.h"
#include "runtime/nats_join.h"

int agora__local_only(agora_world *w, const char *fn, ag_errmsg *em) {
  if (!rt_join(w->rt)) return AG_OK;
  return ag_fail(em, AG_ERR_STATE, "%s: not available on a world joined over NATS: change the world file and "
                 "restart its hosts", fn);
}

int agora__view_refuses(agora_world *w, const char *fn, const char *op, const char *chat, ag_errmsg *em) {
  const char *why = rt_nats_refuses(rt_join(w->rt), op, chat);
  return why ? ag_fail(em, AG_ERR_STATE, "%s: %s", fn, why) : AG_OK;
}

int agora__view_done(agora_world *w, const char *chat, const char *title, int record, ag_errmsg *em) {
  rt_nats_join *j = rt_join(w->rt);
  if (record) rt_nats_join_record(j, chat, title); /* what a person did to a chat is every process's */
  return rt_nats_join_sync(j, em); /* a new current chat (new, a delete's fallback) is published into */
}

/* The stream moved to chat (another process started one, or deleted the current one): the subscribers
 * see a chat-loaded event, as after agora_chat_load. */
void agora__stream_chat(void *ud, const char *chat) {
  agora_world *w = ud;
  chat_info ci;
  ag_errmsg em = {""};
  store *st = rt_store(w->rt);
  if (!st || chat_info_get(st, chat, &ci, &em)) return;
  world_event e = {EV_CHAT_LOADED, .u.chat_open = {.id = ci.id, .title = ci.title, .messages = ci.message_count}};
  agora__dispatch_own(w, &e);
}
