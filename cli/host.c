/* agora host: runs a share of a world's agents on NATS JetStream (docs/distributed.md) until stopped,
 * printing the world's transcript as the stream delivers it. */
#include "agora.h"
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/event_print.h"
#include "cli/runner.h"
#include "common/error.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static const char host_usage[] =
  "usage: agora host WORLD.json --nats URL [--agents A,B,...] [--lease-ms MS] [--nats-creds FILE]\n"
  "                 [--nats-ca FILE] [--nats-replicas N] [--db DIR] [--json] [--yes] [--allow-env NAME]\n"
  "                 [--allow-key-to URL] [--model M] [--provider P] [--base-url URL]\n"
  "\n"
  "Joins WORLD.json's world on NATS JetStream and answers for a share of its agents until stopped\n"
  "(SIGINT or SIGTERM; its agents then go to the other hosts at once). Each agent is answered by one\n"
  "live host at a time, through a lease the host renews; when a host dies its leases run out and the\n"
  "others take its agents over, finishing the turns it had started. The transcript is printed as the\n"
  "stream delivers it. See docs/distributed.md.\n"
  "\n"
  "  --nats URL          the server(s): nats://host:4222 or tls://host:4222, several joined by ','\n"
  "  --agents A,B        answer only for these agents (ids or names); default: a fair share of all\n"
  "  --lease-ms MS       an agent's lease lasts MS without a renewal (default 3000)\n"
  "  --nats-creds FILE   a NATS credentials file (user JWT and NKey seed)\n"
  "  --nats-ca FILE      CA certificates for tls:// (default: SSL_CERT_FILE, CURL_CA_BUNDLE, system)\n"
  "  --nats-replicas N   copies of the world's stream and lease buckets when made (default 1; 3 in a\n"
  "                      three-node cluster)\n"
  "  --db DIR            keep a copy of the world's chats in DIR, filled from the stream (chats, replay\n"
  "                      and export work on it); without it nothing is written\n"
  "  --json              one JSON object per line\n"
  "  --yes               approve every tool call that asks first (nobody is at a host to ask); without\n"
  "                      it such calls are denied, and ask_human is answered that nobody is there\n"
  "Credentials from the environment: AGORA_NATS_TOKEN, or AGORA_NATS_USER and AGORA_NATS_PASSWORD;\n"
  "AGORA_NATS_SIGNING_KEY (the same in every process of the world): records are signed, and unsigned or\n"
  "forged ones refused. It says on stderr which agents it holds when that changes.\n"
  "\n"
  "Exit status: 0 stopped, 1 runtime failure, 2 bad usage, input, credentials or an unreachable server.\n";

typedef struct host_args {
  const char *world_path, *db;
  int json, yes;
  cli_nats nats;
  cli_allow allow;
  cli_overrides over;
} host_args;

static int parse_args(int argc, char **argv, host_args *a) {
  memset(a, 0, sizeof *a);
  cli_nats_defaults(&a->nats);
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    int taken = cli_nats_arg(&a->nats, "host", 1, argc, argv, &i);
    if (!taken) taken = cli_override_arg(&a->over, "host", argc, argv, &i);
    if (!taken && cli_is_allow_arg(s)) {
      int st = cli_allow_env_arg(&a->allow, "host", argc, argv, &i);
      taken = st ? st : 1;
    }
    if (taken > 1) return taken;
    if (taken) continue;
    if (!strcmp(s, "--json")) a->json = 1;
    else if (!strcmp(s, "--yes")) a->yes = 1;
    else if (!strcmp(s, "--db") && i + 1 < argc) a->db = argv[++i];
    else if (!strcmp(s, "--db")) return cli_error(AG_ERR_INVALID, "host: --db needs a value");
    else if (s[0] == '-' && s[1]) return cli_error(AG_ERR_INVALID, "host: unknown option '%s' (see agora host --help)", s);
    else if (!a->world_path) a->world_path = s;
    else return cli_error(AG_ERR_INVALID, "host: unexpected argument '%s'", s);
  }
  if (!a->world_path) return cli_error(AG_ERR_INVALID, "host: missing WORLD.json (see agora host --help)");
  if (!a->nats.url) return cli_error(AG_ERR_INVALID, "host: missing --nats URL");
  return 0;
}

/* host on libagora (include/agora.h, AGORA_HOST): the transcript printed from the library's events as the
 * stream delivers them, requests answered here, and SIGINT or SIGTERM noted by the handler and seen by a
 * tick, which ends agora_run_until_interrupt. */
typedef struct host_state {
  const host_args *a;
  cli_event_print print;
} host_state;

static volatile sig_atomic_t stop_seen;

static void on_stop(int sig) {
  (void)sig;
  stop_seen = 1;
}

/* Nobody sits at a host: --yes approves, else every request is denied with a reason. */
static void host_on_event(const agora_event *ev, void *ctx) {
  host_state *h = ctx;
  agora_world *w = agora_event_world(ev);
  if (agora_event_type(ev) == AGORA_EVENT_WITHDRAWN) return;
  if (agora_event_type(ev) != AGORA_EVENT_REQUEST) cli_event_print_one(&h->print, ev);
  else if (strcmp(agora_event_kind(ev), "ask-human")) agora_answer(w, agora_event_request(ev), h->a->yes);
  else agora_reply(w, agora_event_request(ev), 0, "no human at this host: ask_human cannot be answered on `agora host`");
}

static void host_tick(agora_world *w, void *ctx) {
  (void)ctx;
  if (stop_seen) agora_interrupt(w);
}

/* Answers until SIGINT or SIGTERM. */
static void host_loop(agora_world *w, const host_args *a) {
  /* SA_RESTART, as libevent's signal events had: a write to stdout is not cut short by a stop */
  struct sigaction sa = {.sa_handler = on_stop, .sa_flags = SA_RESTART}, old_int, old_term;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  fprintf(stderr, "agora: hosting world %s on %s\n", agora_world_id(w), a->nats.url);
  agora_tick(w, 100, host_tick, NULL);
  agora_run_until_interrupt(w);
  agora_tick(w, 0, NULL, NULL);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
}

int cli_host(int argc, char **argv) {
  if (argc > 0 && cli_is_help(argv[0])) {
    fputs(host_usage, stdout);
    return 0;
  }
  host_args a;
  int status = parse_args(argc, argv, &a);
  if (status) return status;
  host_state h = {.a = &a, .print = cli_event_print_make(stdout, a.json, 0)};
  /* run's and say's options (no --yes there: a host answers its requests itself; --agents and --lease-ms
   * come with the nats fields), joined as a host */
  cli_runner_opts ro = {.no_save = !a.db, .allow = a.allow, .over = a.over, .nats = a.nats};
  agora_options o = cli_runner_options(&ro, "host", 0, host_on_event, &h);
  o.flags |= AGORA_OPTIONS_5 | AGORA_HOST;
  agora_world *w = NULL;
  int rc = agora_world_open(a.world_path, a.db, &o, &w);
  if (rc) status = cli_error(rc, "%s", agora_errmsg());
  else host_loop(w, &a);
  fflush(stdout);
  agora_world_close(w);
  fflush(stdout);
  return status;
}
