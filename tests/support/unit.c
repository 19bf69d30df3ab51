/* The test runner and small shared test helpers. */
#include "support/unit.h"

#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

int unit_failures_;

void unit_fail_(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "  %s:%d: ", file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  unit_failures_++;
}

int unit_main(int argc, char **argv, const unit_test *tests, size_t n) {
  int passed = 0, failed = 0;
  for (size_t i = 0; i < n; i++) {
    if (argc > 1) {
      int want = 0;
      for (int a = 1; a < argc; a++)
        if (strcmp(argv[a], tests[i].name) == 0) want = 1;
      if (!want) continue;
    }
    unit_failures_ = 0;
    tests[i].fn();
    if (unit_failures_) {
      printf("FAIL %s\n", tests[i].name);
      failed++;
    } else {
      printf("ok   %s\n", tests[i].name);
      passed++;
    }
    fflush(stdout);
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

const char *unit_src_path(const char *rel) {
  static char buf[4096];
  const char *src = getenv("AGORA_SRC");
  snprintf(buf, sizeof buf, "%s/%s", src ? src : ".", rel);
  return buf;
}

char *unit_tmpdir(void) {
  const char *base = getenv("TMPDIR");
  char tmpl[4096];
  snprintf(tmpl, sizeof tmpl, "%s/agora-test-XXXXXX", base ? base : "/tmp");
  if (!mkdtemp(tmpl)) return NULL;
  return strdup(tmpl);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

void unit_rmrf(const char *path) {
  if (path) nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int unit_write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t n = strlen(text);
  int rc = fwrite(text, 1, n, f) == n ? 0 : -1;
  if (fclose(f)) rc = -1;
  return rc;
}

char *unit_read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  size_t n;
  while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += n;
    if (cap - len < 2) {
      char *p = realloc(buf, cap * 2);
      if (!p) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = p;
      cap *= 2;
    }
  }
  fclose(f);
  if (buf) buf[len] = '\0';
  return buf;
}

size_t unit_count(const char *text, const char *needle) {
  size_t n = 0, len = strlen(needle);
  for (const char *p = text; len && p && (p = strstr(p, needle)); p += len) n++;
  return n;
}

void unit_raise_fd_limit(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max < 65536 ? rl.rlim_max : 65536;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

void unit_has_all_(const char *file, int line, const char *expr, const char *text, const char *const *want) {
  for (size_t i = 0; want[i]; i++)
    if (!text || !strstr(text, want[i])) unit_fail_(file, line, "CHECK_HAS(%s, \"%s\")", expr, want[i]);
}
