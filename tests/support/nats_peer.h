/* A peer of a world on NATS as a test plays it: another program writing to the world's JetStream
 * stream directly, with or without the rights and the signature a host has. */
#ifndef AG_TEST_NATS_PEER_H
#define AG_TEST_NATS_PEER_H

/* What to publish: data on subject, through a connection of its own to url. Unset fields are left out:
 * user/pw (the server's own login), id (the stream's de-duplication id), sig (the Agora-Sig header). */
typedef struct nats_peer_msg {
  const char *url, *user, *pw;
  const char *subject, *data, *id, *sig;
} nats_peer_msg;

/* Publishes m and waits (up to 2 s) for the stream's answer: 0 when the stream stored it, -1 otherwise
 * (refused, no such stream, no server). */
int nats_peer_publish(const nats_peer_msg *m);

#endif
