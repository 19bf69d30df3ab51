/* agora replay: print a saved chat — from the database or a snapshot file — in order, as run printed
 * it, optionally paced. Never calls an LLM. It runs on libagora (include/agora.h): a stored chat's
 * transcript is agora_db_transcript's, a snapshot's agora_snapshot_transcript's. */
#include "agora.h"
#include "cli/cli.h"
#include "common/error.h"
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

/* The library's transcript (its JSON array, consumed) printed as run printed it, paced. */
static int replay_print(char *text, int json, long delay_ms, ag_errmsg *em) {
  cJSON *entries = cJSON_Parse(text);
  agora_free(text);
  if (!entries) return ag_fail(em, AG_ERR_NOMEM, "out of memory");
  cli_event_print p = cli_event_print_make(stdout, json, 0);
  p.batch = delay_ms == 0; /* not live: flushed at the end, unless paced for watching */
  cli_transcript_print(&p, entries, delay_ms);
  cJSON_Delete(entries);
  return AG_OK;
}

/* The library's failure into em; rc is returned. */
static int api(int rc, ag_errmsg *em) {
  if (rc < 0) snprintf(em->text, sizeof em->text, "%s", agora_errmsg());
  return rc;
}

static int replay_stored(const char *chat, const char *db_dir, int json, long delay_ms, ag_errmsg *em) {
  agora_db *db = NULL;
  char *text = NULL;
  int rc = api(agora_db_open(db_dir, AGORA_DB_READ, &db), em), opened = !rc;
  if (!rc) rc = api(agora_db_transcript(db, chat, &text), em); /* an id or a unique prefix */
  agora_db_close(db);
  if (rc == AGORA_ERR_NOT_FOUND && opened)
    return ag_fail(em, rc, "'%s' is neither a snapshot file nor a chat in the database", chat);
  return rc ? rc : replay_print(text, json, delay_ms, em);
}

/* A snapshot file, read without importing it (agora_snapshot_transcript). */
static int replay_snapshot(const char *path, int json, long delay_ms, ag_errmsg *em) {
  char *text = NULL, *entries = NULL;
  int rc = cli_snapshot_read(path, &text, em);
  if (!rc) rc = api(agora_snapshot_transcript(text, path, &entries), em);
  free(text);
  return rc ? rc : replay_print(entries, json, delay_ms, em);
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
  struct stat sb;
  int r = stat(what, &sb) == 0 && S_ISREG(sb.st_mode) ? replay_snapshot(what, json, delay, &em)
                                                      : replay_stored(what, db, json, delay, &em);
  if (r) return cli_error(r, "replay: %s", em.text[0] ? em.text : agora_strerror(r));
  return 0;
}
