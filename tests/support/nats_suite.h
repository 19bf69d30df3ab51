/* What the NATS end-to-end suites (test_nats_join, test_nats_secure) share: their scratch directory,
 * paths in it, and their main (nats-server must be installed; the directory goes unless AGORA_KEEP_TMP). */
#ifndef AG_TEST_NATS_SUITE_H
#define AG_TEST_NATS_SUITE_H

#include "support/unit.h"

/* The scratch directory (valid during the suite). */
const char *nats_tmp(void);
/* name in the scratch directory (one of 8 rotating static buffers). */
const char *nats_path(const char *name);
/* Checks that nats-server and the programs named in needs (space-separated, may be NULL) are on PATH,
 * makes the scratch directory and runs tests. */
int nats_suite_main(int argc, char **argv, const unit_test *tests, size_t n, const char *needs);

#endif
