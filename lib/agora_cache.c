/* libagora's LLM response cache (API version 4): its counts and its clearing, outside any world (what
 * `agora cache` does). The cache's database is opened for the call and closed after it. */
#include "lib/agora_int.h"

#include "runtime/llm_cache.h"

#include <stdio.h>

/* The cache of cache_dir, else DB/llm-cache, opened into *c. */
static int cache_open(const char *db_dir, const char *cache_dir, cache_db **c, ag_errmsg *em) {
  char dir[4096];
  int rc = rt_llm_cache_dir(cache_dir, db_dir, dir, sizeof dir, em);
  return rc ? rc : cache_db_open(dir, c, em);
}

int agora_cache_stats(const char *db_dir, const char *cache_dir, char **json) {
  ag_errmsg em = {""};
  cache_db *c = NULL;
  cache_db_stats s;
  cJSON *j = NULL;
  int rc = json ? cache_open(db_dir, cache_dir, &c, &em) : ag_fail(&em, AG_ERR_INVALID, "agora_cache_stats: json is NULL");
  if (!rc && cache_db_stat(c, &s)) rc = ag_fail(&em, AG_ERR_STORAGE, "cannot read the cache");
  if (!rc && !(j = cJSON_CreateObject())) rc = ag_fail(&em, AG_ERR_NOMEM, "out of memory");
  if (!rc) {
    cJSON_AddNumberToObject(j, "entries", (double)s.entries);
    cJSON_AddNumberToObject(j, "bytes", (double)s.bytes);
    agora__add_time(j, "oldest", s.entries != 0, s.oldest_ms);
    agora__add_time(j, "newest", s.entries != 0, s.newest_ms);
    rc = agora__hand_out(j, json, &em);
  }
  cache_db_close(c);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

int agora_cache_clear(const char *db_dir, const char *cache_dir, int64_t before_ms, size_t *removed) {
  ag_errmsg em = {""};
  cache_db *c = NULL;
  size_t n = 0;
  int rc = cache_open(db_dir, cache_dir, &c, &em);
  if (!rc && cache_db_clear(c, before_ms, &n)) rc = ag_fail(&em, AG_ERR_STORAGE, "cannot write the cache");
  cache_db_close(c);
  if (!rc && removed) *removed = n;
  return rc ? agora__fail(rc, &em) : AG_OK;
}
