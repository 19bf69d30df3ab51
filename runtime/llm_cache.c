/* Opening a world's response cache (see llm_cache.h). */
#include "runtime/llm_cache.h"

#include "chat/archive.h"
#include "llm/cache.h"
#include "llm/embed.h"

#include <stdio.h>

int rt_llm_cache_dir(const char *cache_db, const char *db, char *out, size_t cap, ag_errmsg *em) {
  char dir[4096];
  if (cache_db) return snprintf(out, cap, "%s", cache_db) < (int)cap ? AG_OK : ag_fail(em, AG_ERR_TOO_BIG, "--cache-db: path too long");
  if (!db) {
    if (chat_store_default_dir(dir, sizeof dir))
      return ag_fail(em, AG_ERR_INVALID, "no data directory for the LLM cache: pass --cache-db DIR, --db DIR or set AGORA_HOME");
    db = dir;
  }
  return snprintf(out, cap, "%s/llm-cache", db) < (int)cap ? AG_OK : ag_fail(em, AG_ERR_TOO_BIG, "%s: path too long", db);
}

/* An agent whose memory stream is embedded by a hosted embedder: its vectors are kept in the cache. */
static int hosted_embedder(const world_spec *spec) {
  for (size_t i = 0; i < spec->n_agents; i++)
    if (spec->agents[i].memory.mode == MEM_MODE_STREAM && spec->agents[i].memory.embedder != MEM_EMBED_HASH) return 1;
  return 0;
}

int rt_llm_cache_open(world *w, const world_spec *spec, const rt_overrides *o, const char *db, int no_save,
                      cache_db **out, ag_errmsg *em) {
  llm_cache_mode mode = spec->llm_cache;
  char dir[4096];
  *out = NULL;
  if (o->llm_cache && llm_cache_mode_parse(o->llm_cache, &mode))
    return ag_fail(em, AG_ERR_INVALID, "--llm-cache: unknown mode '%s' (expected off, use or replay)", o->llm_cache);
  /* --no-save writes nothing to the data directory unless told where: the vectors are only a saving */
  int vectors = hosted_embedder(spec) && (!no_save || o->cache_db || mode != LLM_CACHE_OFF);
  if (mode == LLM_CACHE_OFF && !vectors) return AG_OK;
  int rc = rt_llm_cache_dir(o->cache_db, db, dir, sizeof dir, em);
  if (!rc) rc = cache_db_open(dir, out, em);
  /* Without the response cache, a directory that cannot be had only means embedding again, as before. */
  if (rc && mode == LLM_CACHE_OFF) {
    if (em) em->text[0] = '\0';
    return AG_OK;
  }
  if (rc) return rc;
  if (mode != LLM_CACHE_OFF) llm_client_set_cache(world_llm(w), mode, *out);
  if (vectors) llm_client_set_embed_cache(world_llm(w), *out);
  return AG_OK;
}
