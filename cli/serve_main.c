/* agora serve's arguments and token (the server itself is serve/): parsing, then serve_run. */
#include "cli/args.h"
#include "cli/cli.h"
#include "common/error.h"
#include "common/buf.h"
#include "serve/serve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char serve_usage[] =
  "usage: agora serve [WORLD.json ...] [--db DIR] [--listen HOST:PORT] [--token-file FILE]\n"
  "                   [--max-connections N] [--max-streams N]\n"
  "                   [--nats URL [--nats-creds FILE] [--nats-ca FILE] [--nats-replicas N]]\n"
  "\n"
  "Serve worlds over HTTP: a JSON API, live event streams (Server-Sent Events) and a web page at /.\n"
  "The worlds named are loaded (and stored, as console does); every other world in the database is\n"
  "loaded when first used. Stop with Ctrl-C or SIGTERM: replies in flight are cancelled, everything is\n"
  "saved, the streams end, exit 0 (1 when messages accepted could not be saved, e.g. on a full disk).\n"
  "\n"
  "  --db DIR           the database directory (default: $AGORA_HOME, $XDG_DATA_HOME/agora,\n"
  "                     ~/.local/share/agora)\n"
  "  --listen HOST:PORT the address to listen on (default 127.0.0.1:8080; port 0 picks a free one,\n"
  "                     the first line printed says which)\n"
  "  --token-file FILE  every request must carry 'Authorization: Bearer TOKEN' with the token in FILE\n"
  "                     (else $AGORA_TOKEN when set); required to listen on a non-loopback address\n"
  "  --allow-env NAME   let api_key_env name NAME although it does not end in _API_KEY, _TOKEN or _KEY\n"
  "  --llm-cache off|use|replay, --cache-db DIR\n"
  "                     every world's LLM response cache (as for run; default: a world file's llm_cache)\n"
  "  --allow-key-to URL a stored world's agents may send their API key to base_url URL (otherwise\n"
  "                     only to the provider's default URL; a stored world may be someone else's)\n"
  "  --nats URL         the worlds named join their world on NATS JetStream: the streams show what\n"
  "                     anyone publishes, messages posted go to the world's stream and `agora host`\n"
  "                     processes answer (docs/distributed.md); with --nats-creds FILE, --nats-ca FILE,\n"
  "                     --nats-replicas N; AGORA_NATS_TOKEN or AGORA_NATS_USER and AGORA_NATS_PASSWORD\n"
  "                     from the environment. Worlds loaded from the database stay in this process\n"
  "  --max-connections N\n"
  "                     connections open at once (default: 3/4 of the descriptor limit, at most 8192);\n"
  "                     a request on one past it gets 503\n"
  "  --max-streams N    event streams open at once (default: 7/8 of --max-connections); past it 503\n"
  "\n"
  "The API is described in docs/serve.md.\n";

/* A whole number from 1 to 1,000,000 for option name (argv[++*i]); 0, or the usage error's status. */
static int count_arg(int argc, char **argv, int *i, long *out) {
  const char *name = argv[*i];
  if (*i + 1 >= argc) return cli_error(AG_ERR_INVALID, "serve: %s needs a value", name);
  const char *v = argv[++*i];
  char *end;
  long n = strtol(v, &end, 10);
  if (end == v || *end || n < 1 || n > 1000000)
    return cli_error(AG_ERR_INVALID, "serve: %s: expected a whole number from 1 to 1000000, got '%s'", name, v);
  *out = n;
  return 0;
}

/* The command line: serve's options, and those shared with the other commands that become its
 * library options (o.open). */
typedef struct serve_args {
  serve_opts o;
  cli_allow allow;
  cli_overrides over;
  cli_nats nats;
} serve_args;

static int parse_args(int argc, char **argv, serve_args *sa) {
  memset(sa, 0, sizeof *sa);
  serve_opts *a = &sa->o;
  a->listen = "127.0.0.1:8080";
  cli_nats_defaults(&sa->nats);
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    int taken = cli_nats_arg(&sa->nats, "serve", 0, argc, argv, &i);
    if (taken > 1) return taken;
    if (taken) continue;
    if (!strcmp(s, "--db") || !strcmp(s, "--listen") || !strcmp(s, "--token-file")) {
      if (i + 1 >= argc) return cli_error(AG_ERR_INVALID, "serve: %s needs a value", s);
      const char **dst = !strcmp(s, "--db") ? &a->db : !strcmp(s, "--listen") ? &a->listen : &a->token_file;
      *dst = argv[++i];
    } else if (!strcmp(s, "--max-connections") || !strcmp(s, "--max-streams")) {
      int st = count_arg(argc, argv, &i, !strcmp(s, "--max-streams") ? &a->max_streams : &a->max_conns);
      if (st) return st;
    } else if (cli_is_allow_arg(s)) {
      int st = cli_allow_env_arg(&sa->allow, "serve", argc, argv, &i);
      if (st) return st;
    } else if (!strcmp(s, "--llm-cache") || !strcmp(s, "--cache-db")) {
      int st = cli_override_arg(&sa->over, "serve", argc, argv, &i);
      if (st > 1) return st;
    } else if (s[0] == '-' && s[1]) {
      return cli_error(AG_ERR_INVALID, "serve: unknown option '%s' (see agora serve --help)", s);
    } else if (a->n_files < (int)(sizeof a->files / sizeof *a->files)) {
      a->files[a->n_files++] = s;
    } else {
      return cli_error(AG_ERR_INVALID, "serve: too many world files");
    }
  }
  if (sa->nats.url && !a->n_files)
    return cli_error(AG_ERR_INVALID, "serve: --nats needs the world file(s) to join (agora serve WORLD.json --nats URL)");
  cli_options_fill(&a->open, &sa->allow, &sa->over, &sa->nats);
  return 0;
}

/* The token from --token-file (its first line, without surrounding white space), else $AGORA_TOKEN. */
static int read_token(const serve_opts *a, char **out) {
  *out = NULL;
  char *text = NULL;
  if (a->token_file) {
    ag_errmsg em = {""};
    size_t len;
    int rc = ag_file_read(a->token_file, 4096, &text, &len, &em);
    if (rc) return cli_error(AG_ERR_INVALID, "serve: --token-file %s", em.text);
  } else {
    const char *env = getenv("AGORA_TOKEN");
    if (!env || !env[0]) return 0;
    if (!(text = strdup(env))) return cli_error(AG_ERR_NOMEM, "serve: out of memory");
  }
  char *p = text + strspn(text, " \t\r\n");
  size_t n = strcspn(p, "\r\n");
  while (n && (p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
  if (n < 8) {
    free(text);
    return cli_error(AG_ERR_INVALID, "serve: the token (%s) must be at least 8 characters",
                     a->token_file ? a->token_file : "AGORA_TOKEN");
  }
  memmove(text, p, n);
  text[n] = '\0';
  *out = text;
  return 0;
}

int cli_serve(int argc, char **argv) {
  if (argc > 0 && cli_is_help(argv[0])) {
    fputs(serve_usage, stdout);
    return 0;
  }
  serve_args sa;
  serve_opts *a = &sa.o;
  int status = parse_args(argc, argv, &sa);
  if (status || (status = read_token(a, &a->token))) return status;
  if (!a->token && !serve_listen_is_loopback(a->listen)) {
    fprintf(stderr, "agora: serve: --listen %s is not a loopback address: pass --token-file FILE (or set "
                    "AGORA_TOKEN) so that every request needs the token\n", a->listen);
    return 2;
  }
  return serve_run(a);
}
