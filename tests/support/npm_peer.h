/* A test peer from npm (installed by the peers fixture into $AGORA_PEERS) run as a server process on a
 * loopback port: started, waited for until it accepts connections, stopped. */
#ifndef AG_TEST_NPM_PEER_H
#define AG_TEST_NPM_PEER_H

#include <sys/types.h>

typedef struct npm_peer {
  pid_t pid;
  int port;
  char log[4096]; /* its stdout and stderr */
} npm_peer;

/* Runs $AGORA_PEERS/node_modules/.bin/NAME with args (NULL-terminated, without argv[0]) and extra_env
 * ("NAME=value", may be NULL), its output into log; port is where it was told to listen (ports_free).
 * Waits until the port accepts connections (at most 30 s). 0, or -1 with a message on stderr saying why
 * (the binary missing: the peers fixture installs it). */
int npm_peer_start(npm_peer *p, const char *name, const char *const *args, const char *const *extra_env, int port,
                   const char *log);
/* SIGTERM, then SIGKILL after 2 s; waits for it. A peer never started or already stopped is left alone. */
void npm_peer_stop(npm_peer *p);

#endif
