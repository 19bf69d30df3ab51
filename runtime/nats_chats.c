/* Chat records of a NATS world and this database (see nats_chats.h). Only what a person does is
 * recorded (a title given, a chat deleted): what follows from the stream (a chat started, a title from
 * the first human words) comes out the same in every process by itself, and taking a record up never
 * records anything, so no record echoes between processes. */
#include "runtime/nats_chats.h"

#include "chat/archive.h"
#include "chat/title.h"
#include "common/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rt_nats_chats {
  cluster *cl;
  store *st;
  chat_session *cs;
};

static void warn(const char *what, const char *chat, int rc, const ag_errmsg *em) {
  fprintf(stderr, "agora: chat records: cannot %s chat %s: %s\n", what, chat, em->text[0] ? em->text : ag_strerror(rc));
}

/* The stream says chat was deleted (title NULL) or has this title. */
static void on_record(void *ud, const char *chat, const char *title, int64_t created_ms) {
  rt_nats_chats *n = ud;
  ag_errmsg em = {""};
  const char *cur = chat_session_current(n->cs);
  chat_info ci;
  int rc = AG_OK;
  if (!title) {
    /* The stream's chat stays (the cluster never passes its tombstone on); a chat this copy lacks is done. */
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
  return rc ? rc : cluster_record_title(n->cl, chat, title, ci.created_at_ms);
}

int rt_nats_chats_deleted(rt_nats_chats *n, const char *chat) { return cluster_record_delete(n->cl, chat); }

int rt_nats_chats_open(cluster *cl, store *st, chat_session *cs, rt_nats_chats **out) {
  rt_nats_chats *n = calloc(1, sizeof *n);
  if (!n) return AG_ERR_NOMEM;
  n->cl = cl, n->st = st, n->cs = cs;
  cluster_on_record(cl, on_record, n);
  *out = n;
  return AG_OK;
}

void rt_nats_chats_free(rt_nats_chats *n) {
  if (!n) return;
  cluster_on_record(n->cl, NULL, NULL);
  free(n);
}
