/* agora init: writes a starter world file a person can read, run and edit: two agents on a local
 * OpenAI-compatible server (Ollama's /v1 by default), with "_comment" notes, and a script. */
#include "cli/cli.h"

#include "common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char init_usage[] =
  "usage: agora init [FILE]\n"
  "\n"
  "Writes a starter world to FILE (default: world.json): two agents on a local OpenAI-compatible\n"
  "server (http://127.0.0.1:11434/v1, as Ollama serves it; no API key) and a script, with \"_comment\"\n"
  "notes. Never overwrites an existing file. Try it without a server: agora run FILE --provider script\n";

static const char starter[] =
  "{\n"
  "  \"_comment\": \"A starter world written by agora init. Edit freely; \\\"_comment\\\" keys are notes and are ignored.\",\n"
  "  \"name\": \"Starter\",\n"
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

int cli_init(int argc, char **argv) {
  if (argc > 0 && cli_is_help(argv[0])) {
    fputs(init_usage, stdout);
    return 0;
  }
  if (argc > 1) return cli_error(AG_ERR_INVALID, "init: unexpected argument '%s'", argv[1]);
  if (argc == 1 && argv[0][0] == '-') return cli_error(AG_ERR_INVALID, "init: unknown option '%s'", argv[0]);
  const char *path = argc ? argv[0] : "world.json";
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644); /* O_EXCL: never overwrite */
  if (fd < 0 && errno == EEXIST)
    return cli_error(AG_ERR_INVALID, "init: %s already exists; not overwritten (name another file)", path);
  if (fd < 0) return cli_error(AG_ERR_IO, "init: cannot create %s: %s", path, strerror(errno));
  size_t len = strlen(starter), done = 0;
  while (done < len) {
    ssize_t n = write(fd, starter + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += (size_t)n;
  }
  if (close(fd) != 0 || done < len) {
    unlink(path);
    return cli_error(AG_ERR_IO, "init: cannot write %s", path);
  }
  printf("wrote %s: try 'agora run %s --provider script', then start your server and 'agora run %s'\n", path, path,
         path);
  return 0;
}
