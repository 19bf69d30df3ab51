/* Chat records of a NATS world and this database (see nats_chats.h). Only what a person does is
 * recorded (a title given, a chat deleted): what follows from the stream (a chat started, a title from
 * the first human words) comes out the same in every process by itself, and taking a record up never
 * records anything, so no record echoes between processes. */
#include "runtime/nats_chats.h"

#include "chat/archive.h"
#include "chat/title.h"
#include "cluster/chats.h"
#include "common/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rt_nats_chats {
  world *w;
  store *st;
  chat_session *cs;
  cluster_chats *k;
};

static void warn(const char *what, const char *chat, int rc, const ag_errmsg *em) {
  fprintf(stderr, "agora: chat records: cannot %s chat %s: %s\n", what, chat, em->text[0] ? em->text : ag_strerror(rc));
}

/* The bucket says chat was deleted (title NULL) or has this title. */
static void on_record(void *ud, const char *chat, const char *title, int64_t created_ms) {
  rt_nats_chats *n = ud;
  ag_errmsg em = {""};
  const char *cur = chat_session_current(n->cs);
  chat_info ci;
  int rc = AG_OK;
  if (!title) {
    /* The stream's chat stays (it is refused before it is recorded); a chat this copy lacks is done. */
    if ((cur && !strcmp(cur, chat)) || chat_info_get(n->st, chat, &ci, &em))
      return;
    if ((rc = chat_session_delete(n->cs, chat, &em))) warn("delete", chat, rc, &em);
    return;
  }
  int changed = 0;
  if ((rc = chat_session_adopt(n->cs, chat, title, created_ms, &changed, &em))) warn("record", chat, rc, &em);
}

int rt_nats_chats_title(rt_nats_chats *n, const char *chat, const char *title) {
  chat_info ci;
  ag_errmsg em = {""};
  int rc = chat_info_get(n->st, chat, &ci, &em);
  return rc ? rc : cluster_chats_put(n->k, chat, title, ci.created_at_ms);
}

int rt_nats_chats_deleted(rt_nats_chats *n, const char *chat) { return cluster_chats_delete(n->k, chat); }

int rt_nats_chats_open(world *w, store *st, chat_session *cs, const cluster_opts *o, rt_nats_chats **out,
                        ag_errmsg *em) {
  rt_nats_chats *n = calloc(1, sizeof *n);
  if (!n) return AG_ERR_NOMEM;
  n->w = w, n->st = st, n->cs = cs;
  int rc = cluster_chats_open(o, world_base(w), world_id(w), on_record, n, &n->k, em);
  if (rc) {
    rt_nats_chats_free(n);
    return rc;
  }
  *out = n;
  return AG_OK;
}

void rt_nats_chats_free(rt_nats_chats *n) {
  if (!n) return;
  cluster_chats_free(n->k);
  free(n);
}
