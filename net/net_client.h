/* The network client of one event loop: the HTTP transport (net/net_http.h) and the plain requests
 * (net/net_fetch.h) of every layer above run on it, so the LLM providers and the MCP Streamable HTTP
 * transport share its curl multi handles, connections, TLS sessions and CA cache. net/ includes only
 * common/ (tests/test_layers.c). */
#ifndef AG_NET_CLIENT_H
#define AG_NET_CLIENT_H

struct event_base;

typedef struct net_client net_client;

/* A client on base (borrowed, must outlive it). Cheap: libcurl and its multi handles are set up on the
 * first transfer, so a world of script agents never touches them. */
int net_client_new(struct event_base *base, net_client **out);

/* Ends every request and transfer still going (no callback runs for them), then frees. NULL: nothing. */
void net_client_free(net_client *c);

/* The loop c runs on, for callers' own timers (a resume after a dropped event stream). */
struct event_base *net_client_base(const net_client *c);

#endif
