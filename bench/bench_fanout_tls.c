/* Fan-out over HTTPS beside plain HTTP: N agents (50, 200, 1000) answer one public message from the
 * loopback LLM server, directly (plain HTTP/1.1) and through nghttpx (TLS + HTTP/2, 100 streams a
 * connection, a generated CA), at 0, 200 and 400 ms latency, no storage. Each world runs in a fresh
 * process (this program re-executed) so that its CPU time and peak RSS are its own; connections and
 * TLS handshakes are counted on the server side (the loopback server's accept counter, nghttpx's
 * access log). Usage: bench_fanout_tls [runs]. */
#include "support/llm_server.h"
#include "support/tls_front.h"
#include "support/unit.h"
#include "world/world.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void count_replies(void *ud, bus_topic topic, void *payload) {
  if (topic == BUS_MESSAGE && ((ag_msg *)payload)->kind == AG_KIND_AGENT) ++*(int *)ud;
}

/* The child: one world of n agents on url (ca may be "-"), one message; prints
 * "wall_ms cpu_s maxrss_kib replies". CPU and RSS cover the whole process, world set-up included. */
static int child(const char *url, const char *ca, int n, int latency) {
  size_t cap = (size_t)n * 32 + 4096;
  char *json = malloc(cap);
  char ca_field[2048] = "";
  if (strcmp(ca, "-") != 0) snprintf(ca_field, sizeof ca_field, ", \"ca_file\": \"%s\"", ca);
  snprintf(json, cap,
           "{\"name\": \"fan\", \"defaults\": {\"provider\": \"openai\", \"base_url\": \"%s\", \"api_key_env\":"
           " \"BENCH_KEY\", \"model\": \"m\", \"system_prompt\": \"[[mock latency=%d reply=ok]]\"%s}, \"agents\": [",
           url, latency, ca_field);
  for (int i = 0; i < n; i++)
    snprintf(json + strlen(json), cap - strlen(json), "%s{\"name\": \"a%d\"}", i ? "," : "", i);
  strcat(json, "]}");
  world_spec spec;
  ag_errmsg em = {""};
  struct event_base *base = event_base_new();
  world *w = NULL;
  if (world_spec_parse(json, strlen(json), "bench", &spec, &em) || world_new(base, &spec, &w, &em)) {
    fprintf(stderr, "bench_fanout_tls: %s\n", em.text);
    return 1;
  }
  free(json);
  world_spec_free(&spec);
  int replies = 0;
  bus_subscribe(world_bus(w), BUS_MESSAGE, BUS_PHASE_OUTPUT, count_replies, &replies, NULL);
  double t0 = now_ms();
  world_publish(w, "human", "Roll call, everyone!", NULL);
  world_run_until_quiet(w);
  double dt = now_ms() - t0;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  printf("%.2f %.3f %ld %d\n", dt, cpu, ru.ru_maxrss, replies);
  world_free(w);
  event_base_free(base);
  return replies == n ? 0 : 1;
}

/* This process's CPU seconds: the loopback server's thread (the children are not counted). */
static double self_cpu(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

typedef struct result {
  double wall_ms, cpu_s;
  double server_cpu_s; /* the loopback server's thread, plus nghttpx for HTTPS */
  long rss_kib;
  size_t conns, resumed;
} result;

/* Runs the child; fills r (server-side counts by the caller). Returns 0 or -1. */
static int run_child(const char *self, const char *url, const char *ca, int n, int latency, result *r) {
  char cmd[16384];
  int w = snprintf(cmd, sizeof cmd, "'%s' --child '%s' '%s' %d %d", self, url, ca, n, latency);
  if (w < 0 || (size_t)w >= sizeof cmd) return -1;
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  int replies = 0;
  int got = fscanf(p, "%lf %lf %ld %d", &r->wall_ms, &r->cpu_s, &r->rss_kib, &replies);
  int status = pclose(p);
  if (got != 4 || status != 0 || replies != n) {
    fprintf(stderr, "bench_fanout_tls: %d agents on %s: %d replies\n", n, url, replies);
    return -1;
  }
  return 0;
}

static int cmp_result(const void *a, const void *b) {
  double x = ((const result *)a)->wall_ms, y = ((const result *)b)->wall_ms;
  return x < y ? -1 : x > y;
}

/* The median of runs runs of one scenario, with its server-side counts. ca NULL: the front's CA. */
static int scenario(const char *self, llm_server *srv, tls_front *front, const char *ca, int n, int latency, int runs,
                    result *out) {
  result v[16];
  if (runs > 16) runs = 16;
  for (int i = 0; i < runs; i++) {
    memset(&v[i], 0, sizeof v[i]);
    size_t before = llm_server_connections(srv);
    if (front) tls_front_reset_stats(front);
    double server0 = self_cpu() + (front ? tls_front_cpu_seconds(front) : 0);
    const char *url = front ? tls_front_url(front, "/v1") : llm_server_url(srv, "/v1");
    char urlc[256];
    snprintf(urlc, sizeof urlc, "%s", url);
    char cac[4200];
    snprintf(cac, sizeof cac, "%s", ca ? ca : front ? tls_front_ca(front) : "-");
    if (run_child(self, urlc, cac, n, latency, &v[i])) return -1;
    v[i].server_cpu_s = self_cpu() + (front ? tls_front_cpu_seconds(front) : 0) - server0;
    if (front) {
      tls_front_stats st;
      tls_front_read_stats(front, (size_t)n, &st);
      v[i].conns = st.connections;
      v[i].resumed = st.resumed;
    } else {
      v[i].conns = llm_server_connections(srv) - before;
    }
  }
  qsort(v, (size_t)runs, sizeof *v, cmp_result);
  *out = v[runs / 2];
  return 0;
}

static void print_row(const char *name, const char *transport, const result *r, double one, int tls) {
  char hs[32] = "-";
  if (tls) snprintf(hs, sizeof hs, "%zu (%zu resumed)", r->conns, r->resumed);
  printf("| %-32s | %-9s | %8.1f | %8.2f | %11zu | %17s | %6.3f | %8.1f MiB | %10.3f |\n", name, transport,
         r->wall_ms, one > 0 ? r->wall_ms / one : 0, r->conns, hs, r->cpu_s, r->rss_kib / 1024.0, r->server_cpu_s);
  fflush(stdout);
}

/* The worst case for TLS set-up: an HTTPS server without HTTP/2 (a connection and a handshake per
 * call) and a ca_file holding the whole system bundle plus the test CA (~145 certificates), as a
 * corporate bundle would. Shows the CA store being parsed once, not per connection. */
static int http1_with_system_bundle(const char *self, llm_server *srv, int runs) {
  tls_front *h1 = NULL;
  if (tls_front_start(llm_server_port(srv), 1, &h1)) return -1;
  char bundle[4200], cmd[9000];
  snprintf(bundle, sizeof bundle, "%s/bundle.pem", tls_front_dir(h1));
  snprintf(cmd, sizeof cmd, "cat /etc/ssl/certs/ca-certificates.crt '%s' > '%s'", tls_front_ca(h1), bundle);
  int rc = system(cmd) == 0 ? 0 : -1;
  double one = 0;
  for (int n = 1; rc == 0 && n <= 200; n *= 200) {
    result r;
    if ((rc = scenario(self, srv, h1, bundle, n, 200, runs, &r))) break;
    if (n == 1) one = r.wall_ms;
    char name[64];
    snprintf(name, sizeof name, "%d agent%s, 200 ms, big CA file", n, n > 1 ? "s" : "");
    print_row(name, "HTTPS 1.1", &r, one, 1);
  }
  tls_front_stop(h1);
  return rc;
}

/* The same server trusted through SSL_CERT_DIR (a hashed directory holding the test CA) beside the
 * system bundle: the directory must not turn the CA store's cache off (it did, through CAPATH: 22x one
 * call, 5.1 s of CPU, 192 MB for 200 agents). */
static int http1_with_ca_dir(const char *self, llm_server *srv, int runs) {
  tls_front *h1 = NULL;
  if (tls_front_start(llm_server_port(srv), 1, &h1)) return -1;
  char dir[4200], cmd[13000];
  snprintf(dir, sizeof dir, "%s/certdir", tls_front_dir(h1));
  snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp '%s' '%s/test-ca.pem' && openssl rehash '%s' 2>/dev/null", dir,
           tls_front_ca(h1), dir, dir);
  int rc = system(cmd) == 0 ? 0 : -1;
  setenv("SSL_CERT_DIR", dir, 1);
  double one = 0;
  for (int n = 1; rc == 0 && n <= 200; n *= 200) {
    result r;
    if ((rc = scenario(self, srv, h1, "-", n, 200, runs, &r))) break;
    if (n == 1) one = r.wall_ms;
    char name[64];
    snprintf(name, sizeof name, "%d agent%s, 200 ms, SSL_CERT_DIR", n, n > 1 ? "s" : "");
    print_row(name, "HTTPS 1.1", &r, one, 1);
  }
  unsetenv("SSL_CERT_DIR");
  tls_front_stop(h1);
  return rc;
}

int main(int argc, char **argv) {
  if (argc == 6 && strcmp(argv[1], "--child") == 0) return child(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
  int runs = argc > 1 ? atoi(argv[1]) : 1;
  if (runs < 1) runs = 1;
  unit_raise_fd_limit();
  setenv("BENCH_KEY", "sk-bench", 1);
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return 1;
  self[len] = '\0';
  llm_server *srv = NULL;
  tls_front *front = NULL;
  if (llm_server_start(&srv)) return 1;
  llm_server_set_recording(srv, 0);
  if (tls_front_start(llm_server_port(srv), 0, &front)) return 1;
  printf("| %-32s | %-9s | %8s | %8s | %11s | %17s | %6s | %12s | %10s |\n", "scenario", "transport", "wall ms",
         "x 1 call", "connections", "TLS handshakes", "CPU s", "peak RSS", "server CPU");
  printf("|---|---|---|---|---|---|---|---|---|\n");
  if (argc > 2 && !strcmp(argv[2], "--ca-only")) { /* only the two CA scenarios */
    int rc = http1_with_system_bundle(self, srv, runs) || http1_with_ca_dir(self, srv, runs);
    tls_front_stop(front);
    llm_server_stop(srv);
    return rc;
  }
  static const int latencies[] = {0, 200, 400};
  static const int sizes[] = {1, 50, 200, 1000};
  for (int l = 0; l < 3; l++) {
    for (int t = 0; t < 2; t++) {
      tls_front *f = t ? front : NULL;
      double one = 0;
      for (int s = 0; s < 4; s++) {
        if (latencies[l] == 400 && sizes[s] != 1 && sizes[s] != 200) continue;
        result r;
        if (scenario(self, srv, f, NULL, sizes[s], latencies[l], runs, &r)) return 1;
        if (sizes[s] == 1) one = r.wall_ms;
        char name[64];
        snprintf(name, sizeof name, "%d agent%s, %d ms", sizes[s], sizes[s] > 1 ? "s" : "", latencies[l]);
        print_row(name, f ? "HTTPS h2" : "HTTP/1.1", &r, one, f != NULL);
      }
    }
  }
  if (http1_with_system_bundle(self, srv, runs)) return 1;
  if (http1_with_ca_dir(self, srv, runs)) return 1;
  tls_front_stop(front);
  llm_server_stop(srv);
  return 0;
}
