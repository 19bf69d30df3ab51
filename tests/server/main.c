/* agora-test-server: the loopback LLM server of tests/support/llm_server.h as a program, for
 * benchmarks and end-to-end tests driven from scripts. Prints its port on stdout, then serves until
 * SIGINT or SIGTERM. Usage: agora-test-server [--rule MATCH DIRECTIVES]... (MATCH "" = every request). */
#include "support/llm_server.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  /* Blocked before the server thread starts, so only sigwait below sees them. */
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  llm_server *srv;
  if (llm_server_start(&srv) != 0) {
    fprintf(stderr, "agora-test-server: cannot start\n");
    return 1;
  }
  llm_server_set_recording(srv, 0); /* nobody reads them, and a long run would grow without end */
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--rule") == 0 && i + 2 < argc) {
      if (llm_server_rule(srv, argv[i + 1], argv[i + 2]) != 0) {
        fprintf(stderr, "agora-test-server: bad directives: %s\n", argv[i + 2]);
        llm_server_stop(srv);
        return 2;
      }
      i += 2;
    } else {
      fprintf(stderr, "usage: agora-test-server [--rule MATCH DIRECTIVES]...\n");
      llm_server_stop(srv);
      return 2;
    }
  }
  printf("%d\n", llm_server_port(srv));
  fflush(stdout);
  int sig = 0;
  sigwait(&set, &sig);
  llm_server_stop(srv);
  return 0;
}
