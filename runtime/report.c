/* Reporting a failure (see report.h). */
#include "runtime/report.h"

#include "common/error.h"

#include <stdio.h>

int rt_vreport(int err, const char *fmt, va_list ap) {
  fputs("agora: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  return ag_exit_code(err);
}

int rt_report(int err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int status = rt_vreport(err, fmt, ap);
  va_end(ap);
  return status;
}
