/* agora cache stats|clear: the LLM response cache's database (docs/cli.md "cache"), outside any world. */
#include "cli/cli.h"

#include "common/clock.h"
#include "runtime/llm_cache.h"
#include "world/duration.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char cache_usage[] =
  "usage: agora cache stats|clear [--older-than DURATION] [--db DIR | --cache-db DIR] [--json]\n"
  "\n"
  "The LLM response cache (--llm-cache use|replay) in DIR/llm-cache beside the chats (--db DIR or the\n"
  "default directory), or in --cache-db DIR.\n"
  "  stats                 entries, their bytes, the oldest and newest\n"
  "  clear                 removes every entry, or with --older-than DURATION (30d, 12h) those stored before\n";

static int cache_stats(cache_db *db, int json) {
  cache_db_stats s;
  if (cache_db_stat(db, &s)) return cli_error(AG_ERR_STORAGE, "cache stats: cannot read the cache");
  char oldest[AG_TIME_LEN] = "-", newest[AG_TIME_LEN] = "-";
  if (s.entries) ag_time_format(s.oldest_ms, oldest, sizeof oldest), ag_time_format(s.newest_ms, newest, sizeof newest);
  if (json)
    printf("{\"type\":\"cache\",\"entries\":%zu,\"bytes\":%llu,\"oldest\":%s%s%s,\"newest\":%s%s%s}\n", s.entries,
           (unsigned long long)s.bytes, s.entries ? "\"" : "", s.entries ? oldest : "null", s.entries ? "\"" : "",
           s.entries ? "\"" : "", s.entries ? newest : "null", s.entries ? "\"" : "");
  else
    printf("entries: %zu\nbytes: %llu\noldest: %s\nnewest: %s\n", s.entries, (unsigned long long)s.bytes, oldest,
           newest);
  return 0;
}

int cli_cache(int argc, char **argv) {
  const char *cmd = argc > 0 ? argv[0] : NULL, *db = NULL, *cache = NULL, *older = NULL;
  int json = 0;
  if (!cmd || cli_is_help(cmd)) {
    fputs(cache_usage, cmd ? stdout : stderr);
    return cmd ? 0 : 2;
  }
  if (strcmp(cmd, "stats") && strcmp(cmd, "clear"))
    return cli_error(AG_ERR_INVALID, "cache: unknown command '%s' (expected stats or clear)", cmd);
  for (int i = 1; i < argc; i++) {
    const char **slot = !strcmp(argv[i], "--db") ? &db : !strcmp(argv[i], "--cache-db") ? &cache
                      : !strcmp(argv[i], "--older-than") && !strcmp(cmd, "clear") ? &older : NULL;
    if (!strcmp(argv[i], "--json")) json = 1;
    else if (!slot) return cli_error(AG_ERR_INVALID, "cache %s: unknown argument '%s' (see agora cache --help)", cmd, argv[i]);
    else if (i + 1 >= argc) return cli_error(AG_ERR_INVALID, "cache %s: %s needs a value", cmd, argv[i]);
    else *slot = argv[++i];
  }
  ag_errmsg em = {""};
  int64_t age = 0;
  if (older && duration_parse(older, &age, &em))
    return cli_error(AG_ERR_INVALID, "cache clear: --older-than: %s", em.text);
  char dir[4096];
  cache_db *c = NULL;
  int rc = rt_llm_cache_dir(cache, db, dir, sizeof dir, &em);
  if (!rc) rc = cache_db_open(dir, &c, &em);
  if (rc) return cli_error(rc, "cache %s: %s", cmd, em.text);
  int status = 0;
  if (!strcmp(cmd, "stats")) status = cache_stats(c, json);
  else {
    size_t n = 0;
    if (cache_db_clear(c, older ? ag_now_ms() - age : INT64_MAX, &n)) status = cli_error(AG_ERR_STORAGE, "cache clear: cannot write the cache");
    else if (json) printf("{\"type\":\"cache-cleared\",\"removed\":%zu}\n", n);
    else printf("removed %zu entr%s\n", n, n == 1 ? "y" : "ies");
  }
  cache_db_close(c);
  return status;
}
