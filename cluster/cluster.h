/* A world spread over processes on NATS JetStream (docs/distributed.md). Attached to a world, it becomes
 * the world's bus transport: published messages go to the world's stream (subjects
 * agora.<world>.<chat>.msg) and come back, in every process, in the stream's order, which is the total
 * order every process delivers them in. Agents this process holds a lease on answer here; the others
 * are followed (memory, turn counts) so that any process can take them over. */
#ifndef AG_CLUSTER_H
#define AG_CLUSTER_H

#include "cluster/link.h"
#include "world/world.h"

typedef struct cluster cluster;

/* The NATS library has one owner, the process (docs/decisions.md "Leaving NATS"): cluster_lib_open
 * starts libnats (idempotent; cluster_open calls it too), cluster_lib_close ends it once, at the
 * process's exit, after every cluster was freed. libnats' threads may touch a freed cluster's hand-over
 * queue until then, so those queues are kept and freed by cluster_lib_close. It returns AG_ERR_STATE
 * when libnats' threads did not end within 60 s (what they may touch is then left to the exit). Both,
 * and cluster_open and cluster_free, may be called from several threads at once (worlds on loops of
 * their own threads): the process's record of the library has a lock. */
int cluster_lib_open(void);
int cluster_lib_close(void);

/* Joins w (borrowed; must outlive the cluster) to its stream with o's settings (borrowed for the call).
 * With AGORA_NATS_SIGNING_KEY in the environment every record is signed, and every record without the
 * key's signature is refused (cluster/sign.h). Errors name what failed; unreachable servers, refused
 * credentials and a key too short are AG_ERR_INVALID. */
int cluster_open(world *w, const cluster_opts *o, cluster **out, ag_errmsg *em);
/* Runs the loop until this process has caught up with the stream (everything before it joined is
 * delivered, with nothing run again). AG_ERR_IO when that takes longer than timeout_ms; AG_ERR_STATE
 * when the loop is running already (called from one of its callbacks). */
int cluster_wait_ready(cluster *c, long timeout_ms, ag_errmsg *em);
/* A publisher (run): starts chat id (copied; NULL: a new id); the next message published opens it
 * everywhere. AG_ERR_INVALID for an id that cannot stand in a subject. */
int cluster_use_chat(cluster *c, const char *id);
/* fn(ud, chat) is called when the stream moves to another chat: the bus has delivered everything of
 * the chat before and the conversation has just started over. ud borrowed. */
void cluster_on_chat(cluster *c, void (*fn)(void *ud, const char *chat), void *ud);
/* fn(ud, chat, title, created_ms) is called for each chat record, in the stream's order (while
 * catching up too): a title given by hand (title, and the chat's creation time), or chat deleted (title
 * NULL; never the chat the stream is on at that point). Strings borrowed for the call; ud borrowed. */
void cluster_on_record(cluster *c, void (*fn)(void *ud, const char *chat, const char *title, int64_t created_ms),
                       void *ud);
/* Records, for every process, that a person gave chat this title (created_ms: the chat's creation
 * time), or deleted chat: a tombstone in the stream, and the chat's records purged from it (before this
 * process leaves). Asynchronous; they come back through cluster_on_record. AG_ERR_INVALID for a bad
 * id; AG_ERR_STATE for deleting the chat the stream is on. */
int cluster_record_title(cluster *c, const char *chat, const char *title, int64_t created_ms);
int cluster_record_delete(cluster *c, const char *chat);
/* fn(ud, line) receives what a person running this process should read (a record refused, seqs the
 * stream no longer holds, the agents a host holds, the agents a publisher waits for that have no host);
 * without it, lines go to stderr (nowhere with cluster_opts.quiet). ud borrowed. */
void cluster_on_notice(cluster *c, void (*fn)(void *ud, const char *line), void *ud);
/* The chat being delivered (NULL before any). */
const char *cluster_chat(const cluster *c);
/* Agents this process answers for now; live hosts last seen. */
size_t cluster_local_count(const cluster *c);
/* What libnats' threads have handed this process (deliveries, acknowledgements, leases) that its loop
 * has not run yet: a test's way to see deliveries wait for a loop that does not turn. */
size_t cluster_pending(cluster *c);
/* Detaches from the world and closes its connection (this process's leases are given back). The
 * library stays open for the process's other worlds (cluster_lib_close). c NULL: nothing. */
void cluster_free(cluster *c);

#endif
