/* The one main of the test binaries: what a suite needs around its cases (a scratch directory, the
 * loopback LLM server, environment, more descriptors, SIGPIPE ignored), each part asked for by name and
 * undone after the cases in reverse order. A test file ends with its cases and the rest of its suite record:
 *
 *   SUITE_RUN((UNIT(first_case), UNIT(second_case)), .tmp = &tmp, .srv = &srv)
 */
#ifndef AG_TEST_SUITE_H
#define AG_TEST_SUITE_H

#include <stddef.h>

#include "support/llm_server.h"
#include "support/unit.h"

typedef struct suite {
  const unit_test *tests;
  size_t n;
  const char *const *env; /* NULL-terminated: "NAME=value" is set, "NAME" unset, before anything else */
  char **tmp;             /* a scratch directory made for the cases; removed after unless AGORA_KEEP_TMP */
  llm_server **srv;       /* the loopback LLM server, started for the cases and stopped after */
  int many_fds;           /* the open-files limit raised (unit_raise_fd_limit) */
  int no_sigpipe;         /* SIGPIPE ignored: a peer that hangs up is an error return, not death */
  int (*before)(void);    /* once the rest is ready: 0, or the cases do not run (exit status 1) */
  void (*after)(void);    /* after the cases (and after a failed before), before the rest is undone */
} suite;

/* The cases of a static array t, for a suite record. */
#define SUITE_TESTS(t) .tests = (t), .n = sizeof(t) / sizeof *(t)

/* The table of cases and main() of a test file in one: cases is a parenthesised list of UNIT(fn), the
 * rest are fields of the suite record (none: the cases alone). One runner for every file, not a copy each. */
#define SUITE_RUN(cases, ...)                                                                            \
  static const unit_test suite_cases_[] = {SUITE_LIST_ cases};                                            \
  int main(int argc, char **argv) {                                                                      \
    return suite_main(argc, argv, &(suite){SUITE_TESTS(suite_cases_), __VA_ARGS__});                     \
  }
#define SUITE_LIST_(...) __VA_ARGS__

/* Prepares what s asks for, runs the cases (all, or those named in argv[1..]) and undoes it; the
 * process's exit status (1 with a message on stderr when something could not be prepared). */
int suite_main(int argc, char **argv, const suite *s);

/* dir/name in one of 8 rotating static buffers; with text (not NULL) the file is written first (a case
 * that cannot write it fails). For a suite's scratch files: suite_file(tmp, "w.json", json). */
const char *suite_file(const char *dir, const char *name, const char *text);
/* dir/name emptied (removed with what it holds, for a database to start from nothing); caller frees. */
char *suite_fresh(const char *dir, const char *name);

#endif
