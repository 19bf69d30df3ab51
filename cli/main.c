/* agora: the command-line entry point; dispatches to the subcommands. */
#include "agora.h"
#include "cli/cli.h"

#include "common/error.h"
#include "common/heap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

static const char usage[] =
  "usage: agora COMMAND [ARGS]\n"
  "\n"
  "Agora runs worlds of LLM agents that talk to each other on a message bus.\n"
  "\n"
  "commands:\n"
  "  run WORLD.json|WORLD-ID [--db DIR] [--json] [--stream] [--quiet] [--no-save] [--chat ID]\n"
  "                        run a world file's script and print the transcript\n"
  "  run [WORLD.json] --resume CHAT_ID [--db DIR] [--json] ...\n"
  "                        finish the replies a chat had in flight when its process stopped\n"
  "  say WORLD.json|WORLD-ID TEXT [--new-chat] [--db DIR] [--json] ...\n"
  "                        send one message to a world, print the replies, save\n"
  "  init [FILE]           write a commented starter world (default: world.json)\n"
  "  console [WORLD.json|WORLD-ID] [--db DIR]\n"
  "                        talk to a world interactively\n"
  "  tools WORLD.json [--json]\n"
  "                        start the world's MCP servers and list each agent's tools\n"
  "  replay CHAT_ID|SNAPSHOT.json [--db DIR] [--json] [--delay MS]\n"
  "                        print a saved chat as run printed it (never calls an LLM)\n"
  "  serve [WORLD.json ...] [--db DIR] [--listen 127.0.0.1:8080] [--token-file FILE]\n"
  "                        serve worlds over HTTP: JSON API, live event streams, a web page\n"
  "  chats list|show|new|delete|export|import|branch ...\n"
  "                        manage saved chats (agora chats --help)\n"
  "  worlds list|show|export|delete ...\n"
  "                        manage stored worlds (agora worlds --help)\n"
  "  host WORLD.json --nats URL [--agents A,B]\n"
  "                        answer for a share of a world's agents on NATS (agora host --help)\n"
  "  cache stats|clear [--older-than 30d]\n"
  "                        the LLM response cache (agora cache --help)\n"
  "  memory CHAT_ID AGENT [--query TEXT] [--json] [--db DIR]\n"
  "                        what an agent remembers in a chat (memory mode stream)\n"
  "  help, --help, -h      print this text\n"
  "  --version             print agora's version\n"
  "\n"
  "run, console and say take --model M, --provider P and --base-url URL for every agent; WORLD-ID\n"
  "(or the world's name) opens a world the database holds (agora worlds list).\n"
  "run, console, say and serve take --llm-cache off|use|replay and --cache-db DIR: the LLM response\n"
  "cache (agora cache --help).\n"
  "Run 'agora COMMAND --help' for a command's options. Exit status: 0 success, 1 runtime failure\n"
  "(an LLM unreachable after retries, a storage error), 2 bad usage or input, 3 run/say stopped at\n"
  "the world's budget.\n"
  "Data lives in --db DIR, else $AGORA_HOME, else $XDG_DATA_HOME/agora, else ~/.local/share/agora.\n"
  "The reference: docs/cli.md, docs/world-file.md and docs/behaviour.md in the source, and agora(1).\n";

int cli_error(int err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int status = ag_vreport(err, fmt, ap);
  va_end(ap);
  return status;
}

int cli_is_help(const char *arg) { return !strcmp(arg, "-h") || !strcmp(arg, "--help"); }

/* Every agent on an HTTP provider may hold a connection while its call is in flight: let a big world
 * have as many descriptors as the system allows (bounded), instead of the soft default of 1024. */
static void raise_fd_limit(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max) return;
  rl.rlim_cur = rl.rlim_max < 65536 ? rl.rlim_max : 65536;
  setrlimit(RLIMIT_NOFILE, &rl);
}

/* A command's output that did not reach its destination (a full disk, /dev/full, a closed pipe) is a
 * failure: the person would otherwise trust a truncated export. Checked once, at exit. */
static int check_stdout(int status) {
  errno = 0;
  int failed = fflush(stdout) != 0;
  int err = errno; /* a write that failed earlier left only ferror, not its errno */
  failed |= ferror(stdout) != 0;
  if (fclose(stdout) != 0 && !failed) failed = 1, err = errno;
  if (!failed) return status;
  if (err) fprintf(stderr, "agora: cannot write the output: %s\n", strerror(err));
  else fputs("agora: cannot write the output: a write to stdout failed\n", stderr);
  return status ? status : 1;
}

static int dispatch(int argc, char **argv);

int main(int argc, char **argv) {
  ag_heap_tune();
  return check_stdout(dispatch(argc, argv)); /* the library sets up its process-wide parts itself */
}

static int dispatch(int argc, char **argv) {
  raise_fd_limit();
  if (argc < 2) {
    fputs(usage, stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (cli_is_help(cmd) || !strcmp(cmd, "help")) {
    fputs(usage, stdout);
    return 0;
  }
  if (!strcmp(cmd, "--version")) {
    printf("agora %s\n", agora_version()); /* the library's: the binary runs on libagora.so.0 */
    return 0;
  }
  agora_process_name(cmd); /* a chat this process holds names it: "in use by pid N (run)" */
  if (!strcmp(cmd, "run")) return cli_run(argc - 2, argv + 2);
  if (!strcmp(cmd, "replay")) return cli_replay(argc - 2, argv + 2);
  if (!strcmp(cmd, "chats")) return cli_chats(argc - 2, argv + 2);
  if (!strcmp(cmd, "worlds")) return cli_worlds(argc - 2, argv + 2);
  if (!strcmp(cmd, "console")) return cli_console(argc - 2, argv + 2);
  if (!strcmp(cmd, "say")) return cli_say(argc - 2, argv + 2);
  if (!strcmp(cmd, "init")) return cli_init(argc - 2, argv + 2);
  if (!strcmp(cmd, "serve")) return cli_serve(argc - 2, argv + 2);
  if (!strcmp(cmd, "tools")) return cli_tools(argc - 2, argv + 2);
  if (!strcmp(cmd, "host")) return cli_host(argc - 2, argv + 2);
  if (!strcmp(cmd, "cache")) return cli_cache(argc - 2, argv + 2);
  if (!strcmp(cmd, "memory")) return cli_memory(argc - 2, argv + 2);
  fprintf(stderr, "agora: unknown command '%s'\n\n%s", cmd, usage);
  return 2;
}
