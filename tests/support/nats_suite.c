/* The NATS suites' shared set-up (see nats_suite.h). */
#include "support/nats_suite.h"
#include "support/suite.h"

#include "support/nats_proc.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *tmp;

const char *nats_tmp(void) { return tmp; }

const char *nats_path(const char *name) {
  static char buf[8][4096];
  static int k;
  k = (k + 1) % 8;
  snprintf(buf[k], sizeof buf[k], "%s/%s", tmp, name);
  return buf[k];
}

int nats_suite_main(int argc, char **argv, const unit_test *tests, size_t n, const char *needs) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "for p in %s; do command -v $p >/dev/null 2>&1 || exit 1; done", needs ? needs : "");
  if (!nats_available() || system(cmd)) {
    fprintf(stderr, "needs nats-server%s%s on PATH (apt-get install nats-server ...)\n", needs ? " " : "",
            needs ? needs : "");
    return 1;
  }
  return suite_main(argc, argv, &(suite){.tests = tests, .n = n, .tmp = &tmp, .no_sigpipe = 1});
}
