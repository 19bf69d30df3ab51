/* What the benchmarks share: a monotonic clock and a thread's CPU clock in seconds, and a min/median/max
 * table row. */
#ifndef AG_TEST_BENCH_STAT_H
#define AG_TEST_BENCH_STAT_H

/* Seconds on the monotonic clock. */
double bench_now_s(void);
/* CPU seconds the calling thread has used: a figure the neighbours' load on a shared machine moves far
 * less than the wall clock. */
double bench_thread_cpu_s(void);
/* Sorts v (n ≥ 1 values) and prints "| name | min | median | max | unit |" with two decimals. */
void bench_row(const char *name, const char *unit, double *v, int n);

#endif
