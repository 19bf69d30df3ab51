/* A durable chat for benchmarks (see bench_chat.h). */
#include "support/bench_chat.h"
#include "support/unit.h"

#include <stdio.h>
#include <stdlib.h>

void bench_chat_open(world *w, bench_chat *c) {
  *c = (bench_chat){.dir = "/tmp/agora-bench-XXXXXX"};
  ag_errmsg em = {""};
  store_options opt = {0, getenv("BENCH_NOSYNC") ? STORE_SYNC_NONE : STORE_SYNC_FULL, 0};
  if (!mkdtemp(c->dir) || store_open_ex(c->dir, &opt, &c->st, &em) || chat_session_open(c->st, w, &c->cs, &em) ||
      chat_session_new(c->cs, &em)) {
    fprintf(stderr, "bench: cannot open a chat in %s: %s\n", c->dir, em.text);
    exit(1);
  }
  world_run_until_quiet(w);
}

void bench_chat_end(bench_chat *c) {
  chat_session_free(c->cs);
  c->cs = NULL;
}

void bench_chat_close(bench_chat *c) {
  store_close(c->st);
  c->st = NULL;
  unit_rmrf(c->dir);
}
