/* A database copy of a world spread over NATS kept in step with the world's chat records
 * (docs/distributed.md "Chat records"): what a person does here (a title given, a chat deleted) is
 * recorded in the world's bucket, and what other processes recorded is taken up here,
 * so that every copy agrees. For `host --db`, `console --nats` and `serve --nats`. Chats themselves start
 * with their first message in the stream, everywhere (chat_session_follow). */
#ifndef AG_RT_NATS_CHATS_H
#define AG_RT_NATS_CHATS_H

#include "chat/session.h"
#include "cluster/link.h"

typedef struct rt_nats_chats rt_nats_chats;

/* Watches the bucket of w's world with o's settings (borrowed for the call); w, st (cs's store) and cs
 * borrowed, must outlive it. Call it before the loop runs (it connects). */
int rt_nats_chats_open(world *w, store *st, chat_session *cs, const cluster_opts *o, rt_nats_chats **out,
                        ag_errmsg *em);
/* Records a title given by hand to chat (its creation time from the store), or chat deleted here; both
 * asynchronous. */
int rt_nats_chats_title(rt_nats_chats *n, const char *chat, const char *title);
int rt_nats_chats_deleted(rt_nats_chats *n, const char *chat);
/* Stops (before the cluster is freed). NULL: nothing. */
void rt_nats_chats_free(rt_nats_chats *k);

#endif
