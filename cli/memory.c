/* agora memory CHAT AGENT [--query TEXT] [--json] [--db DIR]: what an agent remembers in a stored chat
 * (docs/cli.md "memory", docs/memory.md), on libagora (agora_db_memories: the chat's world opened inert,
 * read and closed; nothing is published, and only a hosted embedder is called, for --query). */
#include "agora.h"
#include "cli/cli.h"

#include "cli/args.h"
#include "common/error.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char memory_usage[] =
  "usage: agora memory CHAT_ID AGENT [--query TEXT] [--json] [--db DIR] [--allow-key-to URL]\n"
  "\n"
  "Lists what AGENT remembers in the chat (an agent with \"memory\": {\"mode\": \"stream\"}), oldest first:\n"
  "time, importance, who said it, the text. With --query, the memories that score best for TEXT at the\n"
  "chat's time, best first, with their recency, importance and relevance scores and the total. With a\n"
  "hosted embedder TEXT is embedded first (its key is sent to a stored world's base_url only with\n"
  "--allow-key-to URL); when that fails the listing comes without relevance, exit 1.\n";

/* One memory as a line: time, importance, sender: text, and the scores when there are some. */
static void print_plain(const cJSON *m) {
  const cJSON *s = cJSON_GetObjectItem(m, "scores");
  printf("%s  importance %g  ", cJSON_GetStringValue(cJSON_GetObjectItem(m, "time")),
         cJSON_GetNumberValue(cJSON_GetObjectItem(m, "importance")));
  if (s)
    printf("score %.3f (recency %.3f, importance %.3f, relevance %.3f)  ", cJSON_GetNumberValue(cJSON_GetObjectItem(s, "total")),
           cJSON_GetNumberValue(cJSON_GetObjectItem(s, "recency")), cJSON_GetNumberValue(cJSON_GetObjectItem(s, "importance")),
           cJSON_GetNumberValue(cJSON_GetObjectItem(s, "relevance")));
  printf("%s: %s", cJSON_GetStringValue(cJSON_GetObjectItem(m, "sender")), cJSON_GetStringValue(cJSON_GetObjectItem(m, "text")));
  const cJSON *src = cJSON_GetObjectItem(m, "sources");
  for (const cJSON *x = src ? src->child : NULL; x; x = x->next)
    printf("%s%.0f", x == src->child ? "  (from messages " : ", ", cJSON_GetNumberValue(x));
  puts(src && src->child ? ")" : "");
}

static void print_list(const cJSON *list, int json) {
  for (const cJSON *m = list->child; m; m = m->next) {
    if (!json) {
      print_plain(m);
      continue;
    }
    cJSON_AddStringToObject((cJSON *)m, "type", "memory");
    char *line = cJSON_PrintUnformatted(m);
    if (line) puts(line);
    free(line);
  }
}

/* The listing of agora_db_memories's object: a failed embedder's note on stderr (*failed 1), then the
 * memories. */
static int list_memories(const char *db, const char *chat, const char *agent, const char *query,
                         const cli_allow *allow, int json, int *failed) {
  agora_db *d = NULL;
  char *text = NULL;
  int rc = agora_db_open(db, 0, &d);
  if (!rc) rc = agora_db_memories(d, chat, agent, query, allow->key_urls, allow->n_key_urls, AGORA_NOTES, &text);
  agora_db_close(d);
  if (rc) return cli_error(rc, "memory: %s", agora_errmsg());
  cJSON *j = cJSON_Parse(text);
  agora_free(text);
  if (!j) return cli_error(AG_ERR_NOMEM, "memory: %s", agora_strerror(AG_ERR_NOMEM));
  const char *why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "embedder_failed"));
  if (why) {
    fprintf(stderr, "agora memory: the embedder failed, so the memories are ranked without relevance: %s\n", why);
    *failed = 1;
  }
  print_list(cJSON_GetObjectItemCaseSensitive(j, "memories"), json);
  cJSON_Delete(j);
  return 0;
}

int cli_memory(int argc, char **argv) {
  const char *pos[2] = {NULL, NULL}, *query = NULL, *db = NULL;
  int json = 0, n_pos = 0, failed = 0;
  cli_allow allow = {0};
  if (argc < 1 || cli_is_help(argv[0])) {
    fputs(memory_usage, argc < 1 ? stderr : stdout);
    return argc < 1 ? 2 : 0;
  }
  for (int i = 0; i < argc; i++) {
    const char **slot = !strcmp(argv[i], "--query") ? &query : !strcmp(argv[i], "--db") ? &db : NULL;
    if (!strcmp(argv[i], "--json")) json = 1;
    else if (!strcmp(argv[i], "--allow-key-to")) {
      if (cli_allow_env_arg(&allow, "memory", argc, argv, &i)) return 2;
    }
    else if (slot && i + 1 >= argc) return cli_error(AG_ERR_INVALID, "memory: %s needs a value", argv[i]);
    else if (slot) *slot = argv[++i];
    else if (argv[i][0] == '-' && argv[i][1]) return cli_error(AG_ERR_INVALID, "memory: unknown option '%s' (see agora memory --help)", argv[i]);
    else if (n_pos < 2) pos[n_pos++] = argv[i];
    else return cli_error(AG_ERR_INVALID, "memory: unexpected argument '%s' (see agora memory --help)", argv[i]);
  }
  if (n_pos != 2) return cli_error(AG_ERR_INVALID, "memory: expected CHAT_ID and AGENT (see agora memory --help)");
  int status = list_memories(db, pos[0], pos[1], query, &allow, json, &failed);
  return status ? status : failed;
}
