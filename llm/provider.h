/* The inside of the LLM layer: what a provider implements and the call object they share.
 * Only llm/ includes this. */
#ifndef AG_LLM_PROVIDER_H
#define AG_LLM_PROVIDER_H

#include "llm/cache.h"
#include "llm/llm.h"
#include "net/net_opts.h"

#include <stdint.h>

struct event;
struct ag_defer;
typedef struct llm_limiter llm_limiter;

struct llm_client {
  struct event_base *base;
  struct ag_defer *defer; /* deferred steps of calls that need no I/O (the script provider) */
  net_client *net;        /* the HTTP providers' transport (net/), owned */
  struct llm_call *calls; /* calls in flight (doubly linked) */
  size_t active;
  struct llm_budget_state *budget; /* limits, prices and spend (llm/budget.c); NULL: none */
  llm_cache_mode cache_mode;       /* the response cache (llm/cache.c): off unless cache is set */
  struct cache_db *cache;          /* borrowed */
  llm_cache_counts cache_counts;
  struct cache_db *embed_cache;    /* hosted embedders' vectors (llm/embed_cache.h), borrowed; NULL: none */
  struct evp_md_ctx_st *cache_md;  /* the key's SHA-256 context (EVP_MD_CTX), reused; llm_client_cache_free */
  llm_limiter *limiter;            /* rate limits per endpoint (llm/limiter.c), made on first use */
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
  unsigned char cache_key[32]; /* the request's key in the response cache (llm/cache.c) */
  int cache_store;             /* a miss with --llm-cache use: a successful reply is stored */
  struct llm_call *prev, *next;
};

typedef struct llm_provider_ops {
  /* Begins the call; must not invoke callbacks before returning (defer to the loop). req is borrowed. */
  int (*start)(llm_call *call, const llm_request *req);
  /* Releases call->impl without invoking callbacks; may be NULL when impl needs nothing. */
  void (*cancel)(llm_call *call);
} llm_provider_ops;

extern const llm_provider_ops llm_script_ops;

/* Budgets (llm/budget.c): the ops a call starts with (ops itself, or the refusal once the budget is
 * reached), the accounting of a successful call (its usage.usd, the client's spend) and the teardown. */
const llm_provider_ops *llm_budget_gate(llm_client *c, llm_provider_kind kind, const llm_provider_ops *ops);
void llm_budget_account(llm_call *call);
void llm_client_budget_free(llm_client *c);
/* Releases what the response cache keeps in the client (llm/cache.c). */
void llm_client_cache_free(llm_client *c);

/* Rate limits (llm/limiter.c). An HTTP attempt fills slot.tokens (its estimate), slot.go and slot.ud, then
 * acquires: 1 = start now, 0 = queued (go(ud) runs from the loop once admitted), < 0 an error. When the
 * attempt's reply ends it reports done with the rate-limit headers it saw and its status; a cancelled
 * attempt (queued or running) cancels its slot. used corrects the tokens of its start (reported usage). */
typedef struct llm_lim_ep llm_lim_ep;
enum { LLM_LIM_IDLE = 0, LLM_LIM_WAITING, LLM_LIM_RUNNING };
typedef struct llm_lim_slot {
  llm_lim_ep *ep;
  long tokens;
  uint64_t seq;
  int state, tracked;
  void (*go)(void *ud);
  void *ud;
  struct llm_lim_slot *prev, *next;
} llm_lim_slot;
typedef struct llm_lim_headers {
  long requests_limit, tokens_limit; /* the window's limits the provider states, -1: not said */
  long requests_left, tokens_left;  /* -1: not said */
  long reset_requests, reset_tokens; /* ms from now, -1: not said */
  long retry_after_ms;               /* -1: none */
} llm_lim_headers;
int llm_limit_acquire(llm_client *c, const llm_config *cfg, llm_lim_slot *s);
void llm_limit_cancel(llm_lim_slot *s);
void llm_limit_done(llm_lim_slot *s, const llm_lim_headers *h, long status);
/* The request has left (its connection was set up): the provider counts it from about now, so its place
 * in our window moves to now. From inside libcurl: touches only the window. */
void llm_limit_sent(llm_lim_slot *s);
void llm_limit_used(llm_lim_slot *s, long tokens);
void llm_limit_headers_init(llm_lim_headers *h);
/* Reads one header line's name and value into h when it is a rate-limit header. */
void llm_limit_header(llm_lim_headers *h, const char *name, size_t nlen, const char *v, size_t vlen);
void llm_limiter_free(llm_client *c);

/* The response cache (llm/cache.c): the ops a call starts with (a stored reply's, a replay miss's, or ops
 * itself, then marked to be stored on success; call->ep is set) and the storing at a successful finish. */
const llm_provider_ops *llm_cache_gate(llm_call *call, const llm_request *req, const llm_provider_ops *ops);
void llm_cache_store(llm_call *call, const char *text);

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
