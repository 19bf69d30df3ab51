/* Retry policy for LLM calls (see retry.h). */
#include "llm/retry.h"

#include <stdlib.h>
#include <string.h>

static int quota_exhausted(const char *s) {
  return s && (strcmp(s, "insufficient_quota") == 0 || strcmp(s, "billing_hard_limit_reached") == 0);
}

int llm_retry_status(long status, const char *err_type, const char *err_code) {
  if (status == 429 && (quota_exhausted(err_type) || quota_exhausted(err_code))) return 0;
  return status == 408 || status == 409 || status == 429 || (status >= 500 && status <= 599);
}

int llm_retry_error_type(const char *t) {
  static const char *const transient[] = {
      "overloaded_error", "rate_limit_error", "api_error", "server_error", "rate_limit_exceeded",
      "UNAVAILABLE",      "INTERNAL",         "RESOURCE_EXHAUSTED"};
  if (!t) return 0;
  for (size_t i = 0; i < sizeof transient / sizeof *transient; i++)
    if (strcmp(t, transient[i]) == 0) return 1;
  return 0;
}

long llm_retry_base_ms(void) {
  static long base = -1;
  if (base < 0) {
    const char *s = getenv("AGORA_LLM_BACKOFF_MS");
    char *end = NULL;
    long v = s ? strtol(s, &end, 10) : -1;
    base = (s && end != s && *end == '\0' && v >= 0) ? v : LLM_RETRY_BASE_MS;
  }
  return base;
}

long llm_retry_backoff_ms(long base_ms, int n, unsigned rnd) {
  long d = base_ms;
  for (int i = 1; i < n && d < LLM_RETRY_MAX_BACKOFF_MS; i++) d *= 2;
  if (d > LLM_RETRY_MAX_BACKOFF_MS) d = LLM_RETRY_MAX_BACKOFF_MS;
  long half = d / 2;
  return d - half + (half ? (long)(rnd % (unsigned long)(half + 1)) : 0);
}

int llm_retry_parse_after(const char *value, size_t len, int millis, long *ms) {
  char tmp[32];
  while (len && (*value == ' ' || *value == '\t')) {
    value++;
    len--;
  }
  while (len && (value[len - 1] == ' ' || value[len - 1] == '\t' || value[len - 1] == '\r' ||
                 value[len - 1] == '\n'))
    len--;
  if (len == 0 || len >= sizeof tmp) return 0;
  memcpy(tmp, value, len);
  tmp[len] = '\0';
  for (size_t i = 0; i < len; i++)
    if (!(tmp[i] >= '0' && tmp[i] <= '9') && tmp[i] != '.') return 0; /* an HTTP date, or junk */
  char *end = NULL;
  double v = strtod(tmp, &end);
  if (end == tmp || *end != '\0' || v < 0) return 0;
  double m = millis ? v : v * 1000.0;
  *ms = m > (double)LLM_RETRY_MAX_AFTER_MS ? LLM_RETRY_MAX_AFTER_MS : (long)m;
  return 1;
}
