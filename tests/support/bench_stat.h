/* What the benchmarks share: a monotonic clock in seconds, this thread's CPU clock, and a min/median/max
 * table row. */
#ifndef AG_TEST_BENCH_STAT_H
#define AG_TEST_BENCH_STAT_H

/* Seconds on the monotonic clock. */
double bench_now_s(void);
/* This thread's CPU seconds: the machine is shared, and a benchmark's own CPU time is the figure that
 * depends least on the neighbours' load (print wall time beside it). */
double bench_cpu_s(void);
/* Sorts v (n ≥ 1 values) and prints "| name | min | median | max | unit |" with two decimals. */
void bench_row(const char *name, const char *unit, double *v, int n);

#endif
