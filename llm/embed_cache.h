/* The vectors of hosted embedders, kept so that a memory is embedded once (issue 26, docs/memory.md
 * "Stored vectors"): each text's float vector in the LLM response cache's database (storage/cache_db.h),
 * keyed by the SHA-256 of (provider, base URL, model, text). Content-keyed, so shared by every chat,
 * branch, import and process that uses that directory; never the key or its variable. Only llm/embed.c
 * uses it. */
#ifndef AG_LLM_EMBED_CACHE_H
#define AG_LLM_EMBED_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "llm/llm.h"
#include "storage/cache_db.h"

/* The key of text under cfg's provider, base URL (NULL: the provider's default) and model. */
int llm_embed_cache_key(const llm_config *cfg, const char *text, uint8_t key[CACHE_DB_KEY_LEN]);
/* The vector stored under key into a malloc'd array of *dim floats (*out, caller frees). AG_ERR_NOT_FOUND
 * when there is none or it is not a vector (a value of another shape is never used). */
int llm_embed_cache_get(cache_db *db, const uint8_t key[CACHE_DB_KEY_LEN], float **out, int *dim);
/* Stores the vectors of texts[0..n) (vecs[i]: dim floats, borrowed) under their keys for cfg, in one
 * transaction. */
int llm_embed_cache_put(cache_db *db, const llm_config *cfg, const char *const *texts, const float *const *vecs,
                        size_t n, int dim);

#endif
