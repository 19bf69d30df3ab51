/* agora serve's event streams (Server-Sent Events): one hub per hosted world keeps a bounded ring of
 * the recent frames, each with a resumable id, and writes every new frame to the world's connected
 * clients. A client that reconnects with Last-Event-ID gets what it missed from the ring; one whose
 * position has left the ring (or a previous server run's) gets the chat's stored messages after it
 * instead (see docs/serve.md "Resuming"), both in slices as its connection drains. A client that does
 * not read is handed nothing more past a small cap, and dropped when its position leaves the ring or it
 * stays behind: it can resume. Runs on the server's loop; nothing here blocks. */
#ifndef AG_CLI_SERVE_SSE_H
#define AG_CLI_SERVE_SSE_H

#include <stddef.h>
#include <stdint.h>

struct evhttp_request;
struct evhttp_connection;
struct event_base;

#define SSE_RING 8192                 /* frames a hub keeps for resuming ... */
#define SSE_RING_BYTES (32u << 20)     /* ... and bytes of them at most (the newest frame is always kept) */
#define SSE_CLIENT_UNSENT_MAX (64u << 10) /* unsent bytes past which a client is handed nothing more until
                                           its connection drains (it then catches up from the ring) */
#define SSE_SLICE (64u << 10)          /* bytes a client catching up (ring or storage) takes per drain */
#define SSE_SNDBUF (32u << 10)         /* a stream socket's send buffer (the kernel doubles it) */
#define SSE_CLIENT_BUF_MAX (1u << 20)  /* bytes a client may stay behind the live stream for SSE_BEHIND_MS */
#define SSE_BEHIND_MS 2000             /* ... after which it is dropped; at once when it leaves the ring */
#define SSE_FALLBACK_MAX 100000       /* stored messages a resume may replay before it says resync */

typedef struct sse_hub sse_hub;
typedef struct sse_client sse_client;

/* Replays to client one slice of the stored messages of chat with after < seq <= *until (sse_client_send
 * each, the id made with sse_id_format(hub, 0, chat, seq)), stopping once max_bytes are sent; *last gets
 * the seq of the last one sent. *until is 0 on a resume's first call: the fallback sets it to the last
 * message stored (every later one comes live). Called again, as the client's connection drains, until
 * *last reaches *until. 0, or -1 to have the client told to resync ({"type":"resync"}: reload, then
 * follow the stream). */
typedef int (*sse_fallback_fn)(void *ud, sse_client *client, const char *chat, uint64_t after, uint64_t *until,
                               size_t max_bytes, uint64_t *last);

/* boot tells this server run's ids from a previous run's. base (the loop) and ud are borrowed. */
int sse_hub_new(struct event_base *base, uint64_t boot, sse_fallback_fn fallback, void *ud, sse_hub **out);
/* The close callback a stream's connection had before it became a stream (the connection count's):
 * the stream calls it when its connection goes, whichever way. */
void sse_hub_set_closecb(sse_hub *h, void (*cb)(struct evhttp_connection *, void *), void *arg);
/* Ends every client's stream (the response is finished) and frees. */
void sse_hub_free(sse_hub *h);

/* Publishes one JSON object text (borrowed) as the next frame; chat (NULL: none) and seq are the
 * current chat and its last message seq after this frame, which the frame's id carries. */
int sse_hub_publish(sse_hub *h, const char *json, const char *chat, uint64_t seq);
/* Publishes a frame without an id (a note about the stream itself, e.g. resync): not kept. */
void sse_hub_note(sse_hub *h, const char *json);

/* Starts the event stream on req (a GET the caller checked) and attaches it: frames after last_id
 * (the Last-Event-ID header, may be NULL: from now on) first. */
int sse_hub_attach(sse_hub *h, struct evhttp_request *req, const char *last_id);
/* Writes one frame (id may be NULL; both borrowed) to one client, for the fallback: 0, or -1 when
 * memory ran out. */
int sse_client_send(sse_client *c, const char *id, const char *json);
/* The id of frame n (0: a stored message) of chat at seq, into out (SSE_ID_MAX). */
#define SSE_ID_MAX 128
void sse_id_format(const sse_hub *h, uint64_t n, const char *chat, uint64_t seq, char *out);

/* Frames published are written to the clients at the end of the bus drain (sse_hub_flush), at once when
 * they pile past 64 KiB, or later in the same loop turn when published outside a drain. */
/* Hands every client's unsent frames to the kernel now (as far as each socket takes them without
 * waiting), instead of when the loop next looks at the sockets: a bus idle hook (hub is the sse_hub),
 * run before the session's commit so that a frame does not wait for the disk. */
void sse_hub_flush(void *hub);
/* A comment line to every client (keeps proxies and browsers from timing the stream out). */
void sse_hub_heartbeat(sse_hub *h);
/* Ends every client's stream (the server is stopping). */
void sse_hub_close_all(sse_hub *h);
size_t sse_hub_clients(const sse_hub *h);
/* Frames published, clients dropped for falling behind. */
uint64_t sse_hub_frames(const sse_hub *h);
uint64_t sse_hub_dropped(const sse_hub *h);

/* Pure: parses an id "BOOT.N.CHAT.SEQ" (CHAT "-" for none); 0 or -1. chat gets SSE_ID_MAX bytes. */
int sse_id_parse(const char *id, uint64_t *boot, uint64_t *n, char *chat, uint64_t *seq);

#endif
