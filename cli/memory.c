/* agora memory CHAT AGENT [--query TEXT] [--json] [--db DIR]: what an agent remembers in a stored chat
 * (docs/cli.md "memory", docs/memory.md). The chat is opened through the runtime like any door, read, and
 * closed; nothing is published, and only a hosted embedder is called (for --query). */
#include "cli/cli.h"

#include "cli/args.h"

#include "chat/id_prefix.h"
#include "runtime/db.h"
#include "runtime/runtime.h"
#include "storage/store.h"
#include "world/world_memory.h"

#include <event2/event.h>
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

/* The query's embedding, awaited on the runtime's loop. */
typedef struct recall_wait {
  int done, err;
  char why[512];
} recall_wait;

static void recall_done(void *ud, int err, const char *why) {
  recall_wait *w = ud;
  *w = (recall_wait){.done = 1, .err = err};
  if (err) snprintf(w->why, sizeof w->why, "%s", why);
}

/* With a hosted embedder, embeds the query (and the memories not embedded yet) before the listing; a
 * failing embedder is a note on stderr and 1 in *failed, and the listing goes on without relevance. */
static int list_memories(runtime *rt, const char *name, const char *query, cJSON **list, int *failed, ag_errmsg *em) {
  recall_wait w = {0};
  agent_recall *r = NULL;
  int rc = query ? world_memory_recall(rt_world(rt), name, query, 1, recall_done, &w, &r, em) : AG_OK;
  if (rc == AG_ERR_LLM) { /* the request could not start (a missing key): the same as a failed one */
    recall_done(&w, rc, em->text);
    rc = AG_OK;
  }
  while (!rc && r && !w.done && event_base_loop(rt_base(rt), EVLOOP_ONCE) == 0) {
  }
  if (!rc && r && !w.done) recall_done(&w, AG_ERR_IO, "the loop ended before the embedder answered");
  if (!rc && w.err) {
    fprintf(stderr, "agora memory: the embedder failed, so the memories are ranked without relevance: %s\n", w.why);
    *failed = 1;
  }
  if (!rc) rc = world_memory_list(rt_world(rt), name, query, w.done && !w.err ? r : NULL, list, em);
  agent_recall_free(r);
  return rc;
}

int cli_memory(int argc, char **argv) {
  const char *pos[2] = {NULL, NULL}, *query = NULL, *db = NULL;
  int json = 0, n_pos = 0, failed = 0;
  rt_allow_env allow = {0};
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
  ag_errmsg em = {""};
  store *st = NULL;
  runtime *rt = NULL;
  cJSON *list = NULL;
  char chat[CHAT_ID_MAX], wid[CHAT_ID_MAX];
  int rc = rt_store_open(db, &st, &em);
  if (!rc) rc = chat_id_resolve(st, pos[0], chat, &em);
  if (!rc) rc = rt_chat_world(st, chat, wid, &em);
  if (!rc)
    rc = rt_open(&(rt_opts){.cmd = "memory", .world = wid, .from_store = 1, .inert = 1, .embeds = query != NULL,
                            .quiet = 1, .st = st, .db = db, .allow = &allow, .pick = RT_CHAT_ID, .chat = chat}, &rt, &em);
  if (!rc) rc = list_memories(rt, pos[1], query, &list, &failed, &em);
  if (!rc) print_list(list, json);
  cJSON_Delete(list);
  rt_close(rt);
  store_close(st);
  return rc ? cli_error(rc, "memory: %s", em.text) : failed;
}
