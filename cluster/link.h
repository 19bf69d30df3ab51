/* Connections to NATS (docs/distributed.md): the settings a person gives (URL, credentials, TLS) turned
 * into libnats options, the world's JetStream stream made sure of, and the push consumer that brings the
 * stream back in order. Nothing here keeps a secret: credentials go to libnats and nowhere else. */
#ifndef AG_CLUSTER_LINK_H
#define AG_CLUSTER_LINK_H

#include <nats/nats.h>
#include <stdint.h>

#include "common/error.h"

/* What `host`, `run --nats` take (strings borrowed). */
typedef struct cluster_opts {
  const char *url;     /* nats://host:port, tls://..., several joined by ',' */
  const char *creds;   /* --nats-creds FILE (JWT + NKey seed), or NULL */
  const char *ca_file; /* --nats-ca FILE for tls://, or NULL (then SSL_CERT_FILE, CURL_CA_BUNDLE, system) */
  int replicas;        /* copies of the stream and the lease buckets (1, or 3 in a three-node cluster) */
  long lease_ms;       /* an agent's lease lives this long without a heartbeat */
  const char *agents;  /* host: only these agent ids or names (comma separated), or NULL: a fair share */
  int hosting;         /* 1: runs agents (host); 0: publishes and watches (run --nats) */
  int quiet;           /* notices are dropped, not printed, unless cluster_on_notice takes them (the library
                          without AGORA_NOTES, which never prints: docs/library.md) */
} cluster_opts;

/* Connects with o's settings and the environment (AGORA_NATS_TOKEN, or AGORA_NATS_USER with
 * AGORA_NATS_PASSWORD). The socket is read by libnats' own thread, never by the event loop: libnats'
 * libevent adapter lets its reconnect, ping and flusher threads change the loop's events and the socket
 * while the loop reads it (docs/distributed.md "Threads"). Errors (unreachable, refused credentials,
 * TLS) are AG_ERR_INVALID with em naming the URL. */
int link_connect(const cluster_opts *o, const char *name, natsConnection **out, ag_errmsg *em);
/* Makes sure the stream exists (created with subjects and replicas if not); *last: its last seq. The first
 * question waits at most probe_ms for its answer (0: the context's wait, 5 s). */
int link_stream(jsCtx *js, const char *stream, const char *subjects, int replicas, long probe_ms, uint64_t *last,
                ag_errmsg *em);
/* An ephemeral push consumer of stream delivering to subject deliver from start_seq on, no acks, with
 * idle heartbeats every hb_ms. name (WIRE_ID_MAX bytes) receives its name. */
int link_consumer(jsCtx *js, const char *stream, const char *deliver, uint64_t start_seq, long hb_ms, char *name,
                  size_t name_cap, ag_errmsg *em);
/* libnats' text for s with its last error detail (never holds a credential: libnats does not echo them). */
const char *link_error(natsStatus s, char *buf, size_t cap);

#endif
