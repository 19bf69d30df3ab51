/* The inside of net/: the client record its files share. Only net/ includes this. */
#ifndef AG_NET_INT_H
#define AG_NET_INT_H

#include <stddef.h>

#include "net/net_client.h"

struct net_http;
struct net_fetch;

struct net_client {
  struct event_base *base;
  struct net_http *http;     /* the curl multi transport (net_http.c), created on first use */
  struct net_fetch *fetches; /* plain requests in flight (net_fetch.c), doubly linked */
  size_t n_fetches;
};

/* net_http.c: tears the transport down, ending its transfers without callbacks. */
void net_http_free(struct net_http *h);
/* net_fetch.c: ends every plain request of c without callbacks, before its transport goes. */
void net_fetch_free_all(net_client *c);

#endif
