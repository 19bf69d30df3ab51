/* The loopback LLM server's enforced rate limits (llm_server_set_limits): a sliding window of the
 * accepted requests and their tokens, a 429 past it, the providers' headers on every reply. */
#include "support/llm_server_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t lim_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The enforced limits: a request past rpm requests or tpm tokens in the last window is answered 429 with
 * the providers' headers (Retry-After, retry-after-ms, x-ratelimit-*, anthropic-ratelimit-*-remaining and
 * -reset); an accepted one says what remains. Both kinds of header go to every wire format. */
void lsrv_limits_check(llm_server *s, out *o, plan *p, long tokens) {
  pthread_mutex_lock(&s->mu);
  if (!s->lim_rpm && !s->lim_tpm) {
    pthread_mutex_unlock(&s->mu);
    return;
  }
  int64_t now = lim_now_ms();
  while (s->lim_n && s->lim_t[s->lim_head] + s->lim_window_ms <= now) {
    s->lim_tokens -= s->lim_tok[s->lim_head];
    s->lim_head = (s->lim_head + 1) % s->lim_cap;
    s->lim_n--;
  }
  int over = (s->lim_rpm && (long)s->lim_n >= s->lim_rpm) ||
             (s->lim_tpm && s->lim_n && s->lim_tokens + tokens > s->lim_tpm);
  long reset = s->lim_n ? (long)(s->lim_t[s->lim_head] + s->lim_window_ms - now) : s->lim_window_ms;
  if (reset < 1) reset = 1;
  if (!over) {
    if (s->lim_n == s->lim_cap) {
      size_t ncap = s->lim_cap ? s->lim_cap * 2 : 64;
      int64_t *t = malloc(ncap * sizeof *t);
      long *k = malloc(ncap * sizeof *k);
      for (size_t i = 0; i < s->lim_n; i++) {
        t[i] = s->lim_t[(s->lim_head + i) % s->lim_cap];
        k[i] = s->lim_tok[(s->lim_head + i) % s->lim_cap];
      }
      free(s->lim_t);
      free(s->lim_tok);
      s->lim_t = t, s->lim_tok = k, s->lim_cap = ncap, s->lim_head = 0;
    }
    s->lim_t[(s->lim_head + s->lim_n) % s->lim_cap] = now;
    s->lim_tok[(s->lim_head + s->lim_n) % s->lim_cap] = tokens;
    s->lim_n++;
    s->lim_tokens += tokens;
  } else {
    s->lim_rejected++;
  }
  long left = s->lim_rpm ? s->lim_rpm - (long)s->lim_n : 1000000;
  if (left < 0) left = 0;
  pthread_mutex_unlock(&s->mu);
  char at[40];
  time_t reset_at = time(NULL) + (reset + 999) / 1000;
  strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", gmtime(&reset_at));
  snprintf(o->limit_headers, sizeof o->limit_headers,
           "x-ratelimit-limit-requests: %ld\r\nx-ratelimit-remaining-requests: %ld\r\nx-ratelimit-reset-requests: %ldms\r\n"
           "anthropic-ratelimit-requests-remaining: %ld\r\nanthropic-ratelimit-requests-reset: %s\r\n",
           s->lim_rpm, over ? 0 : left, reset, over ? 0 : left, at);
  if (!over) return;
  p->status = 429;
  lsrv_set_str(&p->error_type, "rate_limit_exceeded");
  lsrv_set_str(&p->error_message, "Rate limit reached for requests");
  p->retry_after = (reset + 999) / 1000;
  p->retry_after_ms = reset;
  p->stall = p->reset = -1;
  p->endless = p->redirect = 0;
  p->drip = p->pad_headers = p->gzip = 0;
}
