/* Reading the agents' leases of a world on NATS for tests (see nats_lease.h). */
#include "support/nats_lease.h"

#include "support/wait.h"

#include <nats/nats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nats_lease_owners(const char *url, const char *world, const char *const *agents, size_t n,
                      char (*owners)[NATS_LEASE_OWNER_MAX]) {
  natsConnection *nc = NULL;
  jsCtx *js = NULL;
  kvStore *kv = NULL;
  char bucket[256];
  int rc = -1;
  snprintf(bucket, sizeof bucket, "agora-%s-agents", world);
  if (natsConnection_ConnectTo(&nc, url) != NATS_OK || natsConnection_JetStream(&js, nc, NULL) != NATS_OK ||
      js_KeyValue(&kv, js, bucket) != NATS_OK)
    goto done;
  for (size_t i = 0; i < n; i++) {
    kvEntry *e = NULL;
    natsStatus s = kvStore_Get(&e, kv, agents[i]);
    if (s != NATS_OK && s != NATS_NOT_FOUND) goto done;
    snprintf(owners[i], NATS_LEASE_OWNER_MAX, "%s", s == NATS_OK ? kvEntry_ValueString(e) : "");
    kvEntry_Destroy(e);
  }
  rc = 0;
done:
  kvStore_Destroy(kv);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return rc;
}

typedef struct lease_goal {
  const char *url, *world;
  const char *const *names;
  int n, hosts;
  char (*owners)[NATS_LEASE_OWNER_MAX];
} lease_goal;

/* Whether every agent is held, by g->hosts distinct hosts in all. */
static int leases_spread(void *arg) {
  const lease_goal *g = arg;
  if (nats_lease_owners(g->url, g->world, g->names, (size_t)g->n, g->owners)) return 0;
  int distinct = 0, held = 1;
  for (int i = 0; i < g->n; i++) {
    held = held && g->owners[i][0];
    int seen = 0;
    for (int j = 0; j < i; j++) seen = seen || !strcmp(g->owners[i], g->owners[j]);
    distinct += !seen;
  }
  return held && distinct == g->hosts;
}

int nats_lease_wait(const char *url, const char *world, const char *prefix, int n, int hosts, long ms) {
  char (*owners)[NATS_LEASE_OWNER_MAX] = calloc((size_t)n, sizeof *owners);
  char **names = calloc((size_t)n, sizeof *names);
  int done = 0;
  for (int i = 0; names && i < n; i++)
    if ((names[i] = malloc(32))) snprintf(names[i], 32, "%s%d", prefix, i);
  lease_goal g = {.url = url, .world = world, .names = (const char *const *)names, .n = n, .hosts = hosts, .owners = owners};
  if (owners && names) done = wait_until_every(leases_spread, &g, ms, 50); /* each poll is a connection */
  for (int i = 0; names && i < n; i++) free(names[i]);
  free(names), free(owners);
  return done;
}
