/* Driving a real `agora serve` from tests and benchmarks: the process on a free loopback port (started
 * and stopped by PID), plain HTTP requests with libcurl, and Server-Sent Events clients on one curl
 * multi handle that collect each stream's frames. Everything goes to 127.0.0.1 only. */
#ifndef AG_TEST_SERVE_CLIENT_H
#define AG_TEST_SERVE_CLIENT_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct serve_proc {
  pid_t pid;
  int port;
  char base[64];     /* "http://127.0.0.1:PORT" */
  char err_path[512]; /* the server's stderr goes here */
} serve_proc;

/* Starts $AGORA_BIN serve ARGS... --listen 127.0.0.1:0 (args NULL-terminated, without "serve"),
 * extra_env "NAME=value" (may be NULL), stderr into a file in dir; waits for its "serving on" line
 * (wait_budget_ms(20000)).
 * 0, or -1 (the process is stopped again). */
int serve_proc_start(const char *dir, const char *const *args, const char *const *extra_env, serve_proc *out);
/* serve_proc_start as a case's check: 0, or -1 after failing the caller's case, at its line, with what
 * the server wrote on stderr. */
#define SERVE_START(...) serve_start_(__FILE__, __LINE__, __VA_ARGS__)
int serve_start_(const char *file, int line, const char *dir, const char *const *args, const char *const *extra_env,
                 serve_proc *out);
/* serve_proc_start with the arguments --db db (the worlds stored there, none named). */
int serve_proc_start_db(const char *dir, const char *db, serve_proc *out);
/* serve_proc_start_db on dir/db-big holding one chat "big" of n messages, imported (`agora chats import`)
 * from dir/big.json: a world "Big" of one script agent named agent, and what body writes from the first
 * message to the end of the snapshot. The chat's id into id; 0, or -1 after failing the running case. */
int serve_proc_start_big(const char *dir, const char *agent, int n, void (*body)(FILE *f), char id[64],
                         serve_proc *out);
/* SIGTERM, then waits (at most 20 s, then SIGKILL); returns the exit status (128+signal when killed). */
int serve_proc_stop(serve_proc *p);

typedef struct http_reply {
  long status; /* 0 when no answer */
  char *body;  /* owned, NUL-terminated */
  char *headers;
} http_reply;

/* One request to base + path; body (may be NULL) sent as it is, token (may be NULL) as a bearer token. */
int http_call(const char *base, const char *method, const char *path, const char *body, size_t body_len,
              const char *token, http_reply *out);
/* The same with extra request headers ("Name: value" lines, NULL-terminated; may be NULL). */
int http_call_h(const char *base, const char *method, const char *path, const char *body, size_t body_len,
                const char *token, const char *const *headers, http_reply *out);
void http_reply_free(http_reply *r);
/* One request (body may be NULL) to a running serve_proc: the reply's body parsed (NULL when it is not
 * JSON; caller deletes) and its status in *status. */
struct cJSON *serve_call_json(const serve_proc *sp, const char *method, const char *path, const char *body,
                              long *status);
/* GET path n times (a cost measured on a loaded machine): the fastest reply's time in ms into *best_ms, the
 * last reply's status and its body parsed (as serve_call_json). */
struct cJSON *serve_get_best_of(const serve_proc *sp, const char *path, int n, long *status, long *best_ms);
/* method path with body (may be NULL): a failure of the case, at the caller's line, unless the status is
 * status and the body holds want (NULL: anything). The body parsed (NULL when not JSON; caller deletes). */
#define SERVE_EXPECT(sp, method, path, body, status, want) \
  serve_expect_(__FILE__, __LINE__, (sp), (method), (path), (body), (status), (want))
struct cJSON *serve_expect_(const char *file, int line, const serve_proc *sp, const char *method, const char *path,
                            const char *body, long status, const char *want);
/* Polls GET path (wait_until, ms stretched on slow builds) until a 200 whose body holds needle: that body
 * parsed (caller deletes), or NULL when it never came. */
struct cJSON *serve_poll_json(const serve_proc *sp, const char *path, const char *needle, long ms);
/* Polls GET path on sp until its body holds needle (then 1) or wait_budget_ms(ms) has passed (then 0). */
int serve_wait_body(const serve_proc *sp, const char *path, const char *needle, long ms);

/* ---- SSE ---- */

typedef struct sse_frame_rec {
  char *id;   /* NULL when the frame had none */
  char *data;
  double at_ms; /* wall clock (CLOCK_REALTIME) when its last line arrived, in ms */
} sse_frame_rec;

typedef struct sse_conn sse_conn;
typedef struct sse_set sse_set;

sse_set *sse_set_new(void);
/* Frees the set with its connections. */
void sse_set_free(sse_set *s);
/* Opens a stream on url (Last-Event-ID last_id, may be NULL; token may be NULL). */
sse_conn *sse_open(sse_set *s, const char *url, const char *last_id, const char *token);
/* Closes one stream (its frames stay readable until the set is freed). */
void sse_close(sse_set *s, sse_conn *c);
/* Moves the transfers along for up to ms milliseconds. */
void sse_pump(sse_set *s, int ms);
/* Pumps until every open connection of the set holds at least n frames whose data contains needle
 * (NULL: any frame), or wait_budget_ms(timeout_ms) passed; 0 when reached. */
int sse_wait(sse_set *s, size_t n, const char *needle, int timeout_ms);
/* Pumps until c's first bytes came (the server's opening comment: it has registered the client, so
 * what is published from now on reaches it), or wait_budget_ms(timeout_ms) passed; 0 when they came. */
int sse_wait_open(sse_set *s, const sse_conn *c, int timeout_ms);
/* The frames received so far. */
const sse_frame_rec *sse_frames(const sse_conn *c, size_t *n);
/* Frames whose data contains needle. */
size_t sse_count(const sse_conn *c, const char *needle);
/* 1 while the stream is open (the server has not ended it). */
int sse_is_open(const sse_conn *c);
/* Bytes received (headers excluded). */
size_t sse_bytes(const sse_conn *c);

#endif
