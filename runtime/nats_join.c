/* console and serve joined to a NATS world (see nats_join.h). */
#include "runtime/nats_join.h"

#include "chat/archive.h"
#include "runtime/nats_chats.h"
#include "cluster/cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rt_nats_join {
  cluster *cl;
  rt_nats_chats *records; /* titles, new and deleted chats, shared with every process */
  chat_session *cs;
  void (*on_chat)(void *ud, const char *chat);
  void *ud;
  int fresh;
  int quiet; /* the library without AGORA_NOTES: its lines are not printed */
};

/* The stream moved to chat: the database's copy follows it and it becomes current here too. A copy that
 * cannot be stored is a note for a person, said as the cluster's notices are (not by a quiet library). */
static void join_follow(void *ud, const char *chat) {
  rt_nats_join *j = ud;
  ag_errmsg em = {""};
  int rc = chat_session_follow(j->cs, chat, &em);
  if (!rc && j->on_chat) j->on_chat(j->ud, chat);
  else if (rc && !j->quiet)
    fprintf(stderr, "agora: cannot store chat %s: %s\n", chat, em.text[0] ? em.text : ag_strerror(rc));
}

int rt_nats_join_open(world *w, store *st, chat_session *cs, const cluster_opts *o,
                       void (*on_chat)(void *ud, const char *chat), void *ud, rt_nats_join **out, ag_errmsg *em) {
  rt_nats_join *j = calloc(1, sizeof *j);
  if (!j) return AG_ERR_NOMEM;
  j->cs = cs;
  j->quiet = o->quiet;
  cluster_opts v = *o;
  v.hosting = 0;
  if (!v.replicas) v.replicas = 1;
  if (!v.lease_ms) v.lease_ms = 3000;
  int rc = cluster_open(w, &v, &j->cl, em);
  if (!rc) rc = rt_nats_chats_open(j->cl, st, cs, &j->records);
  if (!rc) {
    cluster_on_chat(j->cl, join_follow, j);
    rc = cluster_wait_ready(j->cl, 60000, em);
  }
  /* The stream's chat is current (followed while catching up); without one, a new chat of our own. */
  chat_session_fresh_only(cs, 1); /* the copy's seqs are the stream's */
  if (!rc && !cluster_chat(j->cl) && !(rc = chat_session_new(cs, em))) {
    j->fresh = 1;
    rc = rt_nats_join_sync(j, em);
  }
  if (rc) {
    rt_nats_join_free(j);
    return rc;
  }
  j->on_chat = on_chat;
  j->ud = ud;
  *out = j;
  return AG_OK;
}

int rt_nats_join_sync(rt_nats_join *j, ag_errmsg *em) {
  const char *cur = j ? chat_session_current(j->cs) : NULL;
  const char *now = j ? cluster_chat(j->cl) : NULL;
  if (!cur || (now && !strcmp(cur, now))) return AG_OK;
  char id[CHAT_ID_MAX];
  snprintf(id, sizeof id, "%s", cur);
  void (*told)(void *, const char *) = j->on_chat;
  j->on_chat = NULL; /* our own move: nothing to announce */
  int rc = cluster_use_chat(j->cl, id);
  j->on_chat = told;
  if (rc) return ag_fail(em, AG_ERR_STATE, "chat %s was left behind by the world's stream on NATS", id);
  return AG_OK;
}

void rt_nats_join_record(rt_nats_join *j, const char *chat, const char *title) {
  if (!j || !chat) return;
  int rc = title ? rt_nats_chats_title(j->records, chat, title) : rt_nats_chats_deleted(j->records, chat);
  if (rc) fprintf(stderr, "agora: cannot record chat %s on NATS: %s\n", chat, ag_strerror(rc));
}

const char *rt_nats_refuses(const rt_nats_join *j, const char *op, const char *chat) {
  if (!j) return NULL;
  const char *now = cluster_chat(j->cl);
  int current = !chat || (now && !strcmp(chat, now));
  if (!strcmp(op, "load") && !current)
    return "on a world joined over NATS only the stream's chat can be current (a new chat starts with /new)";
  if (!strcmp(op, "delete") && current)
    return "on a world joined over NATS the stream's current chat cannot be deleted";
  if (!strcmp(op, "branch") || !strcmp(op, "truncate"))
    return "not available on a world joined over NATS: the other processes would not follow";
  return NULL;
}

int rt_nats_join_fresh(const rt_nats_join *j) { return j && j->fresh; }

void rt_nats_join_free(rt_nats_join *j) {
  if (!j) return;
  rt_nats_chats_free(j->records);
  cluster_free(j->cl);
  free(j);
}
