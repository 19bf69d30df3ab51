/* agora replay: print a saved chat — from the database or a snapshot file — in order, as run printed
 * it, optionally paced. Never calls an LLM. */
#include "chat/id_prefix.h"
#include "chat/snapshot.h"
#include "cli/cli.h"
#include "runtime/db.h"
#include "runtime/output.h"
#include "cli/transcript.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char replay_usage[] =
  "usage: agora replay CHAT_ID|SNAPSHOT.json [--db DIR] [--json] [--delay MS]\n"
  "\n"
  "Prints a saved chat's messages in order, as 'agora run' printed them, with the tool steps agents\n"
  "took (tool-call and tool-result events) after the message they followed. The argument is a snapshot\n"
  "file when such a file exists, else a chat id in the database. --delay waits MS milliseconds\n"
  "between messages, for watching. Never calls an LLM.\n";

typedef struct replay_ctx {
  const char *chat;
  output *out;
  int json;
  long delay_ms;
  ag_errmsg *em;
} replay_ctx;

static int replay_stored(store *st, replay_ctx *rc) {
  chat_info c;
  char id[CHAT_ID_MAX];
  int r = chat_id_resolve(st, rc->chat, id, rc->em); /* an id or a unique prefix */
  if (!r) r = chat_info_get(st, id, &c, rc->em);
  if (r == AG_ERR_NOT_FOUND)
    return ag_fail(rc->em, r, "'%s' is neither a snapshot file nor a chat in the database", rc->chat);
  if (r) return r;
  output_opts oo = {.json = rc->json, .batch = rc->delay_ms == 0};
  if ((r = output_new(stdout, c.world_id, &oo, &rc->out))) return r;
  output_set_chat(rc->out, c.id);
  return transcript_print_stored(st, c.id, rc->out, rc->delay_ms, rc->em);
}

static int replay_snapshot(const char *path, replay_ctx *rc) {
  cJSON *snap = NULL;
  int r = chat_snapshot_load(path, &snap, rc->em);
  if (!r) r = chat_snapshot_validate(snap, path, rc->em);
  if (r) goto done;
  const cJSON *chat = cJSON_GetObjectItemCaseSensitive(snap, "chat");
  const cJSON *world = cJSON_GetObjectItemCaseSensitive(chat, "world");
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(chat, "id");
  char wid[CHAT_ID_MAX] = "";
  if (cJSON_IsString(world)) snprintf(wid, sizeof wid, "%s", world->valuestring);
  else mention_id_from_name(cJSON_GetObjectItem(cJSON_GetObjectItem(snap, "world"), "name")->valuestring, wid, sizeof wid);
  output_opts oo = {.json = rc->json, .batch = rc->delay_ms == 0};
  if ((r = output_new(stdout, wid, &oo, &rc->out))) goto done;
  output_set_chat(rc->out, cJSON_IsString(id) ? id->valuestring : NULL);
  r = transcript_print_snapshot(snap, rc->out, rc->delay_ms);
done:
  cJSON_Delete(snap);
  return r;
}

int cli_replay(int argc, char **argv) {
  if (argc > 0 && cli_is_help(argv[0])) {
    fputs(replay_usage, stdout);
    return 0;
  }
  const char *what = NULL, *db = NULL;
  int json = 0;
  long delay = 0;
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    if (!strcmp(s, "--json")) {
      json = 1;
    } else if (!strcmp(s, "--db") || !strcmp(s, "--delay")) {
      if (i + 1 >= argc) return cli_error(AG_ERR_INVALID, "replay: %s needs a value", s);
      if (!strcmp(s, "--db")) {
        db = argv[++i];
      } else {
        char *end = NULL;
        delay = strtol(argv[++i], &end, 10);
        if (!*argv[i] || *end || delay < 0 || delay > 3600000)
          return cli_error(AG_ERR_INVALID, "replay: --delay: '%s' is not a number of milliseconds (0 to 3600000)", argv[i]);
      }
    } else if (s[0] == '-' && s[1]) {
      return cli_error(AG_ERR_INVALID, "replay: unknown option '%s' (see agora replay --help)", s);
    } else if (!what) {
      what = s;
    } else {
      return cli_error(AG_ERR_INVALID, "replay: unexpected argument '%s'", s);
    }
  }
  if (!what) return cli_error(AG_ERR_INVALID, "replay: missing CHAT_ID or SNAPSHOT.json (see agora replay --help)");
  ag_errmsg em = {""};
  replay_ctx rc = {what, NULL, json, delay, &em};
  int r;
  struct stat sb;
  if (stat(what, &sb) == 0 && S_ISREG(sb.st_mode)) {
    r = replay_snapshot(what, &rc);
  } else {
    store *st = NULL;
    r = rt_store_open_read(db, &st, &em);
    if (!r) r = replay_stored(st, &rc);
    chat_store_close(st);
  }
  output_free(rc.out);
  if (r) return cli_error(r, "replay: %s", em.text[0] ? em.text : ag_strerror(r));
  return 0;
}
