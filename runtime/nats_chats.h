/* A database copy of a world spread over NATS kept in step with the world's chat records
 * (docs/distributed.md "Chat records"): what a person does here (a title given, a chat deleted) is
 * recorded in the world's stream, and what other processes recorded is taken up here, in the stream's
 * order (a deleted chat's tombstone is honoured by a process joining later),
 * so that every copy agrees. For `host --db`, `console --nats` and `serve --nats`. Chats themselves start
 * with their first message in the stream, everywhere (chat_session_follow). */
#ifndef AG_RT_NATS_CHATS_H
#define AG_RT_NATS_CHATS_H

#include "chat/session.h"
#include "cluster/cluster.h"

typedef struct rt_nats_chats rt_nats_chats;

/* Takes up the chat records of cl's stream; cl, st (cs's store) and cs borrowed, must outlive it. Call
 * it before cl catches up (cluster_wait_ready), so that records already in the stream are taken up. */
int rt_nats_chats_open(cluster *cl, store *st, chat_session *cs, rt_nats_chats **out);
/* Records a title given by hand to chat (its creation time from the store), or chat deleted here; both
 * asynchronous. */
int rt_nats_chats_title(rt_nats_chats *n, const char *chat, const char *title);
int rt_nats_chats_deleted(rt_nats_chats *n, const char *chat);
/* Stops (before the cluster is freed). NULL: nothing. */
void rt_nats_chats_free(rt_nats_chats *k);

#endif
