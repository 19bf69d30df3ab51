/* The chat records of a world spread over NATS (docs/distributed.md "Chat records"): one key-value
 * bucket per world, agora-<world>-chats, one key per chat (its title and creation time; deleted: the
 * key deleted), so that every process's database agrees on titles, new chats and deleted chats.
 * Writes are asynchronous publishes (the loop never waits); every change, this process's own included,
 * comes back in the bucket's order through fn on the loop. Nothing secret is in a record. */
#ifndef AG_CLUSTER_CHATS_H
#define AG_CLUSTER_CHATS_H

#include <stdint.h>

#include "cluster/link.h"

struct event_base;
typedef struct cluster_chats cluster_chats;

/* One record as the bucket holds it: title NULL when the chat was deleted. Strings borrowed for the call. */
typedef void (*cluster_chats_fn)(void *ud, const char *chat, const char *title, int64_t created_ms);

/* Connects with o's settings (borrowed for the call), makes sure of the bucket of world_id (o->replicas
 * copies) and starts watching it from its first record: fn(ud, ...) runs on base's loop for each record
 * there now and each change later. Blocks while connecting: call it before the loop runs. Errors as
 * link_connect's (AG_ERR_INVALID naming the URL). */
int cluster_chats_open(const cluster_opts *o, struct event_base *base, const char *world_id, cluster_chats_fn fn,
                       void *ud, cluster_chats **out, ag_errmsg *em);
/* Records chat's title and creation time (a publish; it comes back through fn). */
int cluster_chats_put(cluster_chats *k, const char *chat, const char *title, int64_t created_ms);
/* Records that chat was deleted. */
int cluster_chats_delete(cluster_chats *k, const char *chat);
/* Stops watching and closes: before cluster_free (which ends libnats) and before the loop is freed. */
void cluster_chats_free(cluster_chats *k);

#endif
