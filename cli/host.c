/* agora host: runs a share of a world's agents on NATS JetStream (docs/distributed.md) until stopped,
 * printing the world's transcript as the stream delivers it. */
#include "cli/cli.h"

#include "chat/archive.h"
#include "chat/session.h"
#include "runtime/db.h"

#include "runtime/key_env.h"
#include "cli/args.h"
#include "runtime/output.h"
#include "runtime/runtime.h"
#include "cluster/cluster.h"

#include <event2/event.h>
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
  cluster_opts nats;
  rt_allow_env allow;
  rt_overrides over;
} host_args;

static int parse_args(int argc, char **argv, host_args *a) {
  memset(a, 0, sizeof *a);
  cli_nats_defaults(&a->nats);
  a->nats.hosting = 1;
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

static void on_stop(evutil_socket_t sig, short what, void *arg) {
  (void)sig, (void)what;
  event_base_loopbreak(arg);
}

typedef struct host_out {
  const host_args *a;
  output *out;
  world *w;
} host_out;

/* The world is built: the transcript printer for it. */
static int host_on_world(void *ud, runtime *rt, ag_errmsg *em) {
  host_out *h = ud;
  h->w = rt_world(rt);
  int rc = output_new(stdout, world_id(rt_world(rt)), &(output_opts){.json = h->a->json}, &h->out);
  return rc ? ag_fail(em, rc, "%s", ag_strerror(rc)) : AG_OK;
}

/* Nobody sits at a host: --yes approves, else every request is denied with a reason. */
static void host_ask(void *ud, const world_approval *req) {
  host_out *h = ud;
  if (!req->question) world_approval_answer(h->w, req->id, h->a->yes);
  else world_approval_reply(h->w, req->id, 0, "no human at this host: ask_human cannot be answered on `agora host`");
}

static void host_on_bus(void *ud, bus_topic topic, void *payload) { output_on_bus(((host_out *)ud)->out, topic, payload); }

/* Answers until SIGINT or SIGTERM. */
static void host_loop(runtime *rt, const host_args *a) {
  struct event_base *base = rt_base(rt);
  struct event *sigint = evsignal_new(base, SIGINT, on_stop, base), *sigterm = evsignal_new(base, SIGTERM, on_stop, base);
  if (sigint) event_add(sigint, NULL);
  if (sigterm) event_add(sigterm, NULL);
  fprintf(stderr, "agora: hosting world %s on %s\n", world_id(rt_world(rt)), a->nats.url);
  event_base_dispatch(base);
  if (sigint) event_free(sigint);
  if (sigterm) event_free(sigterm);
}

int cli_host(int argc, char **argv) {
  if (argc > 0 && cli_is_help(argv[0])) {
    fputs(host_usage, stdout);
    return 0;
  }
  host_args a;
  int status = parse_args(argc, argv, &a);
  if (status) return status;
  ag_errmsg em = {""};
  store *st = NULL;
  runtime *rt = NULL;
  host_out h = {&a, NULL, NULL};
  int rc = a.db ? rt_store_open(a.db, &st, &em) : AG_OK;
  if (!rc)
    rc = rt_open(&(rt_opts){.cmd = "host", .world = a.world_path, .st = st, .db = a.db, .over = a.over,
                            .allow = &a.allow, .nats = &a.nats, .nats_role = RT_NATS_HOST,
                            .pick = st ? RT_CHAT_ATTACH : RT_CHAT_NONE, .mcp = 1, .on_world = host_on_world,
                            .approver = &(world_approver){host_ask, NULL}, .approver_ud = &h,
                            .on_bus = host_on_bus, .on_bus_ud = &h},
                 &rt, &em);
  if (rc) status = cli_error(rc, "%s", em.text);
  else host_loop(rt, &a);
  if (h.out) output_done(h.out);
  rt_close(rt);
  output_free(h.out);
  chat_store_close(st);
  return status;
}
