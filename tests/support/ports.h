/* Loopback ports for servers a test starts as separate processes (nats-server, nghttpx, MCP servers),
 * which must be told their port before they bind it. */
#ifndef AG_TEST_PORTS_H
#define AG_TEST_PORTS_H

/* A port on 127.0.0.1 that was free a moment ago, below the kernel's ephemeral range (so no outgoing
 * connection can take it while its server restarts), never handed out before by this process (so two
 * servers picked together never get the same one) nor held by another running test process (an flock
 * on $TMPDIR/agora-test-ports/PORT, let go when the process exits). -1 if none was found. */
int ports_free(void);

/* Starts the pseudo-random order ports_free tries ports in (by default from the time and the PID): two
 * processes given the same seed try the same ports, which is how a test shows they still never share. */
void ports_seed(unsigned s);

/* 1 if something accepts connections on 127.0.0.1:port. */
int ports_open(int port);

#endif
