/* agora cache stats|clear: the LLM response cache's database (docs/cli.md "cache"), outside any world,
 * on libagora (agora_cache_stats, agora_cache_clear). */
#include "agora.h"
#include "cli/cli.h"

#include "common/clock.h"
#include "common/error.h"

#include <cjson/cJSON.h>
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

/* The counts as `cache stats` prints them, from agora_cache_stats's object. */
static int cache_stats(const char *db, const char *cache, int json) {
  char *text = NULL;
  int rc = agora_cache_stats(db, cache, &text);
  if (rc) return cli_error(rc, "cache stats: %s", agora_errmsg());
  cJSON *j = cJSON_Parse(text);
  agora_free(text);
  if (!j) return cli_error(AG_ERR_NOMEM, "cache stats: %s", agora_strerror(AG_ERR_NOMEM));
  size_t entries = (size_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "entries"));
  unsigned long long bytes = (unsigned long long)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "bytes"));
  const char *oldest = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "oldest"));
  const char *newest = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "newest"));
  if (json)
    printf("{\"type\":\"cache\",\"entries\":%zu,\"bytes\":%llu,\"oldest\":%s%s%s,\"newest\":%s%s%s}\n", entries, bytes,
           oldest ? "\"" : "", oldest ? oldest : "null", oldest ? "\"" : "", newest ? "\"" : "", newest ? newest : "null",
           newest ? "\"" : "");
  else
    printf("entries: %zu\nbytes: %llu\noldest: %s\nnewest: %s\n", entries, bytes, oldest ? oldest : "-",
           newest ? newest : "-");
  cJSON_Delete(j);
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
  int64_t age = 0;
  if (older && agora_duration_parse(older, &age))
    return cli_error(AG_ERR_INVALID, "cache clear: --older-than: %s", agora_errmsg());
  if (!strcmp(cmd, "stats")) return cache_stats(db, cache, json);
  size_t n = 0;
  int rc = agora_cache_clear(db, cache, older ? ag_now_ms() - age : INT64_MAX, &n);
  if (rc) return cli_error(rc, "cache clear: %s", agora_errmsg());
  if (json) printf("{\"type\":\"cache-cleared\",\"removed\":%zu}\n", n);
  else printf("removed %zu entr%s\n", n, n == 1 ? "y" : "ies");
  return 0;
}
