/* agora serve's event streams: events per second delivered to 1, 10 and 100 SSE clients while a world of
 * 200 scripted agents answers human messages (the server process does the world, storage and the
 * streams; this process only reads), latency from a message's publish (its "ts") to a client's receipt
 * (p50/p99, same machine clock, 1 ms resolution of ts), and the server's resident memory per idle
 * client (1,000 idle streams). Usage: bench_serve [rounds] (AGORA_BIN names the binary). */
#include "support/bench_stat.h"
#include "support/serve_client.h"
#include "support/unit.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define AGENTS 200
#define WORDS 50 /* words per reply: one llm-chunk each */
#define PINGS 200

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static long rss_kib(pid_t pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  long kib = -1;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "VmRSS:", 6)) kib = atol(line + 6);
  if (f) fclose(f);
  return kib;
}

/* Nanoseconds pid's main thread (the server's loop; 0: this process) has run on a CPU (field 0) or
 * waited on a run queue, ready but not running (field 1): /proc/PID/schedstat; -1 when unknown. */
static double sched_ns(pid_t pid, int field) {
  char path[64];
  snprintf(path, sizeof path, pid ? "/proc/%d/schedstat" : "/proc/self/schedstat", (int)pid);
  FILE *f = fopen(path, "r");
  double v[2] = {-1, -1};
  if (f && fscanf(f, "%lf %lf", &v[0], &v[1]) != 2) v[0] = v[1] = -1;
  if (f) fclose(f);
  return v[field];
}

static void post(const serve_proc *sp, const char *text) {
  char body[256];
  snprintf(body, sizeof body, "{\"text\": \"%s\"}", text);
  http_reply r;
  http_call(sp->base, "POST", "/api/worlds/bench/messages", body, strlen(body), NULL, &r);
  if (r.status != 202) fprintf(stderr, "bench_serve: POST: %ld %s\n", r.status, r.body);
  http_reply_free(&r);
}

static double real_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Publish to receipt: PINGS human messages that address nobody (the mention of no agent: no replies), one at
 * a time; the time from just before the POST to its frame at each client (both on this process's
 * clock). out: p50, p99 in ms over all receipts. */
static void latency(const serve_proc *sp, sse_set *set, sse_conn **c, int n, double out[7]) {
  double sent[PINGS], first[PINGS], last[PINGS], *lat = malloc((size_t)PINGS * (size_t)n * sizeof *lat);
  for (int k = 0; k < PINGS; k++) first[k] = 1e300, last[k] = -1e300;
  double waited[3] = {sched_ns(sp->pid, 1), sched_ns(0, 1), sched_ns(sp->pid, 0)};
  size_t nl = 0;
  for (int k = 0; k < PINGS; k++) {
    char text[64];
    snprintf(text, sizeof text, "@nobody ping %d", k);
    char req[512];
    int len = snprintf(req, sizeof req,
                       "POST /api/worlds/bench/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                       "Content-Length: %zu\r\nConnection: close\r\n\r\n{\"text\": \"%s\"}", strlen(text) + 12, text);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)sp->port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) perror("bench_serve: connect");
    /* The POST is not waited for (its 202 comes after the commit): the stream is read meanwhile. */
    sent[k] = real_ms();
    if (write(fd, req, (size_t)len) != len) perror("bench_serve: write");
    sse_wait(set, (size_t)k + 1, "\"text\":\"@nobody ping ", 10000);
    close(fd);
  }
  /* the time both processes were ready to run and did not, per ping: the machine's load, not the code */
  out[4] = (sched_ns(sp->pid, 1) - waited[0]) / 1e6 / PINGS;
  out[5] = (sched_ns(0, 1) - waited[1]) / 1e6 / PINGS;
  out[6] = (sched_ns(sp->pid, 0) - waited[2]) / 1e6 / PINGS; /* the loop's CPU per ping */
  for (int i = 0; i < n; i++) {
    size_t m;
    const sse_frame_rec *f = sse_frames(c[i], &m);
    for (size_t j = 0; j < m; j++) {
      const char *p = strstr(f[j].data, "\"text\":\"@nobody ping ");
      int k;
      if (p && strstr(f[j].data, "\"type\":\"message\"") && sscanf(p + strlen("\"text\":\"@nobody ping "), "%d", &k) == 1 && k >= 0 && k < PINGS)
      {
        lat[nl++] = f[j].at_ms - sent[k];
        if (f[j].at_ms - sent[k] < first[k]) first[k] = f[j].at_ms - sent[k];
        if (f[j].at_ms - sent[k] > last[k]) last[k] = f[j].at_ms - sent[k];
      }
    }
  }
  qsort(lat, nl, sizeof *lat, cmp_d);
  out[0] = nl ? lat[nl / 2] : -1;
  out[1] = nl ? lat[(size_t)((double)nl * 0.99)] : -1;
  /* where the tail is: the first client's receipt of a ping (the server's publish path), and the spread
   * from the first to the last client (the fan-out: the server's writes and this process's reads) */
  for (int k = 0; k < PINGS; k++) last[k] -= first[k];
  qsort(first, PINGS, sizeof *first, cmp_d);
  qsort(last, PINGS, sizeof *last, cmp_d);
  out[2] = first[PINGS * 99 / 100];
  out[3] = last[PINGS * 99 / 100];
  free(lat);
}

/* One run with n clients: rounds human messages, each answered by every agent. */
static void run_clients(const serve_proc *sp, int n, int rounds) {
  char url[256];
  snprintf(url, sizeof url, "%s/api/worlds/bench/events", sp->base);
  sse_set *set = sse_set_new();
  sse_conn **c = calloc((size_t)n, sizeof *c);
  for (int i = 0; i < n; i++) c[i] = sse_open(set, url, NULL, NULL);
  sse_pump(set, 300);
  size_t before = 0, nf;
  sse_frames(c[0], &before);
  double t0 = bench_now_s() * 1e3;
  for (int r = 0; r < rounds; r++) {
    post(sp, "everyone, answer");
    sse_wait(set, (size_t)(r + 1) * (AGENTS + 1), "\"type\":\"message\"", 120000);
  }
  sse_pump(set, 50);
  double secs = (bench_now_s() * 1e3 - t0 - 50) / 1e3;
  sse_frames(c[0], &nf);
  size_t frames = nf - before, total = 0;
  for (int i = 0; i < n; i++) {
    size_t k;
    sse_frames(c[i], &k);
    total += k;
  }
  double lat[7];
  latency(sp, set, c, n, lat);
  printf("| %3d | %7zu | %6.2f | %9.0f | %9.0f | %6.2f | %6.2f | %6.2f | %6.2f | %6.3f | %6.3f | %6.3f |\n", n, frames, secs,
         frames / secs, total / secs, lat[0], lat[1], lat[2], lat[3], lat[6], lat[4], lat[5]);
  free(c);
  sse_set_free(set);
}

static void idle_memory(const serve_proc *sp, int n) {
  char url[256];
  snprintf(url, sizeof url, "%s/api/worlds/bench/events", sp->base);
  sse_set *set = sse_set_new();
  sse_pump(set, 100);
  long before = rss_kib(sp->pid);
  for (int i = 0; i < n; i++) sse_open(set, url, NULL, NULL);
  sse_pump(set, 2000);
  long after = rss_kib(sp->pid);
  http_reply r;
  http_call(sp->base, "GET", "/metrics", NULL, 0, NULL, &r);
  const char *g = strstr(r.body, "\nagora_sse_clients ");
  printf("idle clients: %d connected (server says %ld); server RSS %ld -> %ld KiB: %.1f KiB per idle client\n", n,
         g ? atol(g + 19) : -1L, before, after, (double)(after - before) / n);
  http_reply_free(&r);
  sse_set_free(set);
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 5;
  unit_raise_fd_limit();
  char *dir = unit_tmpdir();
  char words[WORDS * 3 + 1] = "";
  for (int i = 0; i < WORDS; i++) strcat(words, i ? " w" : "w");
  size_t cap = AGENTS * (80 + sizeof words) + 256;
  char *world = malloc(cap), path[1024], db[1024];
  size_t len = (size_t)snprintf(world, cap, "{\"name\": \"Bench\", \"turn_limit\": 1000000, \"defaults\": {\"provider\": \"script\"}, \"agents\": [");
  for (int i = 0; i < AGENTS; i++)
    len += (size_t)snprintf(world + len, cap - len, "%s{\"name\": \"a%03d\", \"replies\": [\"%s\"]}", i ? ", " : "", i, words);
  snprintf(world + len, cap - len, "]}");
  snprintf(path, sizeof path, "%s/bench.json", dir);
  snprintf(db, sizeof db, "%s/db", dir);
  unit_write_file(path, world);
  free(world);
  const char *args[] = {path, "--db", db, NULL};
  serve_proc sp;
  if (serve_proc_start(dir, args, NULL, &sp)) {
    fprintf(stderr, "bench_serve: agora serve did not start (AGORA_BIN?)\n");
    return 1;
  }
  printf("%d scripted agents answer each human message with %d words (a chunk each; about %d frames per round);\n"
         "%d rounds per row; latency over %d pings that nobody answers\n\n", AGENTS, WORDS, AGENTS * (WORDS + 4), rounds, PINGS);
  idle_memory(&sp, 1000); /* first, on a fresh server: later runs leave freed heap a client would reuse */
  printf("\n| clients | frames per client | seconds | frames/s to one client | frames/s all clients | latency p50 ms | p99 ms "
         "| p99 first client ms | p99 first-to-last ms | server loop CPU ms/ping | its run-queue wait ms/ping "
         "| client's wait |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  int ns[] = {1, 10, 100};
  for (int i = 0; i < 3; i++) run_clients(&sp, ns[i], rounds);
  int st = serve_proc_stop(&sp);
  if (st) {
    char *err = unit_read_file(sp.err_path);
    fprintf(stderr, "bench_serve: the server exited with %d: %s\n", st, err ? err : "");
    free(err);
  }
  unit_rmrf(dir);
  free(dir);
  return 0;
}
