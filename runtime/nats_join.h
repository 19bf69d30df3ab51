/* console and serve on a world spread over NATS (docs/distributed.md): they join it as publishers and
 * viewers. They answer for no agent; the stream's chats are followed into their database, and a chat
 * they start is the one their next message goes to, everywhere. */
#ifndef AG_RT_NATS_JOIN_H
#define AG_RT_NATS_JOIN_H

#include "chat/session.h"
#include "cluster/link.h"

typedef struct rt_nats_join rt_nats_join;

/* Joins w (session cs on store st; borrowed, must outlive the join) with o's settings (borrowed for the call;
 * hosting is ignored: a viewer never answers), waits until it has caught up with the stream, then makes
 * the stream's chat current, or starts a new one when the stream has none. on_chat(ud, chat) (may be
 * NULL) is told each time the current chat changes because of the stream. Errors (unreachable server,
 * refused credentials, TLS) are AG_ERR_INVALID with em naming the URL. The chat records (titles, new
 * and deleted chats) are kept in step with the world's bucket (nats_chats.h). */
int rt_nats_join_open(world *w, store *st, chat_session *cs, const cluster_opts *o,
                       void (*on_chat)(void *ud, const char *chat), void *ud, rt_nats_join **out, ag_errmsg *em);
/* After the session started a chat (new chat, the fallback of a delete): the next message is published
 * into it. AG_ERR_STATE (em says why) when the stream has left that chat behind. NULL j: nothing. */
int rt_nats_join_sync(rt_nats_join *j, ag_errmsg *em);
/* After a person gave chat a title (title) or deleted chat (title NULL) here: recorded for every
 * process (nats_chats.h). NULL j: nothing. */
void rt_nats_join_record(rt_nats_join *j, const char *chat, const char *title);
/* NULL when the chat operation op ("load", "branch", "truncate", "delete") may run on chat (NULL: the
 * current one) of a NATS world; else why not (a static string). NULL j: always NULL. */
const char *rt_nats_refuses(const rt_nats_join *j, const char *op, const char *chat);
/* 1 when joining started a new chat (the stream had none), 0 when it took up the stream's. */
int rt_nats_join_fresh(const rt_nats_join *j);
/* Leaves the world (before the world and session are freed). */
void rt_nats_join_free(rt_nats_join *j);

#endif
