/* The network client of one loop (see net_client.h): the owner of the transport and the requests. */
#include "net/net_int.h"

#include "common/error.h"

#include <stdlib.h>

int net_client_new(struct event_base *base, net_client **out) {
  net_client *c = calloc(1, sizeof *c);
  if (!c) return AG_ERR_NOMEM;
  *c = (net_client){.base = base};
  *out = c;
  return AG_OK;
}

void net_client_free(net_client *c) {
  if (!c) return;
  net_fetch_free_all(c); /* first: a request holds a transfer of the transport */
  if (c->http) net_http_free(c->http);
  free(c);
}

struct event_base *net_client_base(const net_client *c) { return c->base; }
