/* The agents' leases of one host (docs/distributed.md "Ownership"): a key per agent in the bucket
 * agora-<world>-agents, whose value is the owner's host id and whose revision proves ownership. A round's
 * renewals, and its creations of keys nobody holds, go out together as asynchronous JetStream publishes
 * with the expected last revision, and the round waits once for all their answers: one round trip for
 * the whole share. One request per key made rounds of a hundred keys outlast a 900 ms lease on a loaded
 * machine, so that keys expired while they were being renewed and agents moved between hosts all the
 * time (the cluster_faults case of test_nats, once in 20 runs at four copies).
 *
 * Threads: every call but the answers' handler runs on the control thread; the handler runs on
 * libnats' thread and touches only what lease_mu guards. */
#ifndef AG_CLUSTER_LEASE_H
#define AG_CLUSTER_LEASE_H

#include <nats/nats.h>
#include <stddef.h>
#include <stdint.h>

typedef struct leases leases;

/* Called on the control thread for each agent this host takes (owned 1) or loses (owned 0). */
typedef void (*lease_change_fn)(void *ud, const char *id, int owned);

/* A table for the agents ids (copied, n may be 0), on bucket kv of stream KV_<bucket> (borrowed for the
 * table's life). The publishes' answers need a JetStream context made with lease_js_options: make the
 * table first, then the context, then lease_attach it. */
int leases_new(const char *bucket, const char *const *ids, size_t n, lease_change_fn fn, void *ud, leases **out);
/* Sets o's asynchronous publish handler to the table's (o: the options the context is made with). */
void leases_js_options(leases *t, jsOptions *o);
void leases_attach(leases *t, jsCtx *js, kvStore *kv);
size_t leases_owned(const leases *t);
/* One round: renews every key this host holds, gives back what is above share, takes free keys up
 * to share from start on. wait_ms bounds each wait for the server's answers; stop() (may be NULL)
 * is asked between steps, so that a host leaving does not wait for a whole round. */
void leases_round(leases *t, const char *host_id, size_t share, size_t start, long wait_ms, int (*stop)(void *),
                  void *ud);
/* Asks the server once which keys of the bucket hold a message (the subjects of its stream: one
 * request, where listing the keys would make a consumer) and calls each(ud, id) for every one with the
 * agent id the key is named for (borrowed for the call), the table's own or not. A key nobody holds has
 * none (expired or never made); one given back holds a delete marker until the bucket's TTL removes
 * it. Returns libnats' status (each not called unless NATS_OK); *jerr (may be NULL): JetStream's code. */
natsStatus leases_list_keys(leases *t, void (*each)(void *ud, const char *id), void *ud, jsErrCode *jerr);
/* Gives every key back at once (a host leaving: the others take them in their next round), waits for
 * the answers still due, then frees t (NULL: nothing). 1 when the server did not answer in time (it is
 * away: the keys expire by themselves), else 0. */
int leases_free(leases *t, long wait_ms);

#endif
