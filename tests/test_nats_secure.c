/* Security of a world on NATS with real servers started here on loopback: TLS to nats-server (a CA and a
 * server certificate made with openssl in a temp dir; the CA from --nats-ca or SSL_CERT_FILE; a wrong or
 * missing CA is a clear error and exit 2, nothing stored), user/password and token from the environment
 * (a wrong one: exit 2, never echoed), --nats-creds with a server in operator (JWT) mode, and no secret in the stream, the key-value buckets (the server's
 * JetStream files), any database copy, or any output. */
#include "support/nats_peer.h"
#include "support/nats_proc.h"
#include "support/nats_suite.h"
#include "support/proc.h"
#include "support/unit.h"
#include "support/wait.h"

#include <nats/nats.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char duo_world[] =
  "{\"name\": \"Duo\", \"defaults\": {\"provider\": \"script\"}, \"agents\": ["
  " {\"name\": \"alice\", \"replies\": [\"@human alice one\", \"@human alice two\"]},"
  " {\"name\": \"bob\", \"replies\": [\"@human bob one\"]}],"
  " \"script\": [{\"from\": \"human\", \"text\": \"@alice hello over a secure link\"},"
  "              {\"from\": \"human\", \"text\": \"@bob and you\"}]}\n";

static int sh(const char *fmt, const char *a, const char *b) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, fmt, a, b);
  return system(cmd);
}

/* A CA, a server certificate for 127.0.0.1 signed by it, and another CA that signed nothing. */
static int make_certs(const char *d) {
  static const char *const steps[] = {
    "cd '%s' && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj '/CN=Agora Test CA'",
    "cd '%s' && openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj '/CN=127.0.0.1'",
    "cd '%s' && printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > ext.cnf && openssl x509 -req -in srv.csr"
    " -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile ext.cnf",
    "cd '%s' && openssl req -x509 -newkey rsa:2048 -nodes -keyout wrong.key -out wrong.pem -days 2 -subj '/CN=Wrong CA'",
  };
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s >/dev/null 2>&1", steps[i]);
    if (sh(cmd, d, NULL)) return -1;
  }
  return 0;
}

/* 1 when some file under path holds needle (bytes, anywhere). */
static int holds(const char *path, const char *needle) { return sh("grep -r -a -q -F -e '%s' '%s'", needle, path) == 0; }

typedef struct host_wait {
  pid_t pid;
  const char *err;
  int status; /* -1 while it runs */
} host_wait;

static int hosting_or_gone(void *arg) {
  host_wait *hw = arg;
  if (file_wait_for(hw->err, "hosting world duo", 0)) return 1;
  return (hw->status = agora_wait(hw->pid, 0)) >= 0;
}

/* The host in the background, once it hosts the world: its pid, or -1. nats-server 2.9 in operator mode
 * was seen to refuse the very first client after "Server is ready" (an authentication error, the next
 * connection accepted: CI, once), so a host refused at once is started again, at most twice; a wrong
 * credential is refused every time (test_creds checks that too). */
static pid_t start_host(const char *const *args, const char *out, const char *err, const char *const *env) {
  for (int tries = 0; tries < 3; tries++) {
    host_wait hw = {.pid = agora_spawn(args, out, err, env), .err = err, .status = -1};
    if (hw.pid < 0) return -1;
    int seen = wait_until(hosting_or_gone, &hw, 20000);
    if (seen && hw.status < 0) return hw.pid;
    if (hw.status < 0) agora_stop(hw.pid, SIGTERM); /* still running after the deadline, never hosting */
  }
  return -1;
}

/* A world's run through a secured server: a host, `run --nats` with a database, then every file of the
 * servers, the databases and the outputs is searched for the secret. env: the credentials (and CA)
 * both use; args_extra: more options for both (NULL-terminated, may be empty). */
static void run_and_search(const char *tag, const char *url, const char *store, const char *const *env,
                           const char *const *extra, const char *secret) {
  char world[4096], hdb[4096], rdb[4096], hout[4096], herr[4096];
  snprintf(world, sizeof world, "%s", nats_path("duo.json"));
  unit_write_file(world, duo_world);
  snprintf(hdb, sizeof hdb, "%s/%s-host.db", nats_tmp(), tag);
  snprintf(rdb, sizeof rdb, "%s/%s-run.db", nats_tmp(), tag);
  snprintf(hout, sizeof hout, "%s/%s-host.out", nats_tmp(), tag);
  snprintf(herr, sizeof herr, "%s/%s-host.err", nats_tmp(), tag);
  const char *host[16] = {"host", world, "--nats", url, "--lease-ms", "900", "--db", hdb, "--json"};
  const char *run[16] = {"run", world, "--nats", url, "--db", rdb, "--json"};
  for (size_t i = 0; extra[i]; i++) host[9 + i] = run[7 + i] = extra[i];
  pid_t h = start_host(host, hout, herr, env);
  if (h < 0) {
    unit_fail_(__FILE__, __LINE__, "%s: the host never hosted the world (see %s); no run without it", tag, herr);
    return; /* `run --nats` would wait for a host for ever */
  }
  proc_result r;
  CHECK_INT(proc_agora(run, NULL, env, &r), 0);
  /* The same server refused a run once in CI right after accepting the host, with the same credentials
   * ("Authorization Violation" at connect: nats-server 2.9's operator mode, as in start_host). Refused at
   * connect, it is run once more; a wrong credential is refused both times (test_creds checks that). */
  if (r.status == 2 && strstr(r.err, "Authorization Violation")) {
    proc_result_free(&r);
    unit_rmrf(rdb);
    CHECK_INT(proc_agora(run, NULL, env, &r), 0);
  }
  CHECK_INT(r.status, 0);
  if (r.status) fprintf(stderr, "%s: run: %s\n", tag, r.err);
  char *m = proc_messages(r.out);
  CHECK_STR(m, "human|human|@alice hello over a secure link\nalice|agent|@human alice one\n"
               "human|human|@bob and you\nbob|agent|@human bob one\n");
  CHECK(!strstr(r.out, secret) && !strstr(r.err, secret));
  free(m);
  proc_result_free(&r);
  CHECK_INT(agora_stop(h, SIGTERM), 0);
  /* the searches can find what is there: the messages are in the stream's files and in both copies */
  CHECK(holds(store, "@alice hello over a secure link"));
  CHECK(holds(hdb, "@human bob one"));
  CHECK(holds(rdb, "@human bob one"));
  /* and the secret is nowhere: stream, buckets, databases, outputs */
  CHECK(!holds(store, secret));
  CHECK(!holds(hdb, secret));
  CHECK(!holds(rdb, secret));
  CHECK(!holds(hout, secret));
  CHECK(!holds(herr, secret));
}

static void test_tls_user_password(void) {
  char dir[2048];
  snprintf(dir, sizeof dir, "%s/tls", nats_tmp());
  mkdir(dir, 0700);
  if (make_certs(dir)) {
    unit_fail_(__FILE__, __LINE__, "openssl could not make the certificates");
    return;
  }
  char extra[8192 + 4096];
  snprintf(extra, sizeof extra,
           "tls { cert_file: \"%s/srv.pem\", key_file: \"%s/srv.key\" }\n"
           "authorization { user: agora, password: \"Pw-7f3a9-secret\" }\n", dir, dir);
  nats_node node;
  if (nats_start(dir, 1, extra, &node)) {
    unit_fail_(__FILE__, __LINE__, "nats-server did not start");
    return;
  }
  char url[128], ca[4096], wrong[4096], cafile[4200];
  snprintf(url, sizeof url, "tls://127.0.0.1:%d", node.port);
  snprintf(ca, sizeof ca, "%s/ca.pem", dir);
  snprintf(wrong, sizeof wrong, "%s/wrong.pem", dir);
  snprintf(cafile, sizeof cafile, "SSL_CERT_FILE=%s", ca);
  const char *user[] = {"AGORA_NATS_USER=agora", "AGORA_NATS_PASSWORD=Pw-7f3a9-secret", NULL};
  const char *user_env_ca[] = {"AGORA_NATS_USER=agora", "AGORA_NATS_PASSWORD=Pw-7f3a9-secret", cafile, NULL};
  const char *with_ca[] = {"--nats-ca", ca, NULL};
  char js[4200];
  snprintf(js, sizeof js, "%s/js0", dir);
  run_and_search("tls", url, js, user, with_ca, "Pw-7f3a9-secret");
  /* the CA from SSL_CERT_FILE works as well */
  char world[4096];
  snprintf(world, sizeof world, "%s", nats_path("duo.json"));
  const char *host[] = {"host", world, "--nats", url, NULL};
  pid_t h = agora_spawn(host, nats_path("envca.out"), nats_path("envca.err"), user_env_ca);
  CHECK(file_wait_for(nats_path("envca.err"), "hosting world duo", 20000));
  CHECK_INT(agora_stop(h, SIGTERM), 0);
  /* a CA that did not sign the server's certificate: refused at once, exit 2, nothing stored */
  proc_result r;
  const char *bad_ca[] = {"run", world, "--nats", url, "--nats-ca", wrong, "--db", nats_path("badca.db"), NULL};
  CHECK_INT(proc_agora(bad_ca, NULL, user, &r), 0);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "cannot connect to NATS at tls://127.0.0.1") != NULL);
  CHECK(strstr(r.err, "certificate") != NULL);
  CHECK(access(nats_path("badca.db"), F_OK) != 0);
  proc_result_free(&r);
  /* a CA file that is not there: named */
  const char *no_ca[] = {"console", world, "--nats", url, "--nats-ca", nats_path("none.pem"), "--db", nats_path("noca.db"), NULL};
  CHECK_INT(proc_agora(no_ca, "", user, &r), 0);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "--nats-ca ") != NULL && strstr(r.err, "none.pem: No such file or directory") != NULL);
  proc_result_free(&r);
  /* a wrong password: exit 2, and neither password is echoed */
  const char *wrong_pw[] = {"AGORA_NATS_USER=agora", "AGORA_NATS_PASSWORD=Wrong-pw-5521", cafile, NULL};
  CHECK_INT(proc_agora(host, NULL, wrong_pw, &r), 0);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "cannot connect to NATS at") != NULL);
  CHECK(!strstr(r.err, "Wrong-pw-5521") && !strstr(r.err, "Pw-7f3a9-secret"));
  proc_result_free(&r);
  nats_node_stop(&node, SIGTERM);
}

static void test_token(void) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/token", nats_tmp());
  mkdir(dir, 0700);
  nats_node node;
  if (nats_start(dir, 1, "authorization { token: \"Tok-93b1c-secret\" }", &node)) {
    unit_fail_(__FILE__, __LINE__, "nats-server did not start");
    return;
  }
  const char *tok[] = {"AGORA_NATS_TOKEN=Tok-93b1c-secret", NULL};
  const char *none[] = {NULL};
  char js[4200];
  snprintf(js, sizeof js, "%s/js0", dir);
  run_and_search("token", nats_url(&node, 0, 1), js, tok, none, "Tok-93b1c-secret");
  nats_node_stop(&node, SIGTERM);
}

/* Operator mode: the operator, accounts, a user and its credentials file are made by
 * tests/support/nats_jwt.py (ed25519 from python3-cryptography; nsc is not in Debian). */
static void test_creds(void) {
  char dir[2048], cmd[8192];
  snprintf(dir, sizeof dir, "%s/creds", nats_tmp());
  mkdir(dir, 0700);
  const char *src = getenv("AGORA_SRC");
  snprintf(cmd, sizeof cmd, "python3 '%s/tests/support/nats_jwt.py' '%s'", src ? src : ".", dir);
  if (system(cmd)) {
    unit_fail_(__FILE__, __LINE__, "nats_jwt.py failed (python3 and python3-cryptography are needed)");
    return;
  }
  char conf[4096], seedf[4096], creds[4096], stranger[4096];
  snprintf(conf, sizeof conf, "%s/server.conf", dir);
  snprintf(seedf, sizeof seedf, "%s/user.seed", dir);
  snprintf(creds, sizeof creds, "%s/user.creds", dir);
  snprintf(stranger, sizeof stranger, "%s/stranger.creds", dir);
  char *extra = unit_read_file(conf), *seed = unit_read_file(seedf);
  nats_node node;
  if (!extra || !seed || strncmp(seed, "SU", 2) || nats_start(dir, 1, extra, &node)) {
    unit_fail_(__FILE__, __LINE__, "nats-server in operator mode did not start");
    free(extra), free(seed);
    return;
  }
  const char *with_creds[] = {"--nats-creds", creds, NULL};
  const char *none[] = {NULL};
  char js[4200];
  snprintf(js, sizeof js, "%s/js0", dir);
  const char *url = nats_url(&node, 0, 1);
  run_and_search("creds", url, js, none, with_creds, seed);
  /* a user of an account the server does not know, and no credentials at all: exit 2 */
  char world[4096];
  snprintf(world, sizeof world, "%s", nats_path("duo.json"));
  const char *other[] = {"host", world, "--nats", url, "--nats-creds", stranger, NULL};
  const char *bare[] = {"host", world, "--nats", url, NULL};
  proc_result r;
  CHECK_INT(proc_agora(other, NULL, NULL, &r), 0);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "Authorization Violation") != NULL);
  CHECK(!strstr(r.err, "SU")); /* no seed */
  proc_result_free(&r);
  CHECK_INT(proc_agora(bare, NULL, NULL, &r), 0);
  CHECK_INT(r.status, 2);
  proc_result_free(&r);
  free(extra), free(seed);
  nats_node_stop(&node, SIGTERM);
}

/* A peer's JetStream publish of data on subject as user (with password pw): 0 when the stream took it. */
static int publish_as(const char *url, const char *user, const char *pw, const char *subject, const char *data) {
  return nats_peer_publish(&(nats_peer_msg){.url = url, .user = user, .pw = pw, .subject = subject, .data = data});
}

/* Who may publish (issue 28 item 13): docs/nats-permissions.conf as it stands. The world's processes,
 * allowed the world's subjects and the JetStream calls Agora makes, run the world with no permission
 * violation; another user of the server cannot put a record in the world's stream. */
static void test_permissions(void) {
  char dir[2048], conf[4096], url[128];
  snprintf(dir, sizeof dir, "%s/perm", nats_tmp());
  mkdir(dir, 0700);
  const char *src = getenv("AGORA_SRC");
  snprintf(conf, sizeof conf, "%s/docs/nats-permissions.conf", src ? src : ".");
  char *extra = unit_read_file(conf);
  nats_node node;
  if (!extra || nats_start(dir, 1, extra, &node)) {
    unit_fail_(__FILE__, __LINE__, "nats-server with %s did not start", conf);
    free(extra);
    return;
  }
  snprintf(url, sizeof url, "%s", nats_url(&node, 0, 1));
  const char *user[] = {"AGORA_NATS_USER=agora", "AGORA_NATS_PASSWORD=agora-pass-1234", NULL};
  const char *none[] = {NULL};
  char js[4200];
  snprintf(js, sizeof js, "%s/js0", dir);
  run_and_search("perm", url, js, user, none, "agora-pass-1234");
  /* the other user's forged message is refused by the server; the world's user may publish there */
  const char *forged = "{\"t\":\"msg\",\"chat\":\"c1\",\"from\":\"alice\",\"kind\":\"agent\",\"text\":\"forged\",\"ts\":1}";
  CHECK(publish_as(url, "other", "other-pass-1234", "agora.duo.c1.msg", forged) != 0);
  CHECK(publish_as(url, "other", "other-pass-1234", "$KV.agora-duo-agents.alice", "hother") != 0);
  CHECK(!holds(js, "\"text\":\"forged\""));
  CHECK(publish_as(url, "agora", "agora-pass-1234", "agora.duo.c1.msg", forged) == 0); /* the check itself works */
  nats_node_stop(&node, SIGTERM);
  char log[4200];
  snprintf(log, sizeof log, "%s/n0.log", dir);
  char *text = unit_read_file(log);
  CHECK(text && !strstr(text, "User \"agora\"")); /* no violation by the world's processes */
  CHECK(text && strstr(text, "Violation - User \"other\"")); /* and the other user's were seen */
  if (text && strstr(text, "User \"agora\"")) fprintf(stderr, "%s\n", text);
  free(text);
  free(extra);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {
    {"tls_user_password", test_tls_user_password}, {"token", test_token}, {"creds", test_creds},
    {"permissions", test_permissions},
  };
  return nats_suite_main(argc, argv, tests, sizeof tests / sizeof *tests, "openssl python3");
}
