/* The process-wide libraries (see process.h). */
#include "runtime/process.h"

#include "cluster/cluster.h"
#include "common/error.h"

#include <stdio.h>

/* libcurl's global state is started by the first HTTP client (llm_lib_open is idempotent) and left to
 * the exit, which libcurl allows: starting it here, before libnats, and cleaning it up after libnats'
 * close tore OpenSSL down twice (a crash at exit with NATS over TLS). The NATS library opens with the
 * first world that joins NATS, before that world's HTTP clients exist. */
int rt_process_begin(void) { return AG_OK; }

void rt_process_end(void) {
  if (cluster_lib_close()) fprintf(stderr, "agora: the NATS client did not stop within 60 s\n");
}
