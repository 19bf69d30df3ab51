/* The loopback LLM server (see llm_server.h): raw HTTP/1.1 on libevent bufferevents, in a thread of
 * its own. Each response is planned whole when its request arrives, as a queue of timed segments
 * (bytes, a stall, a reset), which the connection then plays out. This file holds the glue: a request
 * answered by its plan, the connections, the public calls; the rest is in llm_server_*.c by concept. */
#include "support/llm_server_int.h"
#include "support/llm_server_embed.h"

#include "support/loopback.h"
#include "support/wait.h"

#include "common/buf.h"

#include <cjson/cJSON.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>
/* How many times the request under key was seen, this one included (the times= directive's count). */
static int respond_seen(llm_server *s, const char *key) {
  pthread_mutex_lock(&s->mu);
  counter *ct = s->counters;
  while (ct && strcmp(ct->key, key) != 0) ct = ct->next;
  if (!ct) {
    ct = calloc(1, sizeof *ct);
    ct->key = strdup(key);
    ct->next = s->counters;
    s->counters = ct;
  }
  int n = ++ct->n;
  pthread_mutex_unlock(&s->mu);
  return n;
}

/* The request's plan: the first matching rule, then the system prompt's directive, then the last user
 * message's; faults used up (times=), drawn (error_pct, stall_pct) or dropped after a tool's result. */
static void respond_plan(llm_server *s, plan *p, const req_info *ri, ag_buf *key) {
  pthread_mutex_lock(&s->mu);
  int idx = 0;
  for (rule *r = s->rules; r; r = r->next, idx++) {
    if (!r->match[0] || strstr(ag_buf_str(&ri->system), r->match) || strstr(ag_buf_str(&ri->last_user), r->match)) {
      lsrv_plan_parse(p, r->directives, NULL);
      ag_buf_printf(key, "rule%d|", idx);
      break;
    }
  }
  pthread_mutex_unlock(&s->mu);
  lsrv_plan_from_text(p, ag_buf_str(&ri->system), key);
  lsrv_plan_from_text(p, ag_buf_str(&ri->last_user), key);
  ag_buf_printf(key, "%d", (int)ri->kind);
  if (p->times > 0 && respond_seen(s, ag_buf_str(key)) > p->times) { /* this plan's faults are used up */
    p->status = 0;
    p->retry_after = p->retry_after_ms = -1;
    p->stall = p->reset = -1;
    p->malformed = 0;
    p->oversize = 0;
    free(p->midstream_error);
    p->midstream_error = NULL;
    free(p->bad_body);
    p->bad_body = NULL;
    p->endless = p->redirect = 0;
    p->drip = p->pad_headers = p->gzip = 0;
  }
  if (p->error_pct > 0 || p->stall_pct > 0) {
    pthread_mutex_lock(&s->mu);
    long draw = (long)(rand_r(&s->seed) % 100);
    pthread_mutex_unlock(&s->mu);
    if (draw < p->error_pct) p->status = 500;
    else if (draw < p->error_pct + p->stall_pct) p->stall = ri->stream ? 1 : 0;
  }
  if (p->after_tool && ri->last_is_result) {
    /* The model's answer once it has a tool's result: text, no more calls. */
    for (int i = 0; i < SRV_MAX_CALLS; i++) {
      free(p->tool[i]);
      p->tool[i] = NULL;
    }
    p->echo = 0;
    lsrv_set_str(&p->reply, p->after_tool);
    if (p->after_tool_stall > 0) { /* counted apart from the plan's other requests */
      ag_buf_appends(key, "|after_tool");
      if (respond_seen(s, ag_buf_str(key)) <= p->after_tool_stall) p->stall = ri->stream ? 1 : 0;
    }
  }
}

/* The reply's text: the plan's, or (echo) the last user message without its directive. */
static void respond_text(const plan *p, const req_info *ri, ag_buf *text) {
  if (!p->echo) {
    ag_buf_appends(text, p->reply ? p->reply : "mock reply");
    return;
  }
  const char *u = ag_buf_str(&ri->last_user);
  const char *d = strstr(u, "[[mock");
  const char *e = d ? strstr(d, "]]") : NULL;
  ag_buf_appends(text, "echo: ");
  if (d) {
    ag_buf_append(text, u, (size_t)(d - u));
    if (e) ag_buf_appends(text, e + 2);
  } else {
    ag_buf_appends(text, u);
  }
  while (text->len && (text->data[text->len - 1] == ' ' || text->data[text->len - 1] == '\n')) text->data[--text->len] = '\0';
}

/* Queues the response the plan asks for: a hostile one, an error, a bad body, a stream, a fault or the
 * reply. */
static void respond_body(out *o, const plan *p, const req_info *ri, const char *text) {
  if (lsrv_respond_hostile(o)) {
    /* queued */
  } else if (p->status >= 300) {
    lsrv_respond_json(o, p->status,
                      lsrv_error_object(o, p->status, p->error_type ? p->error_type : lsrv_default_error_type(ri->kind, p->status)));
  } else if (p->bad_body) {
    /* What a captive portal, a misrouted proxy or a crashed backend sends with status 200. */
    const char *b = !strcmp(p->bad_body, "html")      ? "<!DOCTYPE html><html><body><h1>Welcome</h1></body></html>\n"
                    : !strcmp(p->bad_body, "garbage") ? "\x01\x02 not json at all }{\n"
                                                      : "";
    const char *type = !strcmp(p->bad_body, "html")      ? "text/html; charset=utf-8"
                       : !strcmp(p->bad_body, "garbage") ? "text/plain"
                       : ri->stream                      ? "text/event-stream"
                                                         : "application/json";
    lsrv_out_headers(o, 200, type, (long)strlen(b));
    if (*b) lsrv_out_raw(o, b, strlen(b));
    lsrv_push_seg(o->c, SEG_END, 0, NULL, 0);
  } else if (ri->stream) {
    lsrv_respond_stream(o, text);
  } else if (p->malformed) {
    const char *bad = "{\"choices\": [ oops";
    lsrv_out_whole(o, 200, bad, strlen(bad));
  } else if (p->midstream_error) {
    lsrv_respond_json(o, 200, lsrv_error_object(o, 500, p->midstream_error));
  } else if (p->oversize > 0) {
    cJSON *r = lsrv_whole_reply(o, "\x01");
    char *framed = cJSON_PrintUnformatted(r);
    cJSON_Delete(r);
    lsrv_out_headers(o, 200, "application/json", -1);
    lsrv_out_big(o, framed, p->oversize);
    free(framed);
    lsrv_out_body_end(o);
  } else {
    lsrv_respond_json(o, 200, lsrv_whole_reply(o, text));
  }
}

static void respond(conn *c, const char *method, const char *path, const char *headers, const char *body,
                    size_t body_len) {
  llm_server *s = c->srv;
  plan p;
  lsrv_plan_init(&p);
  req_info ri;
  memset(&ri, 0, sizeof ri);
  ag_buf_init(&ri.system, SRV_BIG);
  ag_buf_init(&ri.last_user, SRV_BIG);
  ag_buf_init(&ri.all_text, SRV_BIG);
  out o;
  memset(&o, 0, sizeof o);
  o.c = c;
  o.p = &p;
  o.ri = &ri;
  ag_buf key, text;
  ag_buf_init(&key, SRV_BIG);
  ag_buf_init(&text, SRV_BIG);
  cJSON *root = cJSON_ParseWithLength(body, body_len);
  char *embedded = NULL;
  long embed_status = 0;
  if (!strcmp(method, "POST") && llm_server_embed_reply(path, root, &embed_status, &embedded)) {
    lsrv_out_whole(&o, embed_status, embedded, strlen(embedded)); /* tests/support/llm_server_embed.c */
    free(embedded);
    goto done;
  }
  if (strcmp(method, "POST") != 0 || !root || lsrv_parse_request(&ri, path, headers, root) != 0) {
    o.kind = W_OLLAMA; /* {"error": "..."} */
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "error", root ? "unknown route" : "request body is not JSON");
    lsrv_respond_json(&o, root ? 404 : 400, e);
    goto done;
  }
  o.kind = ri.kind;
  respond_plan(s, &p, &ri, &key);
  lsrv_limits_check(s, &o, &p, lsrv_input_tokens(&o));
  o.n_calls = lsrv_n_calls(&p);
  o.with_text = !o.n_calls || p.reply || p.echo;
  respond_text(&p, &ri, &text);
  respond_body(&o, &p, &ri, ag_buf_str(&text));
done:
  cJSON_Delete(root);
  lsrv_req_info_free(&ri);
  lsrv_plan_free(&p);
  ag_buf_free(&key);
  ag_buf_free(&text);
}

/* ---------- connections ---------- */

/* A request is in flight from its parse until the last byte of its response is queued (or its connection
 * goes): what a client's concurrency limit must keep to. */
static void conn_set_busy(conn *c, int busy) {
  llm_server *s = c->srv;
  if (c->busy == busy) return;
  c->busy = busy;
  pthread_mutex_lock(&s->mu);
  if (busy && ++s->in_flight > s->peak) s->peak = s->in_flight;
  if (!busy) s->in_flight--;
  pthread_mutex_unlock(&s->mu);
}

static void conn_free(conn *c) {
  llm_server *s = c->srv;
  conn_set_busy(c, 0);
  while (c->head) {
    seg *n = c->head->next;
    free(c->head->data);
    free(c->head);
    c->head = n;
  }
  if (c->timer) event_free(c->timer);
  if (c->bev) bufferevent_free(c->bev);
  if (c->prev) c->prev->next = c->next;
  else s->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  free(c);
  pthread_mutex_lock(&s->mu);
  s->closed++;
  pthread_mutex_unlock(&s->mu);
}

static void conn_reset(conn *c) {
  struct linger lg = {1, 0};
  setsockopt(bufferevent_getfd(c->bev), SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  conn_free(c); /* closing with a zero linger sends RST */
}

static void conn_read(conn *c);

/* A stalled stream whose bytes have all gone out: what a test waits on before it acts on the stall. */
static void conn_count_stall(conn *c) {
  c->stalled = 2;
  pthread_mutex_lock(&c->srv->mu);
  c->srv->stalls++;
  pthread_mutex_unlock(&c->srv->mu);
}

/* Plays the response queue until it must wait (a delay, a flush) or ends. Returns 0 when the
 * connection was freed. */
static int conn_play(conn *c) {
  while (c->head) {
    seg *sg = c->head;
    if (sg->kind == SEG_REPEAT) {
      if (evbuffer_get_length(bufferevent_get_output(c->bev)) < SRV_REPEAT_HIGH) {
        bufferevent_write(c->bev, sg->data, sg->len);
        if (sg->count > 0 && --sg->count == 0) {
          c->head = sg->next;
          if (!c->head) c->tail = NULL;
          free(sg->data);
          free(sg);
          continue;
        }
      }
      long ms = sg->delay_ms > 0 ? sg->delay_ms : 1;
      struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
      evtimer_add(c->timer, &tv);
      return 1;
    }
    if (sg->delay_ms > 0 && !sg->waited) {
      sg->waited = 1;
      struct timeval tv = {sg->delay_ms / 1000, (sg->delay_ms % 1000) * 1000};
      evtimer_add(c->timer, &tv);
      return 1;
    }
    c->head = sg->next;
    if (!c->head) c->tail = NULL;
    seg_kind kind = sg->kind;
    if (kind == SEG_DATA && sg->len) bufferevent_write(c->bev, sg->data, sg->len);
    free(sg->data);
    free(sg);
    if (kind == SEG_STALL) {
      c->stalled = 1;
      if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) conn_count_stall(c);
      while (c->head) {
        seg *n = c->head->next;
        free(c->head->data);
        free(c->head);
        c->head = n;
      }
      c->tail = NULL;
      return 1;
    }
    if (kind == SEG_RESET) {
      if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
        conn_reset(c);
        return 0;
      }
      c->reset_pending = 1; /* after the write callback says the output is flushed */
      return 1;
    }
    if (kind == SEG_END) {
      conn_set_busy(c, 0);
      conn_read(c); /* a request that arrived meanwhile */
      return 1;
    }
  }
  return 1;
}

static void on_conn_timer(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  conn_play(arg);
}

static void on_conn_write(struct bufferevent *bev, void *arg) {
  (void)bev;
  conn *c = arg;
  if (c->stalled == 1) conn_count_stall(c);
  if (c->reset_pending) conn_reset(c);
}

/* Parses one whole request from the input buffer when it is there, and plans its response. */
static void conn_read(conn *c) {
  if (c->busy || c->stalled) return;
  struct evbuffer *in = bufferevent_get_input(c->bev);
  struct evbuffer_ptr end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
  if (end.pos < 0) {
    if (evbuffer_get_length(in) > SRV_HEADER_CAP) conn_free(c);
    return;
  }
  size_t hlen = (size_t)end.pos + 4;
  char *head = malloc(hlen + 1);
  evbuffer_copyout(in, head, hlen);
  head[hlen] = '\0';
  char *eol = strstr(head, "\r\n");
  *eol = '\0';
  char *headers = eol + 2;
  char *cl = lsrv_header_value(headers, "content-length");
  size_t blen = cl ? strtoul(cl, NULL, 10) : 0;
  free(cl);
  if (blen > SRV_BODY_CAP) {
    free(head);
    conn_free(c);
    return;
  }
  if (evbuffer_get_length(in) < hlen + blen) {
    free(head);
    return; /* the rest of the body is on its way */
  }
  evbuffer_drain(in, hlen);
  char *body = malloc(blen + 1);
  evbuffer_remove(in, body, blen);
  body[blen] = '\0';
  char method[16] = "", path[4096] = "";
  sscanf(head, "%15s %4095s", method, path);
  headers[strlen(headers) - 2] = '\0'; /* drop the blank line's CRLF */
  llm_server *s = c->srv;
  pthread_mutex_lock(&s->mu);
  if (s->record) {
    if (s->n_reqs == s->cap_reqs) {
      s->cap_reqs = s->cap_reqs ? s->cap_reqs * 2 : 16;
      s->reqs = realloc(s->reqs, s->cap_reqs * sizeof *s->reqs);
    }
    llm_server_request *r = &s->reqs[s->n_reqs++];
    r->method = strdup(method);
    r->path = strdup(path);
    r->headers = strdup(headers);
    r->body = strdup(body);
  }
  pthread_mutex_unlock(&s->mu);
  conn_set_busy(c, 1);
  respond(c, method, path, headers, body, blen);
  free(head);
  free(body);
  conn_play(c);
}

static void on_conn_read(struct bufferevent *bev, void *arg) {
  (void)bev;
  conn_read(arg);
}

static void on_conn_event(struct bufferevent *bev, short what, void *arg) {
  (void)bev;
  if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) conn_free(arg);
}

static void on_accept(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa, int socklen, void *arg) {
  (void)lis;
  (void)sa;
  (void)socklen;
  llm_server *s = arg;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  conn *c = calloc(1, sizeof *c);
  c->srv = s;
  c->bev = bufferevent_socket_new(s->lb.base, fd, BEV_OPT_CLOSE_ON_FREE);
  c->timer = evtimer_new(s->lb.base, on_conn_timer, c);
  bufferevent_setcb(c->bev, on_conn_read, on_conn_write, on_conn_event, c);
  bufferevent_enable(c->bev, EV_READ | EV_WRITE);
  c->next = s->conns;
  if (s->conns) s->conns->prev = c;
  s->conns = c;
  pthread_mutex_lock(&s->mu);
  s->accepted++;
  pthread_mutex_unlock(&s->mu);
}

/* ---------- public ---------- */

int llm_server_start(llm_server **out) {
  llm_server *s = calloc(1, sizeof *s);
  if (!s) return -1;
  pthread_mutex_init(&s->mu, NULL);
  s->record = 1;
  s->seed = 1;
  if (loopback_start(&s->lb, on_accept, s) != 0) {
    llm_server_stop(s);
    return -1;
  }
  *out = s;
  return 0;
}

void llm_server_stop(llm_server *s) {
  if (!s) return;
  loopback_join(&s->lb);
  while (s->conns) conn_free(s->conns);
  loopback_free(&s->lb);
  llm_server_reset(s);
  free(s->reqs);
  free(s->lim_t);
  free(s->lim_tok);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

int llm_server_port(const llm_server *s) { return s->lb.port; }

const char *llm_server_url(const llm_server *s, const char *suffix) {
  static char buf[256];
  snprintf(buf, sizeof buf, "http://127.0.0.1:%d%s", s->lb.port, suffix ? suffix : "");
  return buf;
}

int llm_server_rule(llm_server *s, const char *match, const char *directives) {
  plan p;
  lsrv_plan_init(&p);
  int bad = lsrv_plan_parse(&p, directives, NULL);
  lsrv_plan_free(&p);
  if (bad) return -1;
  rule *r = calloc(1, sizeof *r);
  r->match = strdup(match ? match : "");
  r->directives = strdup(directives);
  pthread_mutex_lock(&s->mu);
  rule **tail = &s->rules;
  while (*tail) tail = &(*tail)->next;
  *tail = r;
  pthread_mutex_unlock(&s->mu);
  return 0;
}

void llm_server_reset(llm_server *s) {
  pthread_mutex_lock(&s->mu);
  while (s->rules) {
    rule *n = s->rules->next;
    free(s->rules->match);
    free(s->rules->directives);
    free(s->rules);
    s->rules = n;
  }
  while (s->counters) {
    counter *n = s->counters->next;
    free(s->counters->key);
    free(s->counters);
    s->counters = n;
  }
  for (size_t i = 0; i < s->n_reqs; i++) llm_server_request_free(&s->reqs[i]);
  s->n_reqs = 0;
  s->stalls = 0;
  s->peak = s->in_flight;
  pthread_mutex_unlock(&s->mu);
}

void llm_server_set_limits(llm_server *s, long window_ms, long rpm, long tpm) {
  pthread_mutex_lock(&s->mu);
  s->lim_window_ms = window_ms > 0 ? window_ms : 60000;
  s->lim_rpm = rpm;
  s->lim_tpm = tpm;
  s->lim_n = s->lim_head = 0;
  s->lim_tokens = 0;
  s->lim_rejected = 0;
  pthread_mutex_unlock(&s->mu);
}

size_t llm_server_rejected(llm_server *s) {
  pthread_mutex_lock(&s->mu);
  size_t n = s->lim_rejected;
  pthread_mutex_unlock(&s->mu);
  return n;
}

void llm_server_set_recording(llm_server *s, int on) {
  pthread_mutex_lock(&s->mu);
  s->record = on;
  pthread_mutex_unlock(&s->mu);
}

size_t llm_server_request_count(llm_server *s) { return loopback_count(&s->mu, &s->n_reqs); }

static size_t requests_seen(void *s) { return llm_server_request_count(s); }

int llm_server_wait_requests(llm_server *s, size_t n, long ms) { return wait_count(requests_seen, s, n, ms); }

int llm_server_request_get(llm_server *s, size_t i, llm_server_request *out) {
  int rc = -1;
  pthread_mutex_lock(&s->mu);
  if (i < s->n_reqs) {
    const llm_server_request *r = &s->reqs[i];
    out->method = strdup(r->method);
    out->path = strdup(r->path);
    out->headers = strdup(r->headers);
    out->body = strdup(r->body);
    rc = 0;
  }
  pthread_mutex_unlock(&s->mu);
  return rc;
}

void llm_server_request_free(llm_server_request *r) {
  free(r->method);
  free(r->path);
  free(r->headers);
  free(r->body);
  memset(r, 0, sizeof *r);
}

char *llm_server_request_header(const llm_server_request *r, const char *name) {
  return lsrv_header_value(r->headers, name);
}

size_t llm_server_requests_with(llm_server *s, const char *path_part, const char *header_part) {
  size_t n = 0;
  pthread_mutex_lock(&s->mu);
  for (size_t i = 0; i < s->n_reqs; i++)
    n += (!path_part || strstr(s->reqs[i].path, path_part)) && (!header_part || strstr(s->reqs[i].headers, header_part));
  pthread_mutex_unlock(&s->mu);
  return n;
}

size_t llm_server_stalls(llm_server *s) { return loopback_count(&s->mu, &s->stalls); }

size_t llm_server_connections(llm_server *s) { return loopback_count(&s->mu, &s->accepted); }

size_t llm_server_open_connections(llm_server *s) {
  pthread_mutex_lock(&s->mu);
  size_t n = s->accepted - s->closed;
  pthread_mutex_unlock(&s->mu);
  return n;
}

static int no_connection(void *s) { return llm_server_open_connections(s) == 0; }

int llm_server_wait_closed(llm_server *s, long ms) { return wait_until(no_connection, s, ms); }

size_t llm_server_peak_concurrency(llm_server *s) { return loopback_count(&s->mu, &s->peak); }
