/* Event streams of agora serve (see serve_sse.h): a ring of recent frames per world and the clients
 * that follow it. Each frame is kept as its whole SSE text ("id: ...\ndata: ...\n\n"), so a frame is
 * encoded once however many clients receive it. */
#include "cli/serve_sse.h"

#include "common/error.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <ctype.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SSE_WRITE_NOW (64u << 10) /* unsent bytes written to the socket at once rather than later */

/* A batch of frames once sent: shared by the clients' output buffers (evbuffer references, not copies),
 * freed when the last lets go. */
typedef struct sse_block {
  size_t refs;
  char data[];
} sse_block;

typedef struct sse_frame {
  uint64_t n;
  char *text; /* owned: the whole frame */
  size_t len;
} sse_frame;

struct sse_client {
  sse_hub *hub;
  struct evhttp_request *req;
  struct evhttp_connection *conn;
  double behind_since; /* ms (monotonic) since its unsent output is over the cap; 0 when it is not */
  sse_client *prev, *next;
};

struct sse_hub {
  uint64_t boot;
  sse_fallback_fn fallback;
  void *ud;
  sse_frame ring[SSE_RING]; /* frame n sits at ring[n % SSE_RING] */
  uint64_t next_n;          /* the next frame's number (the first is 1) */
  sse_client *clients;
  size_t n_clients;
  uint64_t dropped;
  /* Frames published and not yet written to the clients: they go to each client as one chunk at the end
   * of the bus drain (or at once past SSE_WRITE_NOW), so a client costs one write per drain, not one per
   * frame. A publish outside a drain (an HTTP handler's) is sent by flush_ev, later in the same loop turn. */
  sse_block *batch;
  size_t batch_len, batch_cap;
  struct event *flush_ev;
  void (*closecb)(struct evhttp_connection *, void *); /* the connection's own, chained */
  void *closecb_arg;
};

void sse_hub_set_closecb(sse_hub *h, void (*cb)(struct evhttp_connection *, void *), void *arg) {
  h->closecb = cb;
  h->closecb_arg = arg;
}

static void on_flush_ev(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  sse_hub_flush(arg);
}

int sse_hub_new(struct event_base *base, uint64_t boot, sse_fallback_fn fallback, void *ud, sse_hub **out) {
  sse_hub *h = calloc(1, sizeof *h);
  if (!h) return AG_ERR_NOMEM;
  if (!(h->flush_ev = event_new(base, -1, 0, on_flush_ev, h))) {
    free(h);
    return AG_ERR_NOMEM;
  }
  h->boot = boot;
  h->fallback = fallback;
  h->ud = ud;
  h->next_n = 1;
  *out = h;
  return AG_OK;
}

void sse_hub_free(sse_hub *h) {
  if (!h) return;
  sse_hub_close_all(h);
  for (size_t i = 0; i < SSE_RING; i++) free(h->ring[i].text);
  event_free(h->flush_ev);
  free(h->batch);
  free(h);
}

void sse_id_format(const sse_hub *h, uint64_t n, const char *chat, uint64_t seq, char *out) {
  snprintf(out, SSE_ID_MAX, "%" PRIx64 ".%" PRIu64 ".%.64s.%" PRIu64, h->boot, n, chat && *chat ? chat : "-", seq);
}

static int parse_num(const char **p, int base, char stop, uint64_t *out) {
  const char *s = *p;
  char *end;
  if (!(base == 16 ? isxdigit((unsigned char)*s) : isdigit((unsigned char)*s))) return -1;
  errno = 0;
  unsigned long long v = strtoull(s, &end, base);
  if (errno || *end != stop) return -1;
  *out = v;
  *p = end + (stop ? 1 : 0);
  return 0;
}

int sse_id_parse(const char *id, uint64_t *boot, uint64_t *n, char *chat, uint64_t *seq) {
  const char *p = id;
  if (!p || parse_num(&p, 16, '.', boot) || parse_num(&p, 10, '.', n)) return -1;
  const char *dot = strchr(p, '.');
  if (!dot || dot == p || (size_t)(dot - p) >= SSE_ID_MAX) return -1;
  memcpy(chat, p, (size_t)(dot - p));
  chat[dot - p] = '\0';
  p = dot + 1;
  return parse_num(&p, 10, '\0', seq);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void client_unlink(sse_client *c) {
  sse_hub *h = c->hub;
  if (c->prev) c->prev->next = c->next;
  else h->clients = c->next;
  if (c->next) c->next->prev = c->prev;
  h->n_clients--;
}

/* The peer went away: libevent freed the connection and left the request to us (evhttp's rule for a
 * reply the user has not finished); ending it frees it. */
static void on_close(struct evhttp_connection *conn, void *arg) {
  sse_client *c = arg;
  if (c->hub->closecb) c->hub->closecb(conn, c->hub->closecb_arg);
  client_unlink(c);
  evhttp_send_reply_end(c->req);
  free(c);
}

/* Too far behind: the connection goes with everything still unsent (the client can resume). */
static void client_drop(sse_client *c) {
  c->hub->dropped++;
  client_unlink(c);
  evhttp_connection_set_closecb(c->conn, c->hub->closecb, c->hub->closecb_arg);
  evhttp_connection_free(c->conn); /* frees the request too */
  free(c);
}

/* Writes what c's connection has buffered to its socket, as far as the socket takes it without
 * waiting. A bufferevent keeps the front of its output frozen (only it drains it, from its write
 * event): thawed for the write, frozen again after. */
static void write_now(sse_client *c) {
  struct bufferevent *bev = evhttp_connection_get_bufferevent(c->conn);
  struct evbuffer *out = bev ? bufferevent_get_output(bev) : NULL;
  if (!out || !evbuffer_get_length(out)) return;
  evbuffer_unfreeze(out, 1);
  evbuffer_write(out, bufferevent_getfd(bev));
  evbuffer_freeze(out, 1);
}

static void block_unref(const void *data, size_t len, void *extra) {
  (void)data, (void)len;
  sse_block *b = extra;
  if (--b->refs == 0) free(b);
}

/* Sends b (its bytes, then empty: the caller frees it) as one chunk; 0, or -1 when the client's unsent
 * output is past the cap. */
static int client_send(sse_client *c, struct evbuffer *b) {
  evhttp_send_reply_chunk(c->req, b);
  struct bufferevent *bev = evhttp_connection_get_bufferevent(c->conn);
  if (!bev) return 0;
  struct evbuffer *out = bufferevent_get_output(bev);
  /* A burst (a thousand agents' chunks delivered in one go) would pile up here until the loop comes
   * back to the socket: hand it to the kernel now, as far as the socket takes it without waiting, so
   * that only a client that really does not read reaches the cap. */
  if (evbuffer_get_length(out) > SSE_WRITE_NOW) write_now(c);
  size_t unsent = evbuffer_get_length(out);
  if (unsent <= SSE_CLIENT_BUF_MAX) {
    c->behind_since = 0;
    return 0;
  }
  /* Over the cap: a burst a reading client is still taking in, or a client that stopped reading. It
   * may stay over for a while (its buffer must shrink back in time), never past the hard cap. */
  double now = now_ms();
  if (!c->behind_since) c->behind_since = now;
  return unsent > SSE_CLIENT_BUF_HARD || now - c->behind_since > SSE_BEHIND_MS ? -1 : 0;
}

/* Writes len bytes of text; 0, or -1 when the client's unsent output is past the cap (or memory ran out). */
static int client_write(sse_client *c, const char *text, size_t len) {
  struct evbuffer *b = evbuffer_new();
  int rc = b && !evbuffer_add(b, text, len) ? client_send(c, b) : -1;
  if (b) evbuffer_free(b);
  return rc;
}

/* The same with len bytes of a shared block (referenced, not copied). */
static int client_write_block(sse_client *c, sse_block *blk, size_t len) {
  struct evbuffer *b = evbuffer_new();
  if (!b || evbuffer_add_reference(b, blk->data, len, block_unref, blk)) {
    if (b) evbuffer_free(b);
    return -1;
  }
  blk->refs++;
  int rc = client_send(c, b);
  evbuffer_free(b);
  return rc;
}

static char *frame_text(const char *id, const char *json, size_t *len) {
  size_t n = (id ? strlen(id) + 5 : 0) + strlen(json) + 10;
  char *s = malloc(n);
  if (!s) return NULL;
  int k = id ? snprintf(s, n, "id: %s\ndata: %s\n\n", id, json) : snprintf(s, n, "data: %s\n\n", json);
  *len = (size_t)k;
  return s;
}

static void broadcast(sse_hub *h, const char *text, size_t len) {
  for (sse_client *c = h->clients, *next; c; c = next) {
    next = c->next; /* c may be dropped */
    if (client_write(c, text, len)) client_drop(c);
  }
}

/* The frames published since the last send, to every client (in one chunk each). */
static void send_batch(sse_hub *h) {
  if (!h->batch_len) return;
  sse_block *blk = h->batch;
  size_t len = h->batch_len;
  h->batch = NULL; /* first: a client dropped on the way changes nothing here */
  h->batch_len = h->batch_cap = 0;
  blk->refs = 1; /* this function's, until every client has its reference */
  for (sse_client *c = h->clients, *next; c; c = next) {
    next = c->next; /* c may be dropped */
    if (client_write_block(c, blk, len)) client_drop(c);
  }
  block_unref(NULL, 0, blk);
}

/* Adds a frame to the batch; 0, or AG_ERR_NOMEM (the frame then goes out alone). */
static int batch_add(sse_hub *h, const char *text, size_t len) {
  if (h->batch_len + len > h->batch_cap) {
    size_t ncap = h->batch_cap ? h->batch_cap : 16384;
    while (ncap < h->batch_len + len) ncap *= 2;
    sse_block *p = realloc(h->batch, sizeof *p + ncap);
    if (!p) return AG_ERR_NOMEM;
    h->batch = p, h->batch_cap = ncap;
  }
  if (!h->batch_len) event_active(h->flush_ev, EV_TIMEOUT, 0);
  memcpy(h->batch->data + h->batch_len, text, len);
  h->batch_len += len;
  /* A burst goes out as it grows (the socket takes it while more is encoded); the buffer stays small. */
  if (h->batch_len > SSE_WRITE_NOW) send_batch(h);
  return AG_OK;
}

int sse_hub_publish(sse_hub *h, const char *json, const char *chat, uint64_t seq) {
  char id[SSE_ID_MAX];
  uint64_t n = h->next_n;
  sse_id_format(h, n, chat, seq, id);
  size_t len;
  char *text = frame_text(id, json, &len);
  if (!text) return AG_ERR_NOMEM;
  sse_frame *f = &h->ring[n % SSE_RING];
  free(f->text);
  *f = (sse_frame){n, text, len};
  h->next_n++;
  if (h->clients && batch_add(h, text, len)) {
    send_batch(h);
    broadcast(h, text, len);
  }
  return AG_OK;
}

void sse_hub_note(sse_hub *h, const char *json) {
  size_t len;
  char *text = frame_text(NULL, json, &len);
  if (!text) return;
  send_batch(h);
  broadcast(h, text, len);
  free(text);
}

int sse_client_send(sse_client *c, const char *id, const char *json) {
  size_t len;
  char *text = frame_text(id, json, &len);
  int rc = text ? client_write(c, text, len) : -1;
  free(text);
  return rc;
}

/* The oldest frame still in the ring. */
static uint64_t ring_first(const sse_hub *h) { return h->next_n > SSE_RING ? h->next_n - SSE_RING : 1; }

/* What a client resuming from last_id missed: from the ring when its position is still there, else
 * the stored messages. 0, or -1 when it cannot be caught up that way (too much, or a position in
 * another chat): the client is told to resync (reload, then follow the stream). */
static int catch_up(sse_hub *h, sse_client *c, const char *last_id) {
  uint64_t boot, n, seq;
  char chat[SSE_ID_MAX];
  if (sse_id_parse(last_id, &boot, &n, chat, &seq)) return -1;
  if (boot == h->boot && n > 0 && n + 1 >= ring_first(h) && n < h->next_n) {
    for (uint64_t i = n + 1; i < h->next_n; i++) {
      const sse_frame *f = &h->ring[i % SSE_RING];
      if (client_write(c, f->text, f->len)) return -1;
    }
    return 0;
  }
  return h->fallback ? h->fallback(h->ud, c, strcmp(chat, "-") ? chat : NULL, seq) : -1;
}

int sse_hub_attach(sse_hub *h, struct evhttp_request *req, const char *last_id) {
  sse_client *c = calloc(1, sizeof *c);
  if (!c) return AG_ERR_NOMEM;
  struct evkeyvalq *hd = evhttp_request_get_output_headers(req);
  evhttp_add_header(hd, "Content-Type", "text/event-stream; charset=utf-8");
  evhttp_add_header(hd, "Cache-Control", "no-store");
  send_batch(h); /* what was published before this client came: not for it (it is in the ring) */
  c->hub = h;
  c->req = req;
  c->conn = evhttp_request_get_connection(req);
  /* A stream only writes: without this the connection's read timeout would end it. */
  evhttp_connection_set_timeout(c->conn, 7 * 24 * 3600);
  /* Frames are small and must go at once: Nagle would hold one back until the previous is acknowledged
   * (a delayed ACK: up to 40 ms). */
  struct bufferevent *bev = evhttp_connection_get_bufferevent(c->conn);
  int one = 1;
  if (bev) setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  evhttp_send_reply_start(req, 200, "OK");
  c->next = h->clients;
  if (h->clients) h->clients->prev = c;
  h->clients = c;
  h->n_clients++;
  evhttp_connection_set_closecb(c->conn, on_close, c);
  client_write(c, ": agora\n\n", 9);
  if (last_id && catch_up(h, c, last_id)) {
    size_t len;
    char *text = frame_text(NULL, "{\"type\":\"resync\"}", &len);
    if (text) client_write(c, text, len);
    free(text);
  }
  return AG_OK;
}

void sse_hub_flush(void *hub) {
  sse_hub *h = hub;
  send_batch(h);
  for (sse_client *c = h->clients; c; c = c->next) write_now(c);
}

void sse_hub_heartbeat(sse_hub *h) {
  send_batch(h);
  broadcast(h, ": heartbeat\n\n", 13);
}

void sse_hub_close_all(sse_hub *h) {
  send_batch(h);
  while (h->clients) {
    sse_client *c = h->clients;
    client_unlink(c);
    evhttp_connection_set_closecb(c->conn, h->closecb, h->closecb_arg);
    evhttp_send_reply_end(c->req); /* what is buffered still goes out, then the stream ends */
    free(c);
  }
}

size_t sse_hub_clients(const sse_hub *h) { return h->n_clients; }
uint64_t sse_hub_frames(const sse_hub *h) { return h->next_n - 1; }
uint64_t sse_hub_dropped(const sse_hub *h) { return h->dropped; }
