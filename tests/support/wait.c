/* The tests' clock and their polls on observed progress (see wait.h). */
#include "support/wait.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* GCC says which sanitizer is built in with a macro, clang with __has_feature. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WAIT_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define WAIT_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define WAIT_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define WAIT_TSAN 1
#endif

long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int wait_budget_factor(void) {
  const char *env = getenv("AGORA_TEST_BUDGET");
  if (env && *env) {
    char *end = NULL;
    long f = strtol(env, &end, 10);
    if (end && !*end && f >= 1 && f <= 100) return (int)f;
    static int told;
    if (!told++) fprintf(stderr, "AGORA_TEST_BUDGET: '%s' is not a whole number from 1 to 100; ignored\n", env);
  }
#if defined(WAIT_TSAN)
  return 8;
#elif defined(WAIT_ASAN)
  return 4;
#else
  return 1;
#endif
}

long wait_budget_ms(long ms) { return ms * wait_budget_factor(); }

void wait_nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) && errno == EINTR) {
  }
}

int wait_until(int (*done)(void *arg), void *arg, long ms) { return wait_until_every(done, arg, ms, 5); }

int wait_until_every(int (*done)(void *arg), void *arg, long ms, long every_ms) {
  for (long long end = now_ms() + wait_budget_ms(ms);; wait_nap_ms(every_ms)) {
    if (done(arg)) return 1;
    if (now_ms() >= end) return 0;
  }
}

typedef struct count_goal {
  size_t (*count)(void *obj);
  void *obj;
  size_t n;
} count_goal;

static int count_reached(void *arg) {
  const count_goal *g = arg;
  return g->count(g->obj) >= g->n;
}

int wait_count(size_t (*count)(void *obj), void *obj, size_t n, long ms) {
  return wait_until(count_reached, &(count_goal){.count = count, .obj = obj, .n = n}, ms);
}
