/* Loading big inputs (issue 17, defect 5): a world file of N agents parsed and made into a world, a
 * text of M leading mentions parsed, at a few sizes, so the time per item shows whether loading is
 * linear (flat per item) or not. Usage: bench_load [runs]. */
#include "agents/mention.h"
#include "world/world.h"
#include "world/world_file.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *world_text(size_t n) {
  size_t cap = 64 + n * 48;
  char *s = malloc(cap);
  if (!s) exit(1);
  size_t o = (size_t)snprintf(s, cap, "{\"name\":\"big\",\"agents\":[");
  for (size_t i = 0; i < n; i++)
    o += (size_t)snprintf(s + o, cap - o, "%s{\"name\":\"agent %zu\",\"provider\":\"script\"}", i ? "," : "", i);
  snprintf(s + o, cap - o, "]}");
  return s;
}

static char *mention_text(size_t n) {
  char *s = malloc(n * 16 + 1);
  if (!s) exit(1);
  size_t o = 0;
  for (size_t i = 0; i < n; i++) o += (size_t)sprintf(s + o, "@m%zu hi\n", i);
  return s;
}

/* Seconds to parse text and build the world, the best of runs. */
static double load_world(const char *text, int runs) {
  double best = 1e9;
  for (int r = 0; r < runs; r++) {
    double t0 = now_s();
    world_spec spec;
    ag_errmsg em;
    struct event_base *base = event_base_new();
    world *w = NULL;
    if (world_spec_parse(text, strlen(text), "big.json", &spec, &em) || world_new(base, &spec, &w, &em)) {
      fprintf(stderr, "load failed: %s\n", em.text);
      exit(1);
    }
    double t = now_s() - t0;
    world_free(w);
    world_spec_free(&spec);
    event_base_free(base);
    if (t < best) best = t;
  }
  return best;
}

static double parse_mentions(const char *text, int runs) {
  double best = 1e9;
  for (int r = 0; r < runs; r++) {
    double t0 = now_s();
    mention_list l = {0};
    if (mention_leading(text, NULL, 0, &l)) exit(1);
    double t = now_s() - t0;
    mention_list_free(&l);
    if (t < best) best = t;
  }
  return best;
}

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 3;
  if (runs < 1) runs = 1;
  static const struct {
    const char *what;
    size_t sizes[3];
    char *(*make)(size_t);
    double (*measure)(const char *, int);
  } cases[] = {
      {"world file → world", {10000, 40000, 80000}, world_text, load_world},
      {"leading mentions", {20000, 80000, 160000}, mention_text, parse_mentions},
  };
  printf("%-28s %10s %12s %14s\n", "input", "items", "seconds", "µs per item");
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    for (size_t i = 0; i < 3; i++) {
      size_t n = cases[c].sizes[i];
      char *t = cases[c].make(n);
      double s = cases[c].measure(t, runs);
      printf("%-28s %10zu %12.3f %14.2f\n", cases[c].what, n, s, s * 1e6 / (double)n);
      free(t);
    }
  }
  return 0;
}
