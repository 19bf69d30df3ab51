/* Soak benchmark (issue 17): `agora run` with 200 agents (tools on: each call saves a context, then
 * answers) against a slow and faulty loopback LLM server (200 ms to the first byte, 10% HTTP 500s, 5%
 * stalls that end in the agents' timeout), durable storage, for a given time. Every sample interval it
 * records the process's RSS, open descriptors (/proc/PID/fd) and the LMDB file's size, and at the end
 * prints the samples and their slopes per minute (least squares, after the first sample's warm-up):
 * flat RSS and fds mean no leak; the database grows with the messages it stores.
 * Usage: bench_soak [minutes=30] [agents=200] [sample_seconds=60]   (needs AGORA_BIN or ./agora) */
#include "support/llm_server.h"
#include "support/unit.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SOAK_MAX_SAMPLES 4096

typedef struct sample {
  double min;     /* minutes since the start */
  long rss_kb;    /* VmRSS */
  long anon_kb;   /* RssAnon: the heap, without the LMDB map's file pages */
  long fds;       /* entries in /proc/PID/fd */
  long db_kb;     /* data.mdb, bytes allocated on disk */
  long db_len_kb; /* data.mdb, file length */
} sample;

/* A "Name:  N kB" field of /proc/PID/status, or -1. */
static long proc_status_kb(pid_t pid, const char *name) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  long kb = -1;
  size_t n = strlen(name);
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, name, n) && line[n] == ':') kb = strtol(line + n + 1, NULL, 10);
  if (f) fclose(f);
  return kb;
}

static long proc_fds(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
  DIR *d = opendir(path);
  long n = 0;
  for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
  if (d) closedir(d);
  return d ? n : -1;
}

/* The world: agents on the loopback server, a script of rounds each agent answers (more than the
 * run can get through, so it is stopped by time). Returns a malloc'd path. */
static char *write_world(const char *dir, llm_server *srv, int agents, int rounds) {
  size_t cap = (size_t)agents * 256 + (size_t)rounds * 80 + 1024, len = 0;
  char *json = malloc(cap);
  len += (size_t)snprintf(json + len, cap - len,
                          "{\"name\": \"soak\", \"memory_window\": 8, \"defaults\": {\"provider\": \"openai\","
                          " \"base_url\": \"%s\", \"api_key_env\": \"\", \"timeout_ms\": 3000, \"max_retries\": 1,"
                          " \"monadic\": true}, \"agents\": [",
                          llm_server_url(srv, "/v1"));
  for (int i = 0; i < agents; i++)
    len += (size_t)snprintf(json + len, cap - len, "%s{\"name\": \"a%d\", \"system_prompt\": \"You are a%d.\"}",
                            i ? "," : "", i, i);
  len += (size_t)snprintf(json + len, cap - len, "], \"script\": [");
  for (int i = 0; i < rounds; i++)
    len += (size_t)snprintf(json + len, cap - len, "%s{\"from\": \"human\", \"text\": \"Round %d: what now?\"}",
                            i ? "," : "", i + 1);
  snprintf(json + len, cap - len, "]}");
  char *path = malloc(strlen(dir) + 16);
  sprintf(path, "%s/soak.json", dir);
  unit_write_file(path, json);
  free(json);
  return path;
}

static pid_t start_agora(const char *world, const char *db, const char *log) {
  const char *bin = getenv("AGORA_BIN");
  if (!bin) bin = "./agora";
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR), err = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(null, 0);
    dup2(null, 1);
    dup2(err, 2);
    execl(bin, "agora", "run", world, "--db", db, (char *)NULL);
    _exit(127);
  }
  return pid;
}

/* Least-squares slope of y over minutes, from sample `from` on. */
static double slope(const sample *s, size_t n, size_t from, long (*get)(const sample *)) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0, k = 0;
  for (size_t i = from; i < n; i++, k++) {
    double x = s[i].min, y = (double)get(&s[i]);
    sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  double d = k * sxx - sx * sx;
  return k >= 2 && d != 0 ? (k * sxy - sx * sy) / d : 0;
}

static long get_rss(const sample *s) { return s->rss_kb; }
static long get_anon(const sample *s) { return s->anon_kb; }
static long get_fds(const sample *s) { return s->fds; }
static long get_db(const sample *s) { return s->db_kb; }

static void report(const sample *s, size_t n, int agents, double minutes) {
  printf("| minute | RSS (KiB) | of it anonymous | fds | data.mdb on disk (KiB) | data.mdb length (KiB) |\n"
         "|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < n; i++)
    printf("| %.1f | %ld | %ld | %ld | %ld | %ld |\n", s[i].min, s[i].rss_kb, s[i].anon_kb, s[i].fds, s[i].db_kb,
           s[i].db_len_kb);
  size_t from = n > 2 ? 1 : 0; /* the first sample is the warm-up */
  printf("\n%d agents, %.1f minutes, %zu samples; slopes per minute from minute %.1f on:\n", agents, minutes, n,
         n ? s[from].min : 0.0);
  printf("  RSS %+.1f KiB/min (anonymous %+.1f), fds %+.2f /min, data.mdb %+.1f KiB/min\n",
         slope(s, n, from, get_rss), slope(s, n, from, get_anon), slope(s, n, from, get_fds), slope(s, n, from, get_db));
}

/* Samples pid every sample_s until minutes have passed or it ends; returns the samples taken. */
static size_t soak(pid_t pid, const char *db, double minutes, int sample_s, sample *s) {
  char mdb[4200];
  snprintf(mdb, sizeof mdb, "%s/data.mdb", db);
  struct timespec t0, now;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  size_t n = 0;
  for (double next = sample_s / 60.0;;) {
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid) {
      fprintf(stderr, "bench_soak: agora ended early (status %d)\n", st);
      return n;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    double m = (double)(now.tv_sec - t0.tv_sec) / 60.0 + (double)(now.tv_nsec - t0.tv_nsec) / 6e10;
    if (m >= next && n < SOAK_MAX_SAMPLES) {
      struct stat sb;
      int have = stat(mdb, &sb) == 0;
      s[n] = (sample){m, proc_status_kb(pid, "VmRSS"), proc_status_kb(pid, "RssAnon"), proc_fds(pid),
                      have ? (long)(sb.st_blocks / 2) : 0, have ? (long)(sb.st_size / 1024) : 0};
      fprintf(stderr, "  %.1f min: RSS %ld KiB (anonymous %ld), %ld fds, data.mdb %ld KiB\n", m, s[n].rss_kb,
              s[n].anon_kb, s[n].fds, s[n].db_kb);
      n++;
      next += sample_s / 60.0;
    }
    if (m >= minutes) return n;
    usleep(200 * 1000);
  }
}

int main(int argc, char **argv) {
  double minutes = argc > 1 ? atof(argv[1]) : 30;
  int agents = argc > 2 ? atoi(argv[2]) : 200;
  int sample_s = argc > 3 ? atoi(argv[3]) : 60;
  if (minutes <= 0 || agents < 1 || sample_s < 1) {
    fprintf(stderr, "usage: bench_soak [minutes=30] [agents=200] [sample_seconds=60]\n");
    return 2;
  }
  unit_raise_fd_limit();
  llm_server *srv;
  if (llm_server_start(&srv)) return 1;
  llm_server_set_recording(srv, 0);
  /* Every call saves a context, then answers once it has the tool's result. */
  llm_server_rule(srv, "", "latency=200 delay=20 error_pct=10 stall_pct=5 tool=save_context"
                           " args=\"{\\\"notes\\\": [\\\"soak\\\"]}\" after_tool=\"noted, thanks\"");
  char *dir = unit_tmpdir(), db[4096], log[4096];
  snprintf(db, sizeof db, "%s/db", dir);
  snprintf(log, sizeof log, "%s/agora.err", dir);
  char *world = write_world(dir, srv, agents, (int)(minutes * 60) + 10);
  pid_t pid = start_agora(world, db, log);
  sample *s = calloc(SOAK_MAX_SAMPLES, sizeof *s);
  size_t n = soak(pid, db, minutes, sample_s, s);
  kill(pid, SIGINT); /* stops the run the way a user does; it saves what it has */
  int st = 0;
  waitpid(pid, &st, 0);
  report(s, n, agents, minutes);
  char *err = unit_read_file(log);
  printf("agora: exit %d; stderr: %.300s\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), err ? err : "");
  free(err);
  free(s);
  free(world);
  llm_server_stop(srv);
  unit_rmrf(dir);
  free(dir);
  return 0;
}
