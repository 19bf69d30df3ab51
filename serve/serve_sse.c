/* Event streams of agora serve (see serve_sse.h): a ring of recent frames per world and the clients
 * that follow it. Each frame is kept as its whole SSE text ("id: ...\ndata: ...\n\n"), so a frame is
 * encoded once however many clients receive it. A client is a position in the ring: one that keeps up is
 * handed each batch of new frames as it is published; one whose connection holds more than a little
 * unsent is handed nothing more until its connection has drained, then catches up from the ring in
 * slices, one per drain, so that memory per client stays small whatever it does. */
#include "serve/serve_sse.h"

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
#define SSE_REPLAY_STALL_MS 20000  /* a client replaying from storage that takes no slice for this long goes */

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
  uint64_t end; /* bytes published through this frame (how far behind a client is, in bytes) */
} sse_frame;

struct sse_client {
  sse_hub *hub;
  struct evhttp_request *req;
  struct evhttp_connection *conn;
  uint64_t sent; /* the last frame handed to its connection (0: none) */
  int waiting;   /* its unsent output passed SSE_CLIENT_UNSENT_MAX: nothing more until it drains */
  double waiting_since, waiting_turn;
  /* A resume from storage in progress: messages of chat with seq in (seq, until], then the ring. */
  int replaying;
  char chat[SSE_ID_MAX];
  uint64_t seq, until;
  sse_client *prev, *next;
};

struct sse_hub {
  struct event_base *base;
  uint64_t boot;
  sse_fallback_fn fallback;
  void *ud;
  sse_frame ring[SSE_RING]; /* frame n sits at ring[n % SSE_RING] */
  uint64_t first_n;         /* the oldest frame kept (the ring is capped in frames and in bytes) */
  uint64_t next_n;          /* the next frame's number (the first is 1) */
  uint64_t published;       /* bytes of every frame published */
  size_t ring_bytes;
  sse_client *clients;
  size_t n_clients;
  uint64_t dropped;
  /* Frames published and not yet written to the clients: they go to each client as one chunk at the end
   * of the bus drain (or at once past SSE_WRITE_NOW), so a client costs one write per drain, not one per
   * frame. A publish outside a drain (an HTTP handler's) is sent by flush_ev, later in the same loop turn. */
  sse_block *batch;
  size_t batch_len, batch_cap;
  uint64_t batch_first; /* the batch's first frame */
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
  h->base = base;
  h->boot = boot;
  h->fallback = fallback;
  h->ud = ud;
  h->first_n = h->next_n = 1;
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

/* The loop turn, told by the loop's cached time (it changes once per turn). */
static double loop_turn(const sse_hub *h) {
  struct timeval tv;
  event_base_gettimeofday_cached(h->base, &tv);
  return (double)tv.tv_sec * 1e6 + (double)tv.tv_usec;
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

/* Too far behind: the connection goes with everything still unsent. The client resumes from the last
 * id it received (every frame it got is whole), from the ring or from storage. */
static void client_drop(sse_client *c) {
  c->hub->dropped++;
  client_unlink(c);
  evhttp_connection_set_closecb(c->conn, c->hub->closecb, c->hub->closecb_arg);
  evhttp_connection_free(c->conn); /* frees the request too */
  free(c);
}

static size_t client_unsent(const sse_client *c) {
  struct bufferevent *bev = evhttp_connection_get_bufferevent(c->conn);
  return bev ? evbuffer_get_length(bufferevent_get_output(bev)) : 0;
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

/* The first frame not yet handed out in a batch: a client at it gets the next batch. */
static uint64_t handed_end(const sse_hub *h) { return h->batch_len ? h->batch_first : h->next_n; }

/* 1 when c must go: its next frame has left the ring, or it has stayed more than SSE_CLIENT_BUF_MAX
 * behind the live stream (in bytes) for SSE_BEHIND_MS without draining. */
static int client_lost(const sse_client *c, double now) {
  const sse_hub *h = c->hub;
  /* A replaying client's ring position is checked when its replay ends. */
  if (c->replaying) return c->waiting && now - c->waiting_since > SSE_REPLAY_STALL_MS;
  if (c->sent + 1 < h->first_n) return 1;
  if (!c->waiting || now - c->waiting_since <= SSE_BEHIND_MS) return 0;
  /* the bytes published after its last frame: those of the ring after it */
  uint64_t at = h->published;
  if (c->sent + 1 < h->next_n) {
    const sse_frame *f = &h->ring[(c->sent + 1) % SSE_RING];
    at = f->end - f->len;
  }
  return h->published - at + client_unsent(c) > SSE_CLIENT_BUF_MAX;
}

static void on_drained(struct evhttp_connection *conn, void *arg);

/* Sends b (its bytes, then empty: the caller frees it) as one chunk, to be told when the connection has
 * drained; past SSE_CLIENT_UNSENT_MAX unsent, c waits for that before it is handed anything more. */
static void client_send(sse_client *c, struct evbuffer *b) {
  evhttp_send_reply_chunk_with_cb(c->req, b, on_drained, c);
  /* A burst would pile up here until the loop comes back to the socket: hand it to the kernel now, as
   * far as the socket takes it without waiting. */
  if (client_unsent(c) > SSE_WRITE_NOW) write_now(c);
  if (client_unsent(c) > SSE_CLIENT_UNSENT_MAX && !c->waiting) {
    c->waiting = 1;
    c->waiting_since = now_ms();
    c->waiting_turn = loop_turn(c->hub);
  }
}

/* Writes len bytes of text (copied); 0, or -1 when memory ran out. */
static int client_write(sse_client *c, const char *text, size_t len) {
  struct evbuffer *b = evbuffer_new();
  int rc = b && !evbuffer_add(b, text, len) ? 0 : -1;
  if (!rc) client_send(c, b);
  if (b) evbuffer_free(b);
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

/* The stream's own note (resync), which is no frame of the ring. */
static void client_note(sse_client *c, const char *json) {
  size_t len;
  char *text = frame_text(NULL, json, &len);
  if (text) client_write(c, text, len);
  free(text);
}

/* One slice of what c still misses, at most SSE_SLICE bytes: stored messages while it replays, then
 * frames of the ring up to those already handed out. 0, or -1 when c cannot be caught up (dropped, or
 * told to resync, by the caller). */
static int client_pump(sse_client *c) {
  sse_hub *h = c->hub;
  if (c->replaying) {
    uint64_t last = c->seq;
    if (h->fallback(h->ud, c, c->chat, c->seq, &c->until, SSE_SLICE, &last)) return -2;
    c->seq = last;
    if (last < c->until) return 0; /* the next slice when this one has drained */
    c->replaying = 0;
  }
  if (c->sent + 1 < h->first_n) return -1;
  struct evbuffer *b = evbuffer_new();
  if (!b) return -1;
  uint64_t end = handed_end(h);
  while (c->sent + 1 < end && evbuffer_get_length(b) < SSE_SLICE) {
    const sse_frame *f = &h->ring[(c->sent + 1) % SSE_RING];
    if (evbuffer_add(b, f->text, f->len)) break;
    c->sent++;
  }
  if (evbuffer_get_length(b)) client_send(c, b);
  evbuffer_free(b);
  return 0;
}

/* Runs c's pump; a client that cannot be caught up is dropped (-1: it resumes) or told to resync (-2:
 * its stored position is no use) and then follows the live stream. */
static void client_advance(sse_client *c) {
  int rc = client_pump(c);
  if (rc == -1) return client_drop(c);
  if (rc == -2) {
    c->replaying = 0;
    client_note(c, "{\"type\":\"resync\"}");
  }
}

/* c's connection has sent everything it was given: it takes the next slice of what it misses. */
static void on_drained(struct evhttp_connection *conn, void *arg) {
  (void)conn;
  sse_client *c = arg;
  c->waiting = 0;
  if (c->replaying || c->sent + 1 < handed_end(c->hub)) client_advance(c);
}

/* The frames published since the last send, to every client that is at them (in one chunk each). */
static void send_batch(sse_hub *h) {
  if (!h->batch_len) return;
  sse_block *blk = h->batch;
  size_t len = h->batch_len;
  uint64_t first = h->batch_first;
  h->batch = NULL; /* first: a client dropped on the way changes nothing here */
  h->batch_len = h->batch_cap = 0;
  blk->refs = 1; /* this function's, until every client has its reference */
  double now = now_ms();
  for (sse_client *c = h->clients, *next; c; c = next) {
    next = c->next; /* c may be dropped */
    if (client_lost(c, now)) {
      client_drop(c);
      continue;
    }
    /* A burst published in one loop turn (a thousand agents' chunks delivered at once) no client could
     * read meanwhile: it is handed up to SSE_CLIENT_BUF_MAX of it, so that it does not have to come from
     * the ring; one that stopped reading in an earlier turn is handed nothing. */
    int burst = c->waiting && c->waiting_turn == loop_turn(h) && client_unsent(c) < SSE_CLIENT_BUF_MAX;
    if ((c->waiting && !burst) || c->replaying || c->sent + 1 != first) continue; /* it catches up from the ring */
    struct evbuffer *b = evbuffer_new();
    if (!b || evbuffer_add_reference(b, blk->data, len, block_unref, blk)) {
      if (b) evbuffer_free(b);
      continue;
    }
    blk->refs++;
    c->sent = h->next_n - 1;
    client_send(c, b);
    evbuffer_free(b);
  }
  block_unref(NULL, 0, blk);
}

/* Adds a frame to the batch; 0, or AG_ERR_NOMEM. */
static int batch_add(sse_hub *h, const char *text, size_t len, uint64_t n) {
  if (h->batch_len + len > h->batch_cap) {
    size_t ncap = h->batch_cap ? h->batch_cap : 16384;
    while (ncap < h->batch_len + len) ncap *= 2;
    sse_block *p = realloc(h->batch, sizeof *p + ncap);
    if (!p) return AG_ERR_NOMEM;
    h->batch = p, h->batch_cap = ncap;
  }
  if (!h->batch_len) {
    event_active(h->flush_ev, EV_TIMEOUT, 0);
    h->batch_first = n;
  }
  memcpy(h->batch->data + h->batch_len, text, len);
  h->batch_len += len;
  /* A burst goes out as it grows (the socket takes it while more is encoded); the buffer stays small. */
  if (h->batch_len > SSE_WRITE_NOW) send_batch(h);
  return AG_OK;
}

/* Frees the oldest frames while the ring holds more than SSE_RING_BYTES (never the newest). */
static void ring_trim(sse_hub *h) {
  while (h->ring_bytes > SSE_RING_BYTES && h->first_n + 1 < h->next_n) {
    sse_frame *f = &h->ring[h->first_n % SSE_RING];
    h->ring_bytes -= f->len;
    free(f->text);
    *f = (sse_frame){0};
    h->first_n++;
  }
}

int sse_hub_publish(sse_hub *h, const char *json, const char *chat, uint64_t seq) {
  char id[SSE_ID_MAX];
  uint64_t n = h->next_n;
  sse_id_format(h, n, chat, seq, id);
  size_t len;
  char *text = frame_text(id, json, &len);
  if (!text) return AG_ERR_NOMEM;
  sse_frame *f = &h->ring[n % SSE_RING];
  if (f->text) h->ring_bytes -= f->len, h->first_n = f->n + 1; /* the oldest, pushed out */
  free(f->text);
  h->published += len;
  *f = (sse_frame){.n = n, .text = text, .len = len, .end = h->published};
  h->ring_bytes += len;
  h->next_n++;
  ring_trim(h); /* never the frame just added */
  if (h->clients && batch_add(h, text, len, n)) {
    /* No memory for the batch: what was batched goes now, and each client takes the frame from the ring. */
    send_batch(h);
    for (sse_client *c = h->clients, *next; c; c = next) {
      next = c->next; /* c may be dropped */
      if (!c->waiting && !c->replaying && c->sent + 1 < h->next_n) client_advance(c);
    }
  }
  return AG_OK;
}

void sse_hub_note(sse_hub *h, const char *json) {
  send_batch(h);
  for (sse_client *c = h->clients; c; c = c->next)
    if (!c->waiting) client_note(c, json);
}

int sse_client_send(sse_client *c, const char *id, const char *json) {
  size_t len;
  char *text = frame_text(id, json, &len);
  int rc = text ? client_write(c, text, len) : -1;
  free(text);
  return rc;
}

/* Where a client resuming from last_id starts: from the ring when its position is still there, else
 * from the stored messages (replaying). -1 when it cannot be caught up that way (not one of our ids):
 * it is told to resync (reload, then follow the stream). */
static int resume_at(sse_hub *h, sse_client *c, const char *last_id) {
  uint64_t boot, n, seq;
  char chat[SSE_ID_MAX];
  if (sse_id_parse(last_id, &boot, &n, chat, &seq)) return -1;
  if (boot == h->boot && n > 0 && n + 1 >= h->first_n && n < h->next_n) {
    c->sent = n;
    return 0;
  }
  if (!h->fallback || !strcmp(chat, "-")) return -1;
  c->replaying = 1;
  snprintf(c->chat, sizeof c->chat, "%s", chat);
  c->seq = seq;
  c->until = 0; /* the fallback sets it: the last message stored now */
  return 0;
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
  c->sent = h->next_n - 1;
  /* A stream only writes: without this the connection's read timeout would end it. */
  evhttp_connection_set_timeout(c->conn, 7 * 24 * 3600);
  /* Frames are small and must go at once: Nagle would hold one back until the previous is acknowledged
   * (a delayed ACK: up to 40 ms). A small send buffer: what a client does not read stays in the ring,
   * shared, rather than in the kernel, a copy per client (the kernel doubles the value). */
  struct bufferevent *bev = evhttp_connection_get_bufferevent(c->conn);
  int one = 1, sndbuf = SSE_SNDBUF;
  if (bev) setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (bev) setsockopt(bufferevent_getfd(bev), SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  evhttp_send_reply_start(req, 200, "OK");
  c->next = h->clients;
  if (h->clients) h->clients->prev = c;
  h->clients = c;
  h->n_clients++;
  evhttp_connection_set_closecb(c->conn, on_close, c);
  client_write(c, ": agora\n\n", 9);
  if (last_id && resume_at(h, c, last_id)) client_note(c, "{\"type\":\"resync\"}");
  else if (last_id) client_advance(c); /* the first slice; the next ones as the connection drains */
  return AG_OK;
}

void sse_hub_flush(void *hub) {
  sse_hub *h = hub;
  send_batch(h);
  for (sse_client *c = h->clients; c; c = c->next) write_now(c);
}

void sse_hub_heartbeat(sse_hub *h) {
  send_batch(h);
  double now = now_ms();
  for (sse_client *c = h->clients, *next; c; c = next) {
    next = c->next; /* c may be dropped */
    if (client_lost(c, now)) client_drop(c);
    else if (!c->waiting) client_write(c, ": heartbeat\n\n", 13);
  }
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
