/* Benchmark helpers (see bench_stat.h). */
#include "support/bench_stat.h"
#include "support/wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

double bench_now_s(void) { return now_s(); }

double bench_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

void bench_row(const char *name, const char *unit, double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  printf("| %-46s | %10.2f | %10.2f | %10.2f | %-9s |\n", name, v[0], v[n / 2], v[n - 1], unit);
  fflush(stdout);
}
