/* A tiny test runner (after libuv's): each tests/test_*.c lists its cases in one table and calls
 * unit_main(); a failed CHECK marks the case failed and goes on. The closing line is
 * "N passed, N failed", which CI reads. */
#ifndef AG_UNIT_H
#define AG_UNIT_H

#include <stddef.h>
#include <string.h>

typedef struct unit_test {
  const char *name;
  void (*fn)(void);
} unit_test;

#define UNIT(fn) {#fn, fn}

/* A row of a table-driven case: an input and what it must give (an error message, an output). */
typedef struct unit_io {
  const char *in, *want;
} unit_io;

extern int unit_failures_; /* failures in the running case */

void unit_fail_(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define CHECK(cond)                                                                                      \
  do {                                                                                                   \
    if (!(cond)) unit_fail_(__FILE__, __LINE__, "CHECK(%s)", #cond);                                      \
  } while (0)

#define CHECK_INT(a, b)                                                                                  \
  do {                                                                                                   \
    long long a_ = (long long)(a), b_ = (long long)(b);                                                   \
    if (a_ != b_) unit_fail_(__FILE__, __LINE__, "%s == %lld, expected %s == %lld", #a, a_, #b, b_);     \
  } while (0)

#define CHECK_STR(a, b)                                                                                  \
  do {                                                                                                   \
    const char *a_ = (a), *b_ = (b);                                                                     \
    if (!a_ || !b_ || strcmp(a_, b_) != 0)                                                               \
      unit_fail_(__FILE__, __LINE__, "%s == \"%s\", expected \"%s\"", #a, a_ ? a_ : "(null)",            \
                 b_ ? b_ : "(null)");                                                                    \
  } while (0)

/* Every one of the strings after text stands in it (text NULL: none does); each missing one is a
 * failure of its own, at the caller's line. For the lines an output must hold: CHECK_HAS(r.out, "a", "b"). */
#define CHECK_HAS(text, ...) unit_has_all_(__FILE__, __LINE__, #text, (text), (const char *const[]){__VA_ARGS__, NULL})
void unit_has_all_(const char *file, int line, const char *expr, const char *text, const char *const *want);

/* Runs the cases (all, or those named in argv[1..]); returns the process exit status. */
int unit_main(int argc, char **argv, const unit_test *tests, size_t n);

/* Helpers shared by tests. */
/* Path of a file under the source tree (AGORA_SRC, else the compiled-in default); static buffer. */
const char *unit_src_path(const char *rel);
/* Makes a fresh temporary directory; returns a malloc'd path. unit_rmrf() removes it. */
char *unit_tmpdir(void);
void unit_rmrf(const char *path);
/* Writes text to path; returns 0 on success. */
int unit_write_file(const char *path, const char *text);
/* Reads a file (caller frees); NULL on error. */
char *unit_read_file(const char *path);
/* How many times needle stands in text, without overlap (text NULL: 0). */
size_t unit_count(const char *text, const char *needle);
/* Raises the soft limit on open files to the hard one (at most 65,536): a test or benchmark with
 * 1,000 agents needs a descriptor per connection. */
void unit_raise_fd_limit(void);

#endif
