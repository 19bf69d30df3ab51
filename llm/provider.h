/* The inside of the LLM layer: what a provider implements and the call object they share.
 * Only llm/ includes this. */
#ifndef AG_LLM_PROVIDER_H
#define AG_LLM_PROVIDER_H

#include "llm/llm.h"
#include "net/net_opts.h"

struct event;
struct ag_defer;

struct llm_client {
  struct event_base *base;
  struct ag_defer *defer; /* deferred steps of calls that need no I/O (the script provider) */
  net_client *net;        /* the HTTP providers' transport (net/), owned */
  struct llm_call *calls; /* calls in flight (doubly linked) */
  size_t active;
};

struct llm_endpoint {
  llm_client *client;
  llm_config cfg;
  size_t script_next; /* script provider: index of the next reply */
};

struct llm_provider_ops;

struct llm_call {
  llm_endpoint *ep;       /* NULL once the call is finishing (the endpoint may go away in on_done) */
  llm_client *client;
  const struct llm_provider_ops *ops;
  int linked;             /* in client->calls */
  llm_callbacks cb;
  void *ud;
  void *impl; /* provider state */
  llm_usage usage; /* filled by the provider before a successful llm_call_finish */
  llm_tool_call *tool_calls; /* added with llm_call_add_tool_call before a successful finish */
  size_t n_tool_calls;
  struct llm_call *prev, *next;
};

typedef struct llm_provider_ops {
  /* Begins the call; must not invoke callbacks before returning (defer to the loop). req is borrowed. */
  int (*start)(llm_call *call, const llm_request *req);
  /* Releases call->impl without invoking callbacks; may be NULL when impl needs nothing. */
  void (*cancel)(llm_call *call);
} llm_provider_ops;

extern const llm_provider_ops llm_script_ops;

/* Providers report through these. llm_call_finish invokes on_done once, then frees the call (and
 * calls ops->cancel first if impl is still set, so providers may clear impl themselves). */
void llm_call_chunk(llm_call *call, const char *text, size_t len);
void llm_call_finish(llm_call *call, int err, const char *text, const llm_error_info *info);

/* The ops for a provider; NULL when it is not available in this build. */
const llm_provider_ops *llm_provider_ops_for(llm_provider_kind kind);

/* The HTTP side: ops of the HTTP providers (llm/remote.c). */
const llm_provider_ops *llm_http_ops_for(llm_provider_kind kind);
/* The trust and routing settings of cfg as the network layer takes them (strings borrowed from cfg). */
net_opts llm_config_net(const llm_config *cfg);

#endif
