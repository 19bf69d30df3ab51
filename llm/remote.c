/* The life of one call to an HTTP provider, shared by all four wire formats: build the request once,
 * run attempts on the transport, feed streamed bytes to the SSE/NDJSON parser and the wire format,
 * and on failure retry (before the first delivered chunk only) after a backoff on a loop timer, or
 * finish with the error. The key is read from the environment for each attempt and lives only in
 * that attempt's headers; it is scrubbed from any error text a server sends back. */
#include "common/utf8.h"
#include "llm/provider.h"
#include "llm/redact.h"
#include "llm/retry.h"
#include "llm/wire.h"
#include "net/net_http.h"
#include "net/net_opts.h"
#include "net/net_stream.h"

#include <event2/event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REMOTE_EVENT_CAP (1u << 20)      /* one SSE event or NDJSON line */
#define REMOTE_REPLY_CAP (4u << 20)      /* a whole reply, streamed or not */
#define REMOTE_ERROR_BODY_CAP (64u << 10) /* what we keep of an error reply */
#define REMOTE_CONNECT_TIMEOUT_MS 10000L
#define REMOTE_STALL_MS 30000L

typedef enum body_mode {
  BODY_UNDECIDED = 0,
  BODY_STREAM, /* a 2xx streamed reply: bytes go to the parser */
  BODY_WHOLE,  /* a 2xx whole reply: bytes are collected and parsed at the end */
  BODY_ERROR   /* a non-2xx reply: the start of the body is kept for its error message */
} body_mode;

typedef struct remote_call {
  llm_call *call; /* NULL once cancelled */
  const llm_wire *wire;
  char *url, *body;
  char *key_env;  /* the name of the key's variable; the key itself is never kept */
  int stream, max_retries;
  long timeout_ms;
  int64_t deadline_ms; /* the call's whole budget, retries included */
  int attempts;
  int delivered;       /* a chunk reached the caller: no retry from here on */
  int early_fail;      /* the timer reports a failure found by start (no key) */
  struct event *timer; /* backoff before the next attempt */
  net_http_xfer *xfer;
  int in_cb;     /* inside code that may deliver a chunk (whose callback may cancel us) */
  int cancelled; /* cancelled while in_cb: freed when that code unwinds */
  /* The current attempt. */
  long status;
  long retry_after_ms; /* from Retry-After / retry-after-ms, or -1 */
  int after_is_ms;     /* retry-after-ms seen: it wins over Retry-After */
  int json_reply;      /* Content-Type application/json */
  body_mode mode;
  int fail_rc;         /* why parsing aborted the transfer */
  ag_buf whole;        /* BODY_WHOLE / BODY_ERROR bytes */
  net_stream parser;
  size_t events;       /* streamed events read in this attempt */
  ag_buf text;         /* the reply so far */
  llm_wire_calls calls; /* its tool calls so far (never chunks: they reach the caller at the end) */
  llm_wire_out out;
  llm_error_info info;
  llm_lim_slot slot;     /* the attempt's place at its endpoint's rate limits (llm/limiter.c) */
  llm_lim_headers lim;   /* the rate-limit headers of the current attempt's reply */
} remote_call;

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static unsigned next_random(void) {
  static uint64_t s;
  if (!s) s = ((uint64_t)now_ms() << 16) ^ (uint64_t)getpid() ^ 0x9e3779b97f4a7c15ull;
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return (unsigned)(s >> 16);
}

static void remote_free(remote_call *rc) {
  llm_limit_cancel(&rc->slot);
  if (rc->xfer) net_http_cancel(rc->xfer);
  if (rc->timer) event_free(rc->timer);
  free(rc->url);
  free(rc->body);
  free(rc->key_env);
  ag_buf_free(&rc->whole);
  ag_buf_free(&rc->text);
  llm_wire_calls_free(&rc->calls);
  net_stream_free(&rc->parser);
  free(rc);
}

static void remote_cancel(llm_call *call) {
  remote_call *rc = call->impl;
  call->impl = NULL;
  if (!rc) return;
  rc->call = NULL;
  llm_limit_cancel(&rc->slot);
  if (rc->xfer) {
    net_http_cancel(rc->xfer);
    rc->xfer = NULL;
  }
  if (rc->in_cb) rc->cancelled = 1; /* the code delivering the chunk frees it when it unwinds */
  else remote_free(rc);
}

static void set_info(remote_call *rc, const char *type, const char *message) {
  rc->info.kind = LLM_ERROR_OTHER;
  snprintf(rc->info.type, sizeof rc->info.type, "%s", type);
  snprintf(rc->info.message, sizeof rc->info.message, "%s", message);
}

/* Ends the call with the failure in rc->info; rc is freed inside (by llm_call_finish). */
static void remote_fail(remote_call *rc) {
  llm_error_info info = rc->info;
  info.attempts = rc->attempts;
  info.http_status = rc->status;
  const char *key = rc->key_env ? getenv(rc->key_env) : NULL;
  llm_redact(info.message, sizeof info.message, key);
  llm_redact(info.type, sizeof info.type, key);
  llm_call_finish(rc->call, AG_ERR_LLM, NULL, &info);
}

static int remote_text(void *ctx, const char *s, size_t n) {
  remote_call *rc = ctx;
  int err = ag_buf_append(&rc->text, s, n);
  if (err) return err;
  if (rc->mode == BODY_STREAM) {
    rc->delivered = 1;
    llm_call_chunk(rc->call, s, n);
    if (rc->cancelled) return AG_ERR_CANCELLED;
  }
  return AG_OK;
}

static int remote_event(void *ud, const char *event, const char *data, size_t len) {
  remote_call *rc = ud;
  rc->events++;
  /* A "\u0000" in a reply would silently end its text once parsed into a C string: it becomes U+FFFD. */
  if (len >= 6 && memmem(data, len, "\\u0000", 6)) {
    char *copy = malloc(len);
    if (!copy) return AG_ERR_NOMEM;
    memcpy(copy, data, len);
    ag_json_replace_nul_escapes(copy, len);
    int err = rc->wire->stream_event(event, copy, len, &rc->out);
    free(copy);
    return err;
  }
  return rc->wire->stream_event(event, data, len, &rc->out);
}

/* Explains why parsing stopped, unless the wire format already did. */
static void note_parse_failure(remote_call *rc, int err, int reply_too_big) {
  rc->fail_rc = err;
  if (rc->info.message[0]) return;
  /* Reply text is never longer than the bytes that carried it, so a stream that fails its cap while
   * its bytes are under 4 MiB has one event that is too big. */
  int event = rc->mode == BODY_STREAM && !reply_too_big;
  if (err == AG_ERR_TOO_BIG)
    set_info(rc, "too_big", event ? "a streamed event is larger than 1 MiB" : "the reply is larger than 4 MiB");
  else if (err == AG_ERR_NOMEM) set_info(rc, "nomem", "out of memory");
  else set_info(rc, "error", ag_strerror(err));
}

static int on_header(void *ud, const char *line, size_t len) {
  remote_call *rc = ud;
  if (len > 5 && memcmp(line, "HTTP/", 5) == 0) {
    /* A new response (after a 100 Continue, say): forget the previous one's headers. */
    const char *sp = memchr(line, ' ', len);
    rc->status = sp ? strtol(sp + 1, NULL, 10) : 0;
    rc->retry_after_ms = -1;
    rc->after_is_ms = 0;
    rc->json_reply = 0;
    llm_limit_headers_init(&rc->lim);
    return AG_OK;
  }
  const char *colon = memchr(line, ':', len);
  if (!colon) return AG_OK;
  size_t nlen = (size_t)(colon - line);
  const char *v = colon + 1;
  size_t vlen = len - nlen - 1;
  long ms;
  llm_limit_header(&rc->lim, line, nlen, v, vlen);
  if (nlen == 14 && strncasecmp(line, "retry-after-ms", 14) == 0 && llm_retry_parse_after(v, vlen, 1, &ms)) {
    rc->retry_after_ms = ms;
    rc->after_is_ms = 1;
  } else if (nlen == 11 && strncasecmp(line, "retry-after", 11) == 0 && !rc->after_is_ms &&
             llm_retry_parse_after(v, vlen, 0, &ms)) {
    rc->retry_after_ms = ms;
  } else if (nlen == 12 && strncasecmp(line, "content-type", 12) == 0) {
    char ct[64];
    size_t n = vlen < sizeof ct - 1 ? vlen : sizeof ct - 1;
    memcpy(ct, v, n);
    ct[n] = '\0';
    rc->json_reply = strstr(ct, "application/json") != NULL;
  }
  return AG_OK;
}

static void decide_mode(remote_call *rc) {
  if (rc->mode != BODY_UNDECIDED) return;
  if (rc->status < 200 || rc->status > 299) rc->mode = BODY_ERROR;
  /* A server that answers a streaming request with plain JSON (an error object, or no streaming
   * support) is read as a whole reply. */
  else if (rc->stream && !rc->json_reply) rc->mode = BODY_STREAM;
  else rc->mode = BODY_WHOLE;
}

static int on_body(void *ud, const char *data, size_t len) {
  remote_call *rc = ud;
  int err = AG_OK;
  decide_mode(rc);
  int over = len > REMOTE_REPLY_CAP - rc->parser.total;
  if (rc->mode == BODY_ERROR) {
    /* Only the start of an error page matters; past the cap the rest is dropped. */
    size_t room = REMOTE_ERROR_BODY_CAP - rc->whole.len;
    ag_buf_append(&rc->whole, data, len < room ? len : room);
    return AG_OK;
  }
  if (rc->mode == BODY_WHOLE) err = ag_buf_append(&rc->whole, data, len);
  else {
    rc->in_cb++;
    err = net_stream_feed(&rc->parser, data, len);
    rc->in_cb--;
    if (rc->cancelled) {
      remote_free(rc);
      return AG_ERR_CANCELLED;
    }
  }
  if (err) note_parse_failure(rc, err, over);
  return err;
}

static int attempt_start(remote_call *rc);

/* Retries after a backoff when the failure allows it and time remains, else fails the call. */
static void retry_or_fail(remote_call *rc, int retryable) {
  if (!retryable || rc->delivered || rc->attempts > rc->max_retries) {
    remote_fail(rc);
    return;
  }
  long delay = rc->retry_after_ms >= 0 ? rc->retry_after_ms
                                       : llm_retry_backoff_ms(llm_retry_base_ms(), rc->attempts, next_random());
  if (now_ms() + delay >= rc->deadline_ms) {
    if (rc->retry_after_ms >= 0) { /* say why a retryable failure was not retried */
      size_t len = strlen(rc->info.message);
      snprintf(rc->info.message + len, sizeof rc->info.message - len,
               " (the server asked to retry after %s%ld s, past the %ld ms timeout)",
               delay >= LLM_RETRY_MAX_AFTER_MS ? "at least " : "", (delay + 999) / 1000, (long)rc->timeout_ms);
    }
    remote_fail(rc); /* the next try could not finish in time anyway */
    return;
  }
  struct timeval tv = {delay / 1000, (delay % 1000) * 1000};
  if (evtimer_add(rc->timer, &tv) != 0) remote_fail(rc);
}

/* A reply that reports no usage (a local server, a streamed OpenAI-compatible reply without the usage
 * chunk) still spends: about 4 bytes a token of the request and of the reply, marked as an estimate so
 * that budgets hold and nobody takes the numbers for the provider's. */
static void estimate_usage(remote_call *rc) {
  size_t out = rc->text.len;
  for (size_t i = 0; i < rc->calls.n; i++) out += rc->calls.v[i].args.len + strlen(rc->calls.v[i].name ? rc->calls.v[i].name : "");
  rc->call->usage.input_tokens = (long)(strlen(rc->body) + 3) / 4;
  rc->call->usage.output_tokens = (long)(out + 3) / 4;
  rc->call->usage.estimated = 1;
}

/* The end of a 2xx reply: parse it (delivering its last chunks) and finish. */
static void finish_reply(remote_call *rc) {
  int err;
  rc->in_cb++;
  if (rc->mode == BODY_STREAM) err = net_stream_finish(&rc->parser);
  else {
    if (rc->whole.data) ag_json_replace_nul_escapes(rc->whole.data, rc->whole.len); /* as in remote_event */
    err = rc->wire->parse_body(ag_buf_str(&rc->whole), rc->whole.len, &rc->out);
  }
  rc->in_cb--;
  if (err == AG_OK && rc->mode == BODY_STREAM && !rc->events && !rc->cancelled) {
    /* Not one event: a proxy's HTML page, garbage or an empty body sent with status 200. Without
     * this a format whose stream may simply end (Gemini) would take it for an empty reply. */
    set_info(rc, "malformed", "the reply is not a stream of events (empty, HTML or garbage)");
    err = AG_ERR_INVALID;
  }
  if (rc->cancelled) {
    remote_free(rc);
    return;
  }
  if (err == AG_OK && !rc->out.done && !(rc->mode == BODY_STREAM && rc->wire->eof_is_done)) {
    set_info(rc, "incomplete", "the reply ended before it was complete");
    retry_or_fail(rc, 1);
    return;
  }
  if (err) {
    note_parse_failure(rc, err, 0);
    retry_or_fail(rc, err == AG_ERR_LLM && llm_retry_error_type(rc->info.type));
    return;
  }
  for (size_t i = 0; i < rc->calls.n; i++) {
    const llm_wire_call *k = &rc->calls.v[i];
    /* Argument text goes through as it came, valid JSON or not: the agent answers a call with
     * malformed arguments with an error result, which the model can act on. */
    if (llm_call_add_tool_call(rc->call, k->id, k->name, ag_buf_str(&k->args), k->signature) != AG_OK) {
      set_info(rc, "nomem", "out of memory");
      remote_fail(rc);
      return;
    }
  }
  rc->call->usage.input_tokens = rc->out.input_tokens;
  rc->call->usage.output_tokens = rc->out.output_tokens;
  if (!rc->out.input_tokens && !rc->out.output_tokens) estimate_usage(rc);
  llm_limit_used(&rc->slot, rc->call->usage.input_tokens + rc->call->usage.output_tokens);
  llm_call_finish(rc->call, AG_OK, ag_buf_str(&rc->text), NULL);
}

static void on_done(void *ud, CURLcode res, long status, long proxy_code, const char *errmsg) {
  remote_call *rc = ud;
  rc->xfer = NULL;
  if (status) rc->status = status;
  rc->lim.retry_after_ms = rc->retry_after_ms;
  llm_limit_done(&rc->slot, &rc->lim, rc->status); /* a 429 pauses the whole endpoint */
  if (res == CURLE_OK) {
    decide_mode(rc);
    if (rc->mode != BODY_ERROR) {
      finish_reply(rc);
      return;
    }
    char detail[sizeof rc->info.message];
    llm_wire_error_body(ag_buf_str(&rc->whole), rc->whole.len, &rc->info);
    memcpy(detail, rc->info.message, sizeof detail);
    int n = snprintf(rc->info.message, sizeof rc->info.message, "HTTP %ld: ", rc->status);
    size_t room = sizeof rc->info.message - (size_t)n;
    size_t dlen = strnlen(detail[0] ? detail : "no details", room - 1);
    memcpy(rc->info.message + n, detail[0] ? detail : "no details", dlen);
    rc->info.message[(size_t)n + dlen] = '\0';
    retry_or_fail(rc, llm_retry_status(rc->status, rc->info.type, NULL));
    return;
  }
  if (rc->fail_rc) { /* parsing stopped the transfer: rc->info says why */
    retry_or_fail(rc, rc->fail_rc == AG_ERR_LLM && llm_retry_error_type(rc->info.type));
    return;
  }
  char type[sizeof rc->info.type];
  int retryable = net_opts_classify(res, proxy_code, errmsg, rc->url, type, sizeof type);
  char msg[sizeof rc->info.message];
  if (proxy_code >= 300) snprintf(msg, sizeof msg, "the proxy refused the tunnel with HTTP %ld", proxy_code);
  else snprintf(msg, sizeof msg, "%s", errmsg);
  set_info(rc, type, msg);
  retry_or_fail(rc, retryable);
}

static void on_sent(void *ud) {
  remote_call *rc = ud;
  llm_limit_sent(&rc->slot);
}

static const net_http_sink remote_sink = {on_header, on_body, on_done, on_sent};

static int append_header(struct curl_slist **l, const char *line) {
  struct curl_slist *n = curl_slist_append(*l, line);
  if (!n) return AG_ERR_NOMEM;
  *l = n;
  return AG_OK;
}

/* The headers of one attempt, the key among them, read from the environment now. */
static int build_headers(remote_call *rc, struct curl_slist **out) {
  struct curl_slist *l = NULL;
  const char *accept = !rc->stream ? "Accept: application/json"
                       : rc->wire->framing == NET_STREAM_SSE ? "Accept: text/event-stream"
                                                             : "Accept: application/x-ndjson";
  int err = append_header(&l, "Content-Type: application/json");
  if (!err) err = append_header(&l, accept);
  if (!err) err = append_header(&l, "Expect:"); /* no 100-continue round trip for big prompts */
  if (!err) err = append_header(&l, "User-Agent: agora");
  if (!err && rc->wire->extra_header) err = append_header(&l, rc->wire->extra_header);
  const char *key = rc->key_env ? getenv(rc->key_env) : NULL;
  if (!err && key && key[0]) {
    size_t n = strlen(rc->wire->key_header) + strlen(key) + 1;
    char *line = malloc(n);
    if (!line) err = AG_ERR_NOMEM;
    else {
      snprintf(line, n, "%s%s", rc->wire->key_header, key);
      err = append_header(&l, line);
      explicit_bzero(line, n);
      free(line);
    }
  }
  if (err) {
    for (struct curl_slist *p = l; p; p = p->next) explicit_bzero(p->data, strlen(p->data));
    curl_slist_free_all(l);
    return err;
  }
  *out = l;
  return AG_OK;
}

static int attempt_start(remote_call *rc) {
  int err = AG_OK;
  struct curl_slist *headers = NULL;
  CURL *easy = NULL;
  /* The call's time runs from its first attempt: waiting for its endpoint's rate limits is not its fault. */
  if (!rc->attempts) rc->deadline_ms = now_ms() + rc->timeout_ms;
  int64_t left = rc->deadline_ms - now_ms();
  if (left < 1) left = 1;
  rc->status = 0;
  rc->retry_after_ms = -1;
  rc->after_is_ms = 0;
  rc->json_reply = 0;
  llm_limit_headers_init(&rc->lim);
  rc->mode = BODY_UNDECIDED;
  rc->fail_rc = 0;
  memset(&rc->info, 0, sizeof rc->info);
  memset(&rc->out, 0, sizeof rc->out);
  rc->out.text = remote_text;
  rc->out.ctx = rc;
  rc->out.err = &rc->info;
  rc->out.calls = &rc->calls;
  ag_buf_free(&rc->whole);
  ag_buf_init(&rc->whole, REMOTE_REPLY_CAP);
  ag_buf_free(&rc->text);
  ag_buf_init(&rc->text, REMOTE_REPLY_CAP);
  llm_wire_calls_free(&rc->calls);
  llm_wire_calls_init(&rc->calls, REMOTE_REPLY_CAP);
  net_stream_free(&rc->parser);
  net_stream_init(&rc->parser, rc->wire->framing, REMOTE_EVENT_CAP, REMOTE_REPLY_CAP, remote_event, rc);
  rc->events = 0;
  if ((err = build_headers(rc, &headers))) goto fail;
  if (!(easy = curl_easy_init())) {
    err = AG_ERR_NOMEM;
    goto fail;
  }
  /* Copied: a transfer cancelled from a callback lingers until the loop removes it, and may still
   * be sending after rc is gone. */
  curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, (long)strlen(rc->body));
  curl_easy_setopt(easy, CURLOPT_COPYPOSTFIELDS, rc->body);
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, (long)left);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, left < REMOTE_CONNECT_TIMEOUT_MS ? (long)left
                                                                                     : REMOTE_CONNECT_TIMEOUT_MS);
  if (rc->stream) {
    /* A stream that goes quiet is stuck. Not for whole replies: a long answer may take minutes
     * before its first byte, and the total timeout covers them. */
    long stall = rc->timeout_ms < REMOTE_STALL_MS ? rc->timeout_ms : REMOTE_STALL_MS;
    curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, stall >= 2000 ? stall / 1000 : 1L);
  }
  curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
  net_opts net = llm_config_net(&rc->call->ep->cfg);
  net_opts_setup(easy, &net, rc->url);
  rc->attempts++;
  err = net_http_start(rc->call->client->net, easy, rc->url, headers, &remote_sink, rc, &rc->xfer);
  easy = NULL; /* consumed, with the headers */
  headers = NULL;
  if (err) goto fail;
  return AG_OK;
fail:
  if (easy) curl_easy_cleanup(easy);
  for (struct curl_slist *p = headers; p; p = p->next) explicit_bzero(p->data, strlen(p->data));
  curl_slist_free_all(headers);
  return err;
}

/* The attempt, admitted from the loop by its endpoint's rate limits. */
static void attempt_admitted(void *ud) {
  remote_call *rc = ud;
  if (attempt_start(rc) != AG_OK) {
    set_info(rc, "connection", "could not start the request");
    remote_fail(rc);
  }
}

/* Starts the next attempt when its endpoint's rate limits let it: now, or later from the loop. Its tokens
 * for tpm: the request's bytes / 4 and the reply's cap, as providers count them against the window. */
static int attempt_go(remote_call *rc) {
  const llm_config *cfg = &rc->call->ep->cfg;
  rc->slot.tokens = (long)(strlen(rc->body) / 4) + (cfg->max_tokens > 0 ? cfg->max_tokens : 0);
  rc->slot.go = attempt_admitted;
  rc->slot.ud = rc;
  int r = llm_limit_acquire(rc->call->client, cfg, &rc->slot);
  return r == 1 ? attempt_start(rc) : r;
}

static void on_timer(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  remote_call *rc = arg;
  if (rc->early_fail) {
    remote_fail(rc);
    return;
  }
  if (attempt_go(rc) != AG_OK) {
    set_info(rc, "connection", "could not start the request");
    remote_fail(rc);
  }
}

static int remote_start(llm_call *call, const llm_request *req) {
  int err = AG_OK;
  const llm_config *cfg = &call->ep->cfg;
  const llm_wire *wire = llm_wire_for(cfg->provider);
  ag_buf url;
  ag_buf_init(&url, 8192);
  if (!wire) return AG_ERR_INVALID;
  remote_call *rc = calloc(1, sizeof *rc);
  if (!rc) return AG_ERR_NOMEM;
  rc->call = call;
  rc->wire = wire;
  rc->stream = cfg->stream;
  rc->max_retries = cfg->max_retries > 0 ? cfg->max_retries : 0;
  rc->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : 120000;
  rc->deadline_ms = now_ms() + rc->timeout_ms;
  net_stream_init(&rc->parser, wire->framing, REMOTE_EVENT_CAP, REMOTE_REPLY_CAP, remote_event, rc);
  llm_wire_calls_init(&rc->calls, REMOTE_REPLY_CAP);
  int needs = 0; /* the key's rules: llm_wire_key_env */
  const char *env = llm_wire_key_env(cfg, wire, &needs);
  if (env && !(rc->key_env = strdup(env))) err = AG_ERR_NOMEM;
  if (!err) err = wire->build(cfg, req, &url, &rc->body);
  if (!err && !(rc->url = ag_buf_take(&url))) err = AG_ERR_NOMEM;
  if (!err && !(rc->timer = evtimer_new(call->client->base, on_timer, rc))) err = AG_ERR_NOMEM;
  if (err) goto fail;
  call->impl = rc;
  const char *key = env ? getenv(env) : NULL;
  if (needs && (!key || !key[0])) {
    /* Reported from the loop like any failure: callbacks never run inside start. */
    char msg[sizeof rc->info.message];
    snprintf(msg, sizeof msg, "environment variable %s is not set (%s needs an API key)", env ? env : "?",
             llm_provider_name(cfg->provider));
    set_info(rc, "missing_key", msg);
    rc->early_fail = 1;
    struct timeval zero = {0, 0};
    return evtimer_add(rc->timer, &zero) == 0 ? AG_OK : AG_ERR_IO;
  }
  if (key && strpbrk(key, "\r\n")) {
    char msg[sizeof rc->info.message];
    snprintf(msg, sizeof msg, "environment variable %s holds a line break", env);
    set_info(rc, "bad_key", msg);
    rc->early_fail = 1;
    struct timeval zero = {0, 0};
    return evtimer_add(rc->timer, &zero) == 0 ? AG_OK : AG_ERR_IO;
  }
  return attempt_go(rc); /* on failure llm_call_start releases the call, and rc with it */
fail:
  ag_buf_free(&url);
  remote_free(rc);
  return err;
}

static const llm_provider_ops remote_ops = {remote_start, remote_cancel};

const llm_provider_ops *llm_http_ops_for(llm_provider_kind kind) {
  return llm_wire_for(kind) ? &remote_ops : NULL;
}
