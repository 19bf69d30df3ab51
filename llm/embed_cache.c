/* Hosted embedders' vectors in the response cache's database (see embed_cache.h). A value is the magic
 * "AGEV1", a 4-byte little-endian dimension and dim IEEE-754 floats in the machine's order (the cache
 * lives beside the chats on one machine). */
#include "llm/embed_cache.h"

#include "common/clock.h"
#include "llm/embed.h"
#include "llm/wire.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#define VEC_MAGIC "AGEV1"
#define VEC_HEAD (sizeof VEC_MAGIC - 1 + 4)

/* Each field followed by its NUL, so that ("ab", "c") and ("a", "bc") differ. */
static int key_put(EVP_MD_CTX *md, const char *s) {
  return EVP_DigestUpdate(md, s ? s : "", strlen(s ? s : "") + 1);
}

int llm_embed_cache_key(const llm_config *cfg, const char *text, uint8_t key[CACHE_DB_KEY_LEN]) {
  const llm_wire *wire = llm_wire_for(cfg->provider);
  if (!wire) return AG_ERR_INVALID;
  EVP_MD_CTX *md = EVP_MD_CTX_new();
  unsigned n = 0;
  int ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) && key_put(md, "agora-embedding-1") &&
           key_put(md, llm_provider_name(cfg->provider)) &&
           key_put(md, cfg->base_url && cfg->base_url[0] ? cfg->base_url : wire->default_base_url) &&
           key_put(md, cfg->model) && key_put(md, text) && EVP_DigestFinal_ex(md, key, &n) &&
           n == CACHE_DB_KEY_LEN;
  EVP_MD_CTX_free(md);
  return ok ? AG_OK : AG_ERR_NOMEM;
}

int llm_embed_cache_get(cache_db *db, const uint8_t key[CACHE_DB_KEY_LEN], float **out, int *dim) {
  char *val = NULL;
  size_t len = 0;
  *out = NULL;
  int rc = cache_db_get(db, key, &val, &len);
  if (rc) goto done;
  uint32_t d = 0;
  if (len >= VEC_HEAD && !memcmp(val, VEC_MAGIC, VEC_HEAD - 4)) {
    const unsigned char *p = (const unsigned char *)val + VEC_HEAD - 4;
    d = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  }
  rc = AG_ERR_NOT_FOUND;
  if (d < 1 || d > LLM_EMBED_DIM_MAX || len != VEC_HEAD + d * sizeof(float)) goto done;
  rc = (*out = malloc(d * sizeof(float))) ? AG_OK : AG_ERR_NOMEM;
  if (rc) goto done;
  memcpy(*out, val + VEC_HEAD, d * sizeof(float));
  *dim = (int)d;
done:
  free(val);
  return rc;
}

int llm_embed_cache_put(cache_db *db, const llm_config *cfg, const char *const *texts, const float *const *vecs,
                        size_t n, int dim) {
  size_t len = VEC_HEAD + (size_t)dim * sizeof(float);
  uint8_t *keys = malloc(n * CACHE_DB_KEY_LEN);
  unsigned char *vals = malloc(n * len);
  cache_db_item *items = malloc(n * sizeof *items);
  int rc = keys && vals && items ? AG_OK : AG_ERR_NOMEM;
  uint32_t d = (uint32_t)dim;
  for (size_t i = 0; !rc && i < n; i++) {
    unsigned char *v = vals + i * len, *p = v + VEC_HEAD - 4;
    memcpy(v, VEC_MAGIC, VEC_HEAD - 4);
    p[0] = (unsigned char)d, p[1] = (unsigned char)(d >> 8), p[2] = (unsigned char)(d >> 16);
    p[3] = (unsigned char)(d >> 24);
    memcpy(v + VEC_HEAD, vecs[i], (size_t)dim * sizeof(float));
    rc = llm_embed_cache_key(cfg, texts[i], keys + i * CACHE_DB_KEY_LEN);
    items[i] = (cache_db_item){.key = keys + i * CACHE_DB_KEY_LEN, .val = (const char *)v, .len = len};
  }
  if (!rc && n) rc = cache_db_put_many(db, items, n, ag_now_ms());
  free(items);
  free(vals);
  free(keys);
  return rc;
}
