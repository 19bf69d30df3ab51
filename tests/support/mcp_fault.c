/* The misbehaving loopback MCP server of mcp_fault.h: a few dozen lines of HTTP/1.1 on bufferevents,
 * on its own thread, answering each connection's one request as the mode says. */
#include "support/mcp_fault.h"
#include "support/wait.h"

#include "support/loopback.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MF_HEAD_CAP (64u << 10)
#define MF_BODY_CAP (4u << 20)
#define MF_MAX_REQS 256

typedef enum after { AFTER_CLOSE, AFTER_HOLD, AFTER_RESET, AFTER_KEEP } after;

typedef struct conn {
  struct mcp_fault *s;
  struct bufferevent *bev;
  after then;
  int answered;
  struct conn *prev, *next;
} conn;

struct mcp_fault {
  loopback lb; /* the server's thread, loop and listener */
  pthread_mutex_t mu;
  mcp_fault_mode mode;
  mcp_fault_req reqs[MF_MAX_REQS];
  size_t n_reqs;
  char dropped_id[128]; /* the id of the request whose stream was reset, for the resume */
  unsigned get_seq;
  conn *conns;
};

double mcp_fault_now_ms(void) { return now_s() * 1000.0; }

static void conn_free(conn *c) {
  mcp_fault *s = c->s;
  bufferevent_free(c->bev);
  if (c->prev) c->prev->next = c->next;
  else s->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  free(c);
}

static void conn_end(conn *c) {
  if (c->then == AFTER_RESET) {
    struct linger lg = {1, 0};
    setsockopt(bufferevent_getfd(c->bev), SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  }
  conn_free(c);
}

static void on_read(struct bufferevent *bev, void *arg);

static void on_write(struct bufferevent *bev, void *arg) {
  conn *c = arg;
  if (!c->answered || c->then == AFTER_HOLD) return;
  if (c->then != AFTER_KEEP) {
    conn_end(c);
    return;
  }
  c->answered = 0; /* the next request on this connection */
  on_read(bev, c);
}

/* Status line, headers, then body; what happens after it is flushed is c->then. */
static void reply(conn *c, int status, const char *ctype, const char *extra, const char *body, after then) {
  struct evbuffer *out = bufferevent_get_output(c->bev);
  evbuffer_add_printf(out, "HTTP/1.1 %d X\r\nConnection: %s\r\n", status, then == AFTER_KEEP ? "keep-alive" : "close");
  if (ctype) evbuffer_add_printf(out, "Content-Type: %s\r\n", ctype);
  if (extra) evbuffer_add_printf(out, "%s", extra);
  if ((then == AFTER_CLOSE || then == AFTER_KEEP) && (!ctype || strcmp(ctype, "text/event-stream") != 0))
    evbuffer_add_printf(out, "Content-Length: %zu\r\n", body ? strlen(body) : 0);
  evbuffer_add_printf(out, "\r\n%s", body ? body : "");
  c->then = then;
  c->answered = 1;
}

/* The value of header name in head (after the request line), into out; "" when absent. */
static void header(const char *head, const char *name, char *out, size_t cap) {
  size_t n = strlen(name);
  out[0] = '\0';
  for (const char *p = strstr(head, "\r\n"); p && p[2]; p = strstr(p + 2, "\r\n")) {
    if (strncasecmp(p + 2, name, n) != 0 || p[2 + n] != ':') continue;
    const char *v = p + 3 + n;
    while (*v == ' ') v++;
    size_t len = strcspn(v, "\r\n");
    if (len >= cap) len = cap - 1;
    memcpy(out, v, len);
    out[len] = '\0';
    return;
  }
}

static void answer_text(char *out, size_t cap, const char *id, const char *result) {
  snprintf(out, cap, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}", id, result);
}

static void serve_post(conn *c, mcp_fault_mode mode, const mcp_fault_req *r, const char *id) {
  mcp_fault *s = c->s;
  char body[1024];
  if (strcmp(r->rpc_method, "initialize") == 0) {
    answer_text(body, sizeof body, id, "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}},"
                                       "\"serverInfo\":{\"name\":\"fault\",\"version\":\"1\"}}");
    reply(c, 200, "application/json", "Mcp-Session-Id: fault-session-1\r\n", body, AFTER_CLOSE);
  } else if (!id[0]) {
    reply(c, 202, NULL, NULL, "", AFTER_CLOSE);
  } else if (mode == MF_EXPIRE && r->session[0]) {
    reply(c, 404, "text/plain", NULL, "Session not found", AFTER_CLOSE);
  } else if (mode == MF_STALL) {
    reply(c, 200, "text/event-stream", NULL, ": waiting\n\n", AFTER_HOLD);
  } else if (mode == MF_GARBAGE) {
    reply(c, 200, "application/json", NULL, "<html><body>Bad Gateway</body></html>", AFTER_CLOSE);
  } else if (mode == MF_SSE_GARBAGE) {
    reply(c, 200, "text/event-stream", NULL, "data: {\"jsonrpc\":\"2.0\", broken\n\n", AFTER_CLOSE);
  } else if (mode == MF_STATUS500) {
    reply(c, 500, "text/plain", NULL, "boom", AFTER_CLOSE);
  } else if (mode == MF_DROP) {
    pthread_mutex_lock(&s->mu);
    snprintf(s->dropped_id, sizeof s->dropped_id, "%s", id);
    pthread_mutex_unlock(&s->mu);
    snprintf(body, sizeof body, "retry: 60\nid: ev-1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
             "\"params\":{\"progressToken\":1,\"progress\":1}}\n\n");
    reply(c, 200, "text/event-stream", NULL, body, AFTER_RESET);
  } else {
    answer_text(body, sizeof body, id, "{\"ok\":true}");
    reply(c, 200, "application/json", NULL, body, mode == MF_KEEP_ALIVE ? AFTER_KEEP : AFTER_CLOSE);
  }
}

static void serve_get(conn *c, mcp_fault_mode mode, const mcp_fault_req *r) {
  mcp_fault *s = c->s;
  char body[1024], id[128], answer[512];
  pthread_mutex_lock(&s->mu);
  snprintf(id, sizeof id, "%s", s->dropped_id);
  unsigned seq = ++s->get_seq;
  pthread_mutex_unlock(&s->mu);
  if (mode == MF_DROP && strcmp(r->last_event_id, "ev-1") == 0 && id[0]) {
    answer_text(answer, sizeof answer, id, "{\"content\":[{\"type\":\"text\",\"text\":\"resumed\"}]}");
    snprintf(body, sizeof body, "id: ev-2\ndata: %s\n\n", answer);
    reply(c, 200, "text/event-stream", NULL, body, AFTER_CLOSE);
  } else if (mode == MF_GET_STREAM) {
    snprintf(body, sizeof body, "retry: 20\nid: g-%u\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
             "\"params\":{\"level\":\"info\",\"data\":\"hello %u\"}}\n\n", seq, seq);
    reply(c, 200, "text/event-stream", NULL, body, AFTER_CLOSE);
  } else {
    reply(c, 405, "text/plain", NULL, "Method Not Allowed", AFTER_CLOSE);
  }
}

static void record(mcp_fault *s, const mcp_fault_req *r) {
  pthread_mutex_lock(&s->mu);
  if (s->n_reqs < MF_MAX_REQS) s->reqs[s->n_reqs] = *r;
  s->n_reqs++; /* counted past the records kept */
  pthread_mutex_unlock(&s->mu);
}

/* The JSON-RPC method and id (compact JSON, "" for none) of a POST body. */
static void rpc_of(const char *body, size_t len, mcp_fault_req *r, char *id, size_t cap) {
  cJSON *doc = cJSON_ParseWithLength(body, len);
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(doc, "method");
  const cJSON *i = cJSON_GetObjectItemCaseSensitive(doc, "id");
  if (cJSON_IsString(m)) snprintf(r->rpc_method, sizeof r->rpc_method, "%s", m->valuestring);
  char *t = i ? cJSON_PrintUnformatted(i) : NULL;
  snprintf(id, cap, "%s", t ? t : "");
  free(t);
  cJSON_Delete(doc);
}

static void on_read(struct bufferevent *bev, void *arg) {
  conn *c = arg;
  mcp_fault *s = c->s;
  struct evbuffer *in = bufferevent_get_input(bev);
  if (c->answered) return; /* one request per connection */
  struct evbuffer_ptr end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
  if (end.pos < 0) return;
  size_t hlen = (size_t)end.pos + 4;
  char *head = calloc(1, hlen + 1), cl[32], id[128] = "";
  evbuffer_copyout(in, head, hlen);
  header(head, "Content-Length", cl, sizeof cl);
  size_t blen = strtoul(cl, NULL, 10);
  if (blen > MF_BODY_CAP || evbuffer_get_length(in) < hlen + blen) {
    free(head);
    return;
  }
  mcp_fault_req r;
  memset(&r, 0, sizeof r);
  sscanf(head, "%15s", r.method);
  header(head, "Mcp-Session-Id", r.session, sizeof r.session);
  header(head, "Last-Event-ID", r.last_event_id, sizeof r.last_event_id);
  header(head, "MCP-Protocol-Version", r.protocol_version, sizeof r.protocol_version);
  header(head, "Accept", r.accept, sizeof r.accept);
  header(head, "Authorization", r.authorization, sizeof r.authorization);
  r.at_ms = mcp_fault_now_ms();
  free(head);
  char *body = calloc(1, blen + 1);
  evbuffer_drain(in, hlen);
  evbuffer_remove(in, body, blen);
  if (strcmp(r.method, "POST") == 0) rpc_of(body, blen, &r, id, sizeof id);
  free(body);
  record(s, &r);
  pthread_mutex_lock(&s->mu);
  mcp_fault_mode mode = s->mode;
  pthread_mutex_unlock(&s->mu);
  if (strcmp(r.method, "POST") == 0) serve_post(c, mode, &r, id);
  else if (strcmp(r.method, "GET") == 0) serve_get(c, mode, &r);
  else reply(c, 200, NULL, NULL, "", AFTER_CLOSE);
}

static void on_event(struct bufferevent *bev, short what, void *arg) {
  (void)bev;
  if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) conn_free(arg);
}

static void on_accept(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa, int len, void *arg) {
  (void)lis, (void)sa, (void)len;
  mcp_fault *s = arg;
  conn *c = calloc(1, sizeof *c);
  c->s = s;
  c->bev = bufferevent_socket_new(s->lb.base, fd, BEV_OPT_CLOSE_ON_FREE);
  bufferevent_setcb(c->bev, on_read, on_write, on_event, c);
  bufferevent_enable(c->bev, EV_READ | EV_WRITE);
  c->next = s->conns;
  if (s->conns) s->conns->prev = c;
  s->conns = c;
}

int mcp_fault_start(mcp_fault **out) {
  mcp_fault *s = calloc(1, sizeof *s);
  if (!s) return -1;
  pthread_mutex_init(&s->mu, NULL);
  if (loopback_start(&s->lb, on_accept, s) != 0) {
    mcp_fault_stop(s);
    return -1;
  }
  *out = s;
  return 0;
}

void mcp_fault_stop(mcp_fault *s) {
  if (!s) return;
  loopback_join(&s->lb);
  while (s->conns) conn_free(s->conns);
  loopback_free(&s->lb);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

const char *mcp_fault_url(const mcp_fault *s) {
  static char buf[64];
  snprintf(buf, sizeof buf, "http://127.0.0.1:%d/mcp", s->lb.port);
  return buf;
}

void mcp_fault_mode_set(mcp_fault *s, mcp_fault_mode mode) {
  pthread_mutex_lock(&s->mu);
  s->mode = mode;
  s->n_reqs = 0;
  s->dropped_id[0] = '\0';
  s->get_seq = 0;
  pthread_mutex_unlock(&s->mu);
}

int mcp_fault_request(mcp_fault *s, size_t n, mcp_fault_req *out) {
  pthread_mutex_lock(&s->mu);
  int rc = n < s->n_reqs && n < MF_MAX_REQS ? 0 : -1;
  if (!rc) *out = s->reqs[n];
  pthread_mutex_unlock(&s->mu);
  return rc;
}

size_t mcp_fault_count(mcp_fault *s) { return loopback_count(&s->mu, &s->n_reqs); }

size_t mcp_fault_count_method(mcp_fault *s, const char *method) {
  size_t n = 0;
  pthread_mutex_lock(&s->mu);
  for (size_t i = 0; i < s->n_reqs && i < MF_MAX_REQS; i++) n += strcmp(s->reqs[i].method, method) == 0;
  pthread_mutex_unlock(&s->mu);
  return n;
}
