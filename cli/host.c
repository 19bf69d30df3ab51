/* agora host: runs a share of a world's agents on NATS JetStream (docs/distributed.md) until stopped,
 * printing the world's transcript as the stream delivers it. */
#include "cli/cli.h"

#include "chat/archive.h"
#include "chat/session.h"
#include "cli/db.h"

#include "cli/key_env.h"
#include "cli/load.h"
#include "cli/nats_args.h"
#include "cli/nats_chats.h"
#include "cli/output.h"
#include "cli/prepare.h"
#include "cluster/cluster.h"

#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static const char host_usage[] =
  "usage: agora host WORLD.json --nats URL [--agents A,B,...] [--lease-ms MS] [--nats-creds FILE]\n"
  "                 [--nats-ca FILE] [--nats-replicas N] [--db DIR] [--json] [--allow-env NAME]\n"
  "                 [--model M] [--provider P] [--base-url URL]\n"
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
  "Credentials from the environment: AGORA_NATS_TOKEN, or AGORA_NATS_USER and AGORA_NATS_PASSWORD;\n"
  "AGORA_NATS_SIGNING_KEY (the same in every process of the world): records are signed, and unsigned or\n"
  "forged ones refused. It says on stderr which agents it holds when that changes.\n"
  "\n"
  "Exit status: 0 stopped, 1 runtime failure, 2 bad usage, input, credentials or an unreachable server.\n";

typedef struct host_args {
  const char *world_path, *db;
  int json;
  cluster_opts nats;
  cli_allow_env allow;
  cli_overrides over;
} host_args;

static int parse_args(int argc, char **argv, host_args *a) {
  memset(a, 0, sizeof *a);
  cli_nats_defaults(&a->nats);
  a->nats.hosting = 1;
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    int taken = cli_nats_arg(&a->nats, "host", 1, argc, argv, &i);
    if (!taken) taken = cli_override_arg(&a->over, "host", argc, argv, &i);
    if (!taken && !strcmp(s, "--allow-env")) {
      int st = cli_allow_env_arg(&a->allow, "host", argc, argv, &i);
      taken = st ? st : 1;
    }
    if (taken > 1) return taken;
    if (taken) continue;
    if (!strcmp(s, "--json")) a->json = 1;
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

static void on_stop(evutil_socket_t sig, short what, void *arg) {
  (void)sig, (void)what;
  event_base_loopbreak(arg);
}

/* --db: the copy follows the chat the stream is on. */
static void host_follow(void *ud, const char *chat) {
  ag_errmsg em = {""};
  int rc = chat_session_follow(ud, chat, &em);
  if (rc) fprintf(stderr, "agora: host: cannot store chat %s: %s\n", chat, em.text[0] ? em.text : ag_strerror(rc));
}

static int host_serve(struct event_base *base, world *w, store *st, chat_session *cs, const host_args *a) {
  ag_errmsg em = {""};
  cluster *c = NULL;
  cli_nats_chats *records = NULL; /* --db: the copy's titles, new and deleted chats agree with everyone's */
  int rc = cluster_open(w, &a->nats, &c, &em);
  if (!rc && cs) cluster_on_chat(c, host_follow, cs);
  if (!rc && cs) rc = cli_nats_chats_open(c, st, cs, &records);
  if (!rc) rc = cluster_wait_ready(c, 60000, &em);
  if (rc) {
    cli_nats_chats_free(records);
    cli_nats_leave(c);
    return cli_error(rc, "host: %s", em.text[0] ? em.text : ag_strerror(rc));
  }
  struct event *sigint = evsignal_new(base, SIGINT, on_stop, base), *sigterm = evsignal_new(base, SIGTERM, on_stop, base);
  if (sigint) event_add(sigint, NULL);
  if (sigterm) event_add(sigterm, NULL);
  fprintf(stderr, "agora: hosting world %s on %s\n", world_id(w), a->nats.url);
  event_base_dispatch(base);
  if (sigint) event_free(sigint);
  if (sigterm) event_free(sigterm);
  cli_nats_chats_free(records);
  cli_nats_leave(c);
  return 0;
}

int cli_host(int argc, char **argv) {
  if (argc > 0 && cli_is_help(argv[0])) {
    fputs(host_usage, stdout);
    return 0;
  }
  host_args a;
  int status = parse_args(argc, argv, &a);
  if (status) return status;
  world_spec spec;
  ag_errmsg em = {""};
  struct event_base *base = NULL;
  world *w = NULL;
  output *out = NULL;
  store *st = NULL;
  chat_session *cs = NULL;
  int rc = world_spec_load(a.world_path, &spec, &em);
  if (rc) return cli_error(rc, "%s", em.text);
  if ((rc = cli_spec_prepare(&spec, &a.over))) status = cli_error(rc, "%s", ag_strerror(rc));
  else if ((rc = cluster_init())) status = cli_error(rc, "host: cannot start the NATS client");
  else if ((rc = cli_world_build(a.world_path, &spec, &base, &w, &em)) || (rc = cli_key_env_check(w, a.world_path, &a.allow, &em)))
    status = cli_error(rc, "%s", em.text);
  else if ((rc = output_new(stdout, world_id(w), &(output_opts){a.json, 0, 0, 0}, &out)) ||
           (rc = bus_subscribe(world_bus(w), BUS_MESSAGE | BUS_EVENT, BUS_PHASE_OUTPUT, output_on_bus, out, NULL)))
    status = cli_error(rc, "%s", ag_strerror(rc));
  else if (a.db && ((rc = cli_store_open(a.db, &st, &em)) || (rc = chat_session_open(st, w, &cs, &em))))
    status = cli_error(rc, "host: %s", em.text[0] ? em.text : ag_strerror(rc));
  else
    status = host_serve(base, w, st, cs, &a);
  if (out) output_done(out);
  chat_session_free(cs);
  chat_store_close(st);
  world_free(w);
  output_free(out);
  if (base) event_base_free(base);
  world_spec_free(&spec);
  return status;
}
