/* agora init: writes a starter world file a person can read, run and edit: two agents on a local
 * OpenAI-compatible server (Ollama's /v1 by default), with "_comment" notes, and a script. The name
 * it gives the world is one the database does not hold yet (libagora's agora_db_worlds). */
#include "agora.h"
#include "cli/cli.h"

#include <cjson/cJSON.h>

#include "common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char init_usage[] =
  "usage: agora init [FILE] [--db DIR]\n"
  "\n"
  "Writes a starter world to FILE (default: world.json): two agents on a local OpenAI-compatible\n"
  "server (http://127.0.0.1:11434/v1, as Ollama serves it; no API key) and a script, with \"_comment\"\n"
  "notes. Never overwrites an existing file. Try it without a server: agora run FILE --provider script\n"
  "\n"
  "The world is named Starter, or Starter 2, 3, ... when the database (--db DIR, or the default place)\n"
  "holds a world of that name already: running the new file would otherwise replace that world's settings.\n";

static const char starter[] =
  "{\n"
  "  \"_comment\": \"A starter world written by agora init. Edit freely; \\\"_comment\\\" keys are notes and are ignored.\",\n"
  "  \"name\": \"%s\",\n"
  "  \"description\": \"Two agents on a local OpenAI-compatible server: a host and a guest.\",\n"
  "  \"turn_limit\": 3,\n"
  "  \"defaults\": {\n"
  "    \"_comment\": \"Every agent gets these unless it sets its own. Point base_url at your server (Ollama: http://127.0.0.1:11434/v1, llama.cpp: http://127.0.0.1:8080/v1); a local server needs no key. Or run with --provider script to try the world offline, --model or --base-url to change every agent.\",\n"
  "    \"provider\": \"openai\",\n"
  "    \"model\": \"llama3.2\",\n"
  "    \"base_url\": \"http://127.0.0.1:11434/v1\",\n"
  "    \"temperature\": 0.7,\n"
  "    \"max_tokens\": 300\n"
  "  },\n"
  "  \"budget\": { \"_comment\": \"Where the calls stop: no new LLM call starts once the chat has spent this (run and say exit 3). usd needs a price for every model in pricing.\", \"tokens\": 200000 },\n"
  "  \"pricing\": { \"_comment\": \"Your models' prices in dollars per million tokens (Agora knows none): e.g. \\\"gpt-4o-mini\\\": {\\\"input_per_mtok\\\": 0.15, \\\"output_per_mtok\\\": 0.60}.\",\n"
  "    \"llama3.2\": { \"input_per_mtok\": 0, \"output_per_mtok\": 0 } },\n"
  "  \"agents\": [\n"
  "    { \"name\": \"Host\",\n"
  "      \"_comment\": \"An agent answers when a line of a message starts with @host, or when nobody is mentioned.\",\n"
  "      \"system_prompt\": \"You are the host. Answer in two sentences, then ask @guest for their view on a line of its own.\",\n"
  "      \"replies\": [\"Welcome! Tea is my pick.\\n@guest what do you think?\"] },\n"
  "    { \"name\": \"Guest\",\n"
  "      \"_comment\": \"replies: what the offline script provider says (--provider script). auto_reply false: the guest's answers end the exchange instead of going back to the host.\",\n"
  "      \"system_prompt\": \"You are a curious guest. Answer in two sentences.\",\n"
  "      \"auto_reply\": false,\n"
  "      \"replies\": [\"Coffee, every time.\"] }\n"
  "  ],\n"
  "  \"script\": [\n"
  "    { \"_comment\": \"What agora run publishes, in order. agora say FILE \\\"@host ...\\\" sends one message instead.\",\n"
  "      \"from\": \"human\", \"text\": \"@host Tea or coffee?\" }\n"
  "  ]\n"
  "}\n";

#define INIT_NAMES_MAX 99 /* Starter .. Starter 99 */

/* 1 when the worlds (agora_db_worlds's array) hold one whose id is id. */
static int holds_world(const cJSON *worlds, const char *id) {
  const cJSON *w;
  cJSON_ArrayForEach(w, worlds) {
    const char *wid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(w, "id"));
    if (wid && !strcmp(wid, id)) return 1;
  }
  return 0;
}

/* The first of Starter, Starter 2, ... that names no world of the database (db NULL: the default
 * place) into name; 0, or an exit status after naming the problem. No database: Starter. */
static int init_pick_name(const char *db, char *name, size_t cap) {
  agora_db *d = NULL;
  char *text = NULL;
  snprintf(name, cap, "Starter");
  int rc = agora_db_open(db, AGORA_DB_READ, &d);
  if (rc == AGORA_ERR_NOT_FOUND) return 0;
  if (!rc) rc = agora_db_worlds(d, &text);
  agora_db_close(d);
  if (rc) return cli_error(rc, "init: %s", agora_errmsg());
  cJSON *worlds = cJSON_Parse(text);
  agora_free(text);
  if (!worlds) return cli_error(AG_ERR_NOMEM, "init: %s", agora_strerror(AG_ERR_NOMEM));
  int status = 0;
  for (int i = 1;; i++) {
    if (i > INIT_NAMES_MAX) {
      status = cli_error(AG_ERR_INVALID, "init: the database holds worlds Starter to Starter %d; not written",
                         INIT_NAMES_MAX);
      break;
    }
    if (i > 1) snprintf(name, cap, "Starter %d", i);
    char id[AGORA_ID_MAX] = "";
    agora_name_id(name, id); /* Starter N always makes one */
    if (!holds_world(worlds, id)) break;
  }
  cJSON_Delete(worlds);
  return status;
}

/* Writes text to a new file at path (never over an existing one); 0 or an exit status. */
static int init_write(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644); /* O_EXCL: never overwrite */
  if (fd < 0 && errno == EEXIST)
    return cli_error(AG_ERR_INVALID, "init: %s already exists; not overwritten (name another file)", path);
  if (fd < 0) return cli_error(AG_ERR_IO, "init: cannot create %s: %s", path, strerror(errno));
  size_t len = strlen(text), done = 0;
  while (done < len) {
    ssize_t n = write(fd, text + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += (size_t)n;
  }
  if (close(fd) != 0 || done < len) {
    unlink(path);
    return cli_error(AG_ERR_IO, "init: cannot write %s", path);
  }
  return 0;
}

int cli_init(int argc, char **argv) {
  const char *path = NULL, *db = NULL;
  for (int i = 0; i < argc; i++) {
    if (cli_is_help(argv[i])) return fputs(init_usage, stdout), 0;
    if (!strcmp(argv[i], "--db") && i + 1 < argc) db = argv[++i];
    else if (argv[i][0] == '-') return cli_error(AG_ERR_INVALID, "init: unknown option '%s'", argv[i]);
    else if (!path) path = argv[i];
    else return cli_error(AG_ERR_INVALID, "init: unexpected argument '%s'", argv[i]);
  }
  if (!path) path = "world.json";
  if (access(path, F_OK) == 0)
    return cli_error(AG_ERR_INVALID, "init: %s already exists; not overwritten (name another file)", path);
  char name[32], text[sizeof starter + 32];
  int status = init_pick_name(db, name, sizeof name);
  if (status) return status;
  snprintf(text, sizeof text, starter, name);
  if ((status = init_write(path, text))) return status;
  if (strcmp(name, "Starter") != 0)
    printf("named the world '%s': the database holds a world named Starter already\n", name);
  printf("wrote %s: try 'agora run %s --provider script', then start your server and 'agora run %s'\n", path, path,
         path);
  return 0;
}
