/* Hosted embedders (issue 26, docs/memory.md): texts to vectors through an OpenAI-compatible
 * POST {base}/embeddings, Ollama's POST {base}/api/embed or Gemini's POST
 * {base}/v1beta/models/{model}:batchEmbedContents — batched, on the LLM client's curl multi transport
 * (net/net_fetch.h), never blocking the loop, with the keys of chat calls (api_key_env, the provider's
 * default variable, key_withheld). The memory stream is its user; the built-in hash embedder needs none
 * of this (agents/memory_stream.h). */
#ifndef AG_LLM_EMBED_H
#define AG_LLM_EMBED_H

#include <stddef.h>

#include "common/error.h"
#include "llm/llm.h"

#define LLM_EMBED_BATCH 64            /* texts per request when the caller gives no batch size */
#define LLM_EMBED_DIM_MAX 8192        /* the longest vector accepted */
#define LLM_EMBED_BODY_MAX (64u << 20) /* bytes of one response accepted */

typedef struct llm_embed llm_embed;

/* The end of a request for n texts: err AG_OK and vecs (n * dim floats, in the texts' order, borrowed for
 * the call); or an error (AG_ERR_LLM: the provider's error, AG_ERR_IO: the transport, AG_ERR_INVALID: a
 * reply of the wrong shape) with why, a message naming the provider (never the key). */
typedef void (*llm_embed_done)(void *ud, int err, const float *vecs, size_t n, int dim, const char *why);

/* Starts embedding texts[0..n) (copied) with cfg's provider (LLM_OPENAI, LLM_OLLAMA or LLM_GEMINI), model,
 * base_url, api_key_env, key_withheld, timeout_ms (per request) and TLS/proxy options; batch texts per
 * request (0: LLM_EMBED_BATCH), the requests one after another. done runs once, from the loop, never from
 * inside this call, unless this call fails: then AG_ERR_INVALID (a provider with no embeddings API, no
 * model, a missing key: em says which) or AG_ERR_NOMEM, and done never runs. *out (may be NULL) is
 * valid until done returns or llm_embed_cancel. */
int llm_embed_start(llm_client *c, const llm_config *cfg, const char *const *texts, size_t n, size_t batch,
                    llm_embed_done done, void *ud, llm_embed **out, ag_errmsg *em);
/* Stops e: done does not run. */
void llm_embed_cancel(llm_embed *e);

struct cache_db;
/* Keeps the vectors the client's embedders fetch in db (storage/cache_db.h; borrowed: it stays open until
 * the client is freed or this is set to NULL), and sends only the texts it does not hold already
 * (llm/embed_cache.h). NULL: every text is sent. */
void llm_client_set_embed_cache(llm_client *c, struct cache_db *db);

#endif
