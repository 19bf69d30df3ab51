/* agora serve's event streams: events per second delivered to 1, 10 and 100 SSE clients while a world of
 * 200 scripted agents answers human messages (the server process does the world, storage and the
 * streams; this process only reads), latency from a message's publish (its "ts") to a client's receipt
 * (p50/p99, same machine clock, 1 ms resolution of ts), and the server's resident memory per idle
 * client (1,000 idle streams). Usage: bench_serve [rounds] (AGORA_BIN names the binary). */
#include "support/serve_client.h"
#include "support/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define AGENTS 200

static double mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

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

/* "ts":"2026-11-23T12:00:00.123Z" of a message frame as epoch ms, or -1. */
static double frame_ts(const char *data) {
  const char *p = strstr(data, "\"ts\":\"");
  struct tm tm = {0};
  int ms = 0;
  if (!p || sscanf(p + 6, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                   &tm.tm_sec, &ms) != 7)
    return -1;
  tm.tm_year -= 1900, tm.tm_mon -= 1;
  return (double)timegm(&tm) * 1e3 + ms;
}

static void post(const serve_proc *sp, const char *text) {
  char body[256];
  snprintf(body, sizeof body, "{\"text\": \"%s\"}", text);
  http_reply r;
  http_call(sp->base, "POST", "/api/worlds/bench/messages", body, strlen(body), NULL, &r);
  http_reply_free(&r);
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
  double t0 = mono_ms();
  for (int r = 0; r < rounds; r++) {
    post(sp, "everyone, answer");
    sse_wait(set, (size_t)(r + 1) * (AGENTS + 1), "\"type\":\"message\"", 120000);
  }
  sse_pump(set, 50);
  double secs = (mono_ms() - t0 - 50) / 1e3;
  sse_frames(c[0], &nf);
  size_t frames = nf - before, total = 0;
  for (int i = 0; i < n; i++) {
    size_t k;
    sse_frames(c[i], &k);
    total += k;
  }
  double *lat = malloc((total + 1) * sizeof *lat);
  size_t nl = 0;
  for (int i = 0; i < n; i++) { /* every message frame of every client */
    size_t k;
    const sse_frame_rec *g = sse_frames(c[i], &k);
    for (size_t j = 0; j < k; j++) {
      double ts = frame_ts(g[j].data);
      if (ts > 0 && strstr(g[j].data, "\"type\":\"message\"")) lat[nl++] = g[j].at_ms - ts;
    }
  }
  qsort(lat, nl, sizeof *lat, cmp_d);
  printf("| %3d | %7zu | %6.2f | %9.0f | %9.0f | %5.1f | %5.1f |\n", n, frames, secs, frames / secs, total / secs,
         nl ? lat[nl / 2] : -1, nl ? lat[(size_t)(nl * 0.99)] : -1);
  free(lat);
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
  printf("\nidle clients: %d connected (server says %ld); server RSS %ld -> %ld KiB: %.1f KiB per idle client\n", n,
         g ? atol(g + 19) : -1L, before, after, (double)(after - before) / n);
  http_reply_free(&r);
  sse_set_free(set);
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 5;
  unit_raise_fd_limit();
  char *dir = unit_tmpdir();
  size_t cap = AGENTS * 80 + 256;
  char *world = malloc(cap), path[1024], db[1024];
  size_t len = (size_t)snprintf(world, cap, "{\"name\": \"Bench\", \"turn_limit\": 1000000, \"defaults\": {\"provider\": \"script\"}, \"agents\": [");
  for (int i = 0; i < AGENTS; i++)
    len += (size_t)snprintf(world + len, cap - len, "%s{\"name\": \"a%03d\", \"replies\": [\"my answer\"]}", i ? ", " : "", i);
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
  printf("%d scripted agents answer each human message (about 5 frames per reply); %d rounds per row\n\n", AGENTS, rounds);
  printf("| clients | frames per client | seconds | frames/s to one client | frames/s all clients | latency p50 ms | p99 ms |\n");
  printf("|---|---|---|---|---|---|---|\n");
  int ns[] = {1, 10, 100};
  for (int i = 0; i < 3; i++) run_clients(&sp, ns[i], rounds);
  idle_memory(&sp, 1000);
  serve_proc_stop(&sp);
  unit_rmrf(dir);
  free(dir);
  return 0;
}
