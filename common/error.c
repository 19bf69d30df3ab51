/* Error codes and the user-facing message buffer shared by every module. */
#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>

const char *ag_strerror(int err) {
  switch (err) {
  case AG_OK: return "success";
  case AG_ERR_NOMEM: return "out of memory";
  case AG_ERR_INVALID: return "invalid input";
  case AG_ERR_IO: return "input/output error";
  case AG_ERR_STORAGE: return "storage error";
  case AG_ERR_LLM: return "LLM call failed";
  case AG_ERR_NOT_FOUND: return "not found";
  case AG_ERR_TOO_BIG: return "input too large";
  case AG_ERR_EXISTS: return "already exists";
  case AG_ERR_VERSION: return "written by a newer version of Agora";
  case AG_ERR_CANCELLED: return "cancelled";
  case AG_ERR_STATE: return "not possible in the current state";
  default: return "unknown error";
  }
}

int ag_fail(ag_errmsg *em, int err, const char *fmt, ...) {
  if (em) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(em->text, sizeof em->text, fmt, ap);
    va_end(ap);
  }
  return err;
}

int ag_exit_code(int err) {
  if (err == AG_OK) return 0;
  if (err == AG_ERR_INVALID || err == AG_ERR_TOO_BIG || err == AG_ERR_VERSION || err == AG_ERR_NOT_FOUND)
    return 2;
  return 1;
}

int ag_vreport(int err, const char *fmt, va_list ap) {
  fputs("agora: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  return ag_exit_code(err);
}

int ag_report(int err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int status = ag_vreport(err, fmt, ap);
  va_end(ap);
  return status;
}
