/* Loopback ports for servers a test starts as separate processes (nats-server, nghttpx, MCP servers),
 * which must be told their port before they bind it. */
#ifndef AG_TEST_PORTS_H
#define AG_TEST_PORTS_H

/* A port on 127.0.0.1 that was free a moment ago, below the kernel's ephemeral range (so no outgoing
 * connection can take it while its server restarts) and never handed out before by this process (so
 * two servers picked together never get the same one). -1 if none was found. */
int ports_free(void);

/* 1 if something accepts connections on 127.0.0.1:port. */
int ports_open(int port);

#endif
