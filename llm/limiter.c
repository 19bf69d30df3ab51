/* Rate limits per endpoint (see limiter.h): each endpoint's window of recent starts (a ring of start times
 * and token estimates), its calls in flight, its pause, and its FIFO of waiting attempts, admitted from a
 * loop timer. HTTP attempts (llm/remote.c) take a slot before they start and give it back when they end,
 * reporting the status and the rate-limit headers of the reply. */
#include "llm/limiter.h"
#include "llm/provider.h"
#include "llm/wire.h"

#include "common/clock.h"

#include <event2/event.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

typedef struct lim_start {
  int64_t t;
  long tokens;
} lim_start;

struct llm_lim_ep {
  llm_limiter *owner;
  char *base_url, *key_env;
  long max_conc, rpm, tpm;
  int limited;          /* a limit applies: configured, or learned from the provider's headers */
  int configured;       /* from rate_limits: the provider's stated limits do not replace it */
  long in_flight;       /* tracked attempts started and not ended */
  int64_t paused_until; /* monotonic ms; 0: never paused */
  lim_start *win;       /* ring of the starts of the last window */
  size_t head, n, cap;
  uint64_t first_seq;   /* seq of win[head] */
  long win_tokens;
  llm_lim_slot *q_head, *q_tail;
  struct event *timer;
};

struct llm_limiter {
  llm_client *c;
  llm_rate_limits cfg;
  llm_lim_ep **eps;
  size_t n_eps;
  void (*on_limited)(void *ud, const char *endpoint, int64_t until_ms);
  void *ud;
  size_t limited, waiting;
};

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The window of rpm and tpm: a minute, or AGORA_RATE_WINDOW_MS for tests (as AGORA_LLM_BACKOFF_MS), plus
 * a margin: the provider's window starts when a request reaches it, a little after ours, so a start that
 * leaves our window exactly at its end could still be in the provider's. 5% + 20 ms: 3 s of a minute. */
static int64_t window_ms(void) {
  static int64_t w;
  if (!w) {
    const char *e = getenv("AGORA_RATE_WINDOW_MS");
    long v = e ? strtol(e, NULL, 10) : 0;
    w = v > 0 ? v : 60000;
    w += w / 20 + 20;
  }
  return w;
}

/* After a reset the provider names, the rest of the burst it refused: a few hundred ms at most. */
static int64_t margin_ms(void) { return (window_ms() / 40 < 250 ? window_ms() / 40 : 250) + 10; }

int llm_rate_limits_copy(llm_rate_limits *dst, const llm_rate_limits *src) {
  *dst = (llm_rate_limits){0};
  if (!src->n) return AG_OK;
  if (!(dst->v = calloc(src->n, sizeof *dst->v))) return AG_ERR_NOMEM;
  for (size_t i = 0; i < src->n; i++) {
    dst->v[i] = src->v[i];
    dst->n = i + 1;
    if (!(dst->v[i].endpoint = strdup(src->v[i].endpoint))) {
      llm_rate_limits_free(dst);
      return AG_ERR_NOMEM;
    }
  }
  return AG_OK;
}

void llm_rate_limits_free(llm_rate_limits *l) {
  for (size_t i = 0; i < l->n; i++) free(l->v[i].endpoint);
  free(l->v);
  *l = (llm_rate_limits){0};
}

static llm_limiter *limiter_of(llm_client *c) {
  if (!c->limiter && (c->limiter = calloc(1, sizeof *c->limiter))) c->limiter->c = c;
  return c->limiter;
}

/* A base URL as written and as configured are the same endpoint with or without a trailing slash. */
static int same_url(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  while (la && a[la - 1] == '/') la--;
  while (lb && b[lb - 1] == '/') lb--;
  return la == lb && !strncasecmp(a, b, la);
}

static void ep_configure(llm_limiter *l, llm_lim_ep *ep) {
  const llm_rate_limit *hit = NULL, *dflt = NULL;
  for (size_t i = 0; i < l->cfg.n; i++) {
    if (!strcmp(l->cfg.v[i].endpoint, "default")) dflt = &l->cfg.v[i];
    else if (same_url(l->cfg.v[i].endpoint, ep->base_url)) hit = &l->cfg.v[i];
  }
  if (!hit) hit = dflt;
  ep->max_conc = hit ? hit->max_concurrency : 0;
  ep->rpm = hit ? hit->rpm : 0;
  ep->tpm = hit ? hit->tpm : 0;
  ep->limited = ep->max_conc > 0 || ep->rpm > 0 || ep->tpm > 0;
  ep->configured = ep->limited;
}

int llm_client_set_rate_limits(llm_client *c, const llm_rate_limits *lims) {
  llm_limiter *l = limiter_of(c);
  if (!l) return AG_ERR_NOMEM;
  llm_rate_limits copy;
  int rc = llm_rate_limits_copy(&copy, lims);
  if (rc) return rc;
  llm_rate_limits_free(&l->cfg);
  l->cfg = copy;
  for (size_t i = 0; i < l->n_eps; i++) ep_configure(l, l->eps[i]);
  return AG_OK;
}

const llm_rate_limits *llm_client_rate_limits(const llm_client *c) {
  static const llm_rate_limits none = {0};
  return c->limiter ? &c->limiter->cfg : &none;
}

void llm_client_on_rate_limited(llm_client *c, void (*fn)(void *ud, const char *endpoint, int64_t until_ms), void *ud) {
  llm_limiter *l = limiter_of(c);
  if (!l) return;
  l->on_limited = fn;
  l->ud = ud;
}

size_t llm_client_rate_limited(const llm_client *c) { return c->limiter ? c->limiter->limited : 0; }
size_t llm_client_waiting(const llm_client *c) { return c->limiter ? c->limiter->waiting : 0; }

static void ep_free(llm_lim_ep *ep) {
  if (ep->timer) event_free(ep->timer);
  free(ep->base_url);
  free(ep->key_env);
  free(ep->win);
  free(ep);
}

void llm_limiter_free(llm_client *c) {
  llm_limiter *l = c->limiter;
  if (!l) return;
  for (size_t i = 0; i < l->n_eps; i++) ep_free(l->eps[i]);
  free(l->eps);
  llm_rate_limits_free(&l->cfg);
  free(l);
  c->limiter = NULL;
}

static void ep_on_timer(evutil_socket_t fd, short what, void *arg);

static llm_lim_ep *ep_find(llm_limiter *l, const llm_config *cfg) {
  const llm_wire *wire = llm_wire_for(cfg->provider);
  const char *url = cfg->base_url && cfg->base_url[0] ? cfg->base_url : wire ? wire->default_base_url : "";
  const char *key = cfg->api_key_env ? cfg->api_key_env : "";
  for (size_t i = 0; i < l->n_eps; i++)
    if (!strcmp(l->eps[i]->base_url, url) && !strcmp(l->eps[i]->key_env, key)) return l->eps[i];
  llm_lim_ep **p = realloc(l->eps, (l->n_eps + 1) * sizeof *p);
  if (!p) return NULL;
  l->eps = p;
  llm_lim_ep *ep = calloc(1, sizeof *ep);
  if (!ep || !(ep->base_url = strdup(url)) || !(ep->key_env = strdup(key)) ||
      !(ep->timer = evtimer_new(l->c->base, ep_on_timer, ep))) {
    if (ep) ep_free(ep);
    return NULL;
  }
  ep->owner = l;
  ep_configure(l, ep);
  l->eps[l->n_eps++] = ep;
  return ep;
}

/* Drops the starts older than the window. */
static void ep_expire(llm_lim_ep *ep, int64_t now) {
  int64_t w = window_ms();
  while (ep->n && ep->win[ep->head].t + w <= now) {
    ep->win_tokens -= ep->win[ep->head].tokens;
    ep->head = (ep->head + 1) % ep->cap;
    ep->n--;
    ep->first_seq++;
  }
}

/* 1 when an attempt of tokens may start now; else 0 and *at is when to look again (-1: when one ends). */
static int ep_can_start(llm_lim_ep *ep, long tokens, int64_t now, int64_t *at) {
  if (now < ep->paused_until) return *at = ep->paused_until, 0;
  if (!ep->limited) return 1;
  if (ep->max_conc && ep->in_flight >= ep->max_conc) return *at = -1, 0;
  ep_expire(ep, now);
  int full = (ep->rpm && (long)ep->n >= ep->rpm) || (ep->tpm && ep->win_tokens > 0 && ep->win_tokens + tokens > ep->tpm);
  if (full) return *at = ep->win[ep->head].t + window_ms(), 0;
  return 1;
}

static int ep_take(llm_lim_ep *ep, llm_lim_slot *s, int64_t now) {
  s->ep = ep;
  s->state = LLM_LIM_RUNNING;
  if (!ep->limited) return AG_OK;
  if (ep->n == ep->cap) {
    size_t ncap = ep->cap ? ep->cap * 2 : 16;
    lim_start *w = malloc(ncap * sizeof *w);
    if (!w) return AG_ERR_NOMEM;
    for (size_t i = 0; i < ep->n; i++) w[i] = ep->win[(ep->head + i) % ep->cap];
    free(ep->win);
    ep->win = w;
    ep->cap = ncap;
    ep->head = 0;
  }
  ep->win[(ep->head + ep->n) % ep->cap] = (lim_start){.t = now, .tokens = s->tokens};
  s->seq = ep->first_seq + ep->n;
  ep->n++;
  ep->win_tokens += s->tokens;
  ep->in_flight++;
  s->tracked = 1;
  return AG_OK;
}

static void ep_schedule(llm_lim_ep *ep, int64_t at, int64_t now) {
  if (at < 0 || !ep->q_head) return;
  int64_t d = at > now ? at - now : 0;
  struct timeval tv = {.tv_sec = d / 1000, .tv_usec = (d % 1000) * 1000};
  evtimer_add(ep->timer, &tv); /* a later time replaces an earlier one: the pump looks again anyway */
}

static void q_unlink(llm_lim_ep *ep, llm_lim_slot *s) {
  if (s->prev) s->prev->next = s->next;
  else ep->q_head = s->next;
  if (s->next) s->next->prev = s->prev;
  else ep->q_tail = s->prev;
  s->prev = s->next = NULL;
  ep->owner->waiting--;
}

/* Admits waiting attempts in order while the endpoint allows, then sets the timer for the next. */
static void ep_pump(llm_lim_ep *ep) {
  int64_t now = mono_ms(), at = -1;
  while (ep->q_head && ep_can_start(ep, ep->q_head->tokens, now, &at)) {
    llm_lim_slot *s = ep->q_head;
    q_unlink(ep, s);
    if (ep_take(ep, s, now)) s->state = LLM_LIM_RUNNING; /* no room to count it: it goes anyway */
    s->go(s->ud); /* may end calls, start new ones (queued behind), cancel waiting ones */
    now = mono_ms();
  }
  ep_schedule(ep, at, now);
}

static void ep_on_timer(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  ep_pump(arg);
}

int llm_limit_acquire(llm_client *c, const llm_config *cfg, llm_lim_slot *s) {
  llm_limiter *l = limiter_of(c);
  llm_lim_ep *ep = l ? ep_find(l, cfg) : NULL;
  if (!ep) return AG_ERR_NOMEM;
  s->ep = ep;
  s->tracked = 0;
  /* Nothing configured and no pause: at once, no bookkeeping (the common case of a local server). */
  if (!ep->limited && !ep->q_head && !ep->paused_until) return s->state = LLM_LIM_RUNNING, 1;
  int64_t now = mono_ms(), at = -1;
  if (!ep->q_head && ep_can_start(ep, s->tokens, now, &at)) return ep_take(ep, s, now) ? AG_ERR_NOMEM : 1;
  s->state = LLM_LIM_WAITING;
  s->prev = ep->q_tail;
  s->next = NULL;
  if (ep->q_tail) ep->q_tail->next = s;
  else ep->q_head = s;
  ep->q_tail = s;
  l->waiting++;
  if (at < 0 && !ep->in_flight) at = now; /* nothing will end to wake it: look now */
  ep_schedule(ep, at, now);
  return 0;
}

/* An attempt that ran gives its slot back; the endpoint looks at its queue from the loop. */
static void ep_release(llm_lim_slot *s) {
  llm_lim_ep *ep = s->ep;
  if (s->tracked) ep->in_flight--;
  s->tracked = 0;
  s->state = LLM_LIM_IDLE;
  if (ep->q_head) ep_schedule(ep, mono_ms(), mono_ms());
}

void llm_limit_cancel(llm_lim_slot *s) {
  if (s->state == LLM_LIM_WAITING) q_unlink(s->ep, s);
  else if (s->state == LLM_LIM_RUNNING) ep_release(s);
  s->state = LLM_LIM_IDLE;
}

static void ep_pause(llm_lim_ep *ep, int64_t until, int announce) {
  int64_t now = mono_ms();
  if (until <= ep->paused_until || until <= now) return;
  ep->paused_until = until;
  if (announce) {
    ep->owner->limited++;
    if (ep->owner->on_limited) ep->owner->on_limited(ep->owner->ud, ep->base_url, ag_now_ms() + (until - now));
  }
  if (ep->q_head) ep_schedule(ep, until, now);
}

void llm_limit_done(llm_lim_slot *s, const llm_lim_headers *h, long status) {
  if (s->state != LLM_LIM_RUNNING) return;
  llm_lim_ep *ep = s->ep;
  ep_release(s);
  int64_t now = mono_ms();
  long reset = h->reset_requests > h->reset_tokens ? h->reset_requests : h->reset_tokens;
  if (!ep->configured && (h->requests_limit > 0 || h->tokens_limit > 0)) {
    /* Adaptive: the limits the provider states hold from now on, so after one burst of 429s (at most)
     * calls wait here instead of being refused there. */
    if (h->requests_limit > 0) ep->rpm = h->requests_limit;
    if (h->tokens_limit > 0) ep->tpm = h->tokens_limit;
    ep->limited = 1;
  }
  if (status == 429) {
    /* The whole endpoint waits, not just this call: its own retry comes after the same pause. The reset
     * names the oldest request of the provider's window; the margin covers the rest of its burst. */
    long d = h->retry_after_ms >= 0 ? h->retry_after_ms : reset >= 0 ? reset : 1000;
    ep_pause(ep, now + (d > 0 ? d : 1) + margin_ms(), 1);
  } else if ((h->requests_left == 0 && h->reset_requests > 0) || (h->tokens_left == 0 && h->reset_tokens > 0)) {
    long d = h->requests_left == 0 ? h->reset_requests : h->reset_tokens;
    if (h->requests_left == 0 && h->tokens_left == 0) d = reset;
    ep_pause(ep, now + d + margin_ms(), 0); /* the window is spent: wait for it quietly, not earn a 429 */
  }
}

void llm_limit_sent(llm_lim_slot *s) {
  llm_lim_ep *ep = s->ep;
  if (!ep || !ep->limited || s->seq < ep->first_seq || s->seq >= ep->first_seq + ep->n) return;
  lim_start *w = &ep->win[(ep->head + (size_t)(s->seq - ep->first_seq)) % ep->cap];
  int64_t now = mono_ms();
  if (now > w->t) w->t = now; /* a start behind it may now be older: it leaves the window later, never sooner */
}

void llm_limit_used(llm_lim_slot *s, long tokens) {
  llm_lim_ep *ep = s->ep;
  if (!ep || !ep->limited || !ep->tpm || s->seq < ep->first_seq || s->seq >= ep->first_seq + ep->n) return;
  lim_start *w = &ep->win[(ep->head + (size_t)(s->seq - ep->first_seq)) % ep->cap];
  ep->win_tokens += tokens - w->tokens;
  w->tokens = tokens;
}

/* "1s", "6m0s", "59.5ms", "20ms", "1h2m3s" (OpenAI's resets) → ms; -1 when it is none of those. */
static long parse_go_duration(const char *v, size_t n) {
  double total = 0;
  size_t i = 0;
  while (i < n && v[i] == ' ') i++;
  if (i == n) return -1;
  while (i < n && v[i] != ' ' && v[i] != '\r') {
    char *end;
    char num[32];
    size_t k = 0;
    while (i + k < n && k < sizeof num - 1 && ((v[i + k] >= '0' && v[i + k] <= '9') || v[i + k] == '.')) num[k] = v[i + k], k++;
    num[k] = '\0';
    double x = strtod(num, &end);
    if (!k || *end) return -1;
    i += k;
    if (i + 1 < n && v[i] == 'm' && v[i + 1] == 's') total += x, i += 2;
    else if (i < n && v[i] == 'h') total += x * 3600000, i++;
    else if (i < n && v[i] == 'm') total += x * 60000, i++;
    else if (i < n && v[i] == 's') total += x * 1000, i++;
    else return -1;
  }
  return total > 86400000.0 ? 86400000 : (long)(total + 0.999);
}

/* An RFC 3339 instant (Anthropic's resets) → ms from now (0 when past); -1 when it is not one. */
static long parse_instant(const char *v, size_t n) {
  char t[64];
  while (n && (v[0] == ' ')) v++, n--;
  while (n && (v[n - 1] == ' ' || v[n - 1] == '\r')) n--;
  if (!n || n >= sizeof t) return -1;
  memcpy(t, v, n);
  t[n] = '\0';
  int64_t at = ag_time_parse(t);
  if (at < 0) return -1;
  int64_t d = at - ag_now_ms();
  return d < 0 ? 0 : d > 86400000 ? 86400000 : (long)d;
}

void llm_limit_header(llm_lim_headers *h, const char *name, size_t nlen, const char *v, size_t vlen) {
  static const struct { const char *name; int what; } known[] = {
      {"x-ratelimit-limit-requests", 6},     {"x-ratelimit-limit-tokens", 7},
      {"anthropic-ratelimit-requests-limit", 6}, {"anthropic-ratelimit-tokens-limit", 7},
      {"x-ratelimit-remaining-requests", 0}, {"x-ratelimit-remaining-tokens", 1},
      {"x-ratelimit-reset-requests", 2},     {"x-ratelimit-reset-tokens", 3},
      {"anthropic-ratelimit-requests-remaining", 0}, {"anthropic-ratelimit-tokens-remaining", 1},
      {"anthropic-ratelimit-requests-reset", 4},     {"anthropic-ratelimit-tokens-reset", 5}};
  if (nlen < 20 || (strncasecmp(name, "x-ratelimit-", 12) && strncasecmp(name, "anthropic-ratelimit-", 20))) return;
  for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
    if (strlen(known[i].name) != nlen || strncasecmp(name, known[i].name, nlen)) continue;
    char num[32];
    size_t k = vlen < sizeof num - 1 ? vlen : sizeof num - 1;
    memcpy(num, v, k);
    num[k] = '\0';
    switch (known[i].what) {
    case 0: h->requests_left = strtol(num, NULL, 10); break;
    case 1: h->tokens_left = strtol(num, NULL, 10); break;
    case 2: h->reset_requests = parse_go_duration(v, vlen); break;
    case 3: h->reset_tokens = parse_go_duration(v, vlen); break;
    case 4: h->reset_requests = parse_instant(v, vlen); break;
    case 5: h->reset_tokens = parse_instant(v, vlen); break;
    case 6: h->requests_limit = strtol(num, NULL, 10); break;
    default: h->tokens_limit = strtol(num, NULL, 10); break;
    }
    return;
  }
}

void llm_limit_headers_init(llm_lim_headers *h) {
  *h = (llm_lim_headers){.requests_limit = -1, .tokens_limit = -1, .requests_left = -1, .tokens_left = -1,
                         .reset_requests = -1, .reset_tokens = -1, .retry_after_ms = -1};
}
