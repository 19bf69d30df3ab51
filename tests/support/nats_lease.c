/* Reading the agents' leases of a world on NATS for tests (see nats_lease.h). */
#include "support/nats_lease.h"

#include <nats/nats.h>
#include <stdio.h>

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
