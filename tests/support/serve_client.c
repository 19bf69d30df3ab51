/* A real agora serve for tests, and its HTTP and SSE clients (see serve_client.h). */
#include "support/serve_client.h"
#include "support/proc.h"
#include "support/unit.h"
#include "support/wait.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int serve_proc_start(const char *dir, const char *const *args, const char *const *extra_env, serve_proc *out) {
  memset(out, 0, sizeof *out);
  const char *bin = getenv("AGORA_BIN");
  if (!bin) bin = "./agora";
  static int seq;
  snprintf(out->err_path, sizeof out->err_path, "%s/serve-%d-%d.err", dir, (int)getpid(), ++seq);
  int pout[2];
  if (pipe(pout)) return -1;
  signal(SIGPIPE, SIG_IGN);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int fd = open(out->err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) dup2(fd, 2);
    dup2(pout[1], 1);
    close(pout[0]), close(pout[1]);
    for (size_t i = 0; extra_env && extra_env[i]; i++) putenv((char *)extra_env[i]);
    size_t n = 0;
    while (args[n]) n++;
    char **argv = calloc(n + 5, sizeof *argv);
    argv[0] = (char *)bin, argv[1] = "serve";
    for (size_t i = 0; i < n; i++) argv[i + 2] = (char *)args[i];
    argv[n + 2] = "--listen", argv[n + 3] = "127.0.0.1:0";
    execv(bin, argv);
    _exit(127);
  }
  close(pout[1]);
  out->pid = pid;
  char line[256];
  size_t len = 0;
  long long deadline = now_ms() + wait_budget_ms(20000); /* a sanitizer build starts slower */
  while (len < sizeof line - 1 && now_ms() < deadline && !memchr(line, '\n', len)) {
    struct pollfd p = {pout[0], POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    ssize_t n = read(pout[0], line + len, sizeof line - 1 - len);
    if (n <= 0) break;
    len += (size_t)n;
  }
  line[len] = '\0';
  close(pout[0]); /* the server prints nothing more to stdout */
  const char *p = strstr(line, "http://127.0.0.1:");
  if (!p) {
    serve_proc_stop(out);
    return -1;
  }
  out->port = atoi(p + strlen("http://127.0.0.1:"));
  snprintf(out->base, sizeof out->base, "http://127.0.0.1:%d", out->port);
  return 0;
}

int serve_proc_stop(serve_proc *p) {
  if (p->pid <= 0) return -1;
  kill(p->pid, SIGTERM);
  int st = 0;
  long deadline = now_ms() + 20000;
  pid_t r;
  while ((r = waitpid(p->pid, &st, WNOHANG)) == 0 && now_ms() < deadline) usleep(10000);
  if (r == 0) {
    kill(p->pid, SIGKILL);
    waitpid(p->pid, &st, 0);
  }
  p->pid = 0;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

typedef struct grow { char *p; size_t len; } grow;

static size_t grow_cb(char *d, size_t sz, size_t n, void *arg) {
  grow *g = arg;
  char *p = realloc(g->p, g->len + sz * n + 1);
  if (!p) return 0;
  memcpy(p + g->len, d, sz * n);
  g->p = p;
  g->len += sz * n;
  g->p[g->len] = '\0';
  return sz * n;
}

/* ---- the API trace ---- */

#define TRACE_REQ_MAX (64u * 1024)   /* bodies past these are counted, not kept: a load test posts 150 MB */
#define TRACE_RESP_MAX (4u * 1024 * 1024)
#define TRACE_FRAMES_MAX (32u * 1024) /* bytes of frames kept per stream: 100 streams stay a few MB */

/* The value of header name (case aside) in the raw response headers, into out (cap bytes); "" if none. */
static void header_value(const char *headers, const char *name, char *out, size_t cap) {
  size_t n = strlen(name);
  out[0] = '\0';
  for (const char *p = headers; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
    if (strncasecmp(p, name, n) || p[n] != ':') continue;
    const char *v = p + n + 1;
    while (*v == ' ') v++;
    size_t len = strcspn(v, "\r\n");
    snprintf(out, cap, "%.*s", (int)(len < cap ? len : cap - 1), v);
  }
}

/* A body for the trace: kept when it is text of at most max bytes, else only counted (field_omitted). */
static void trace_body(cJSON *j, const char *field, const char *body, size_t len, size_t max) {
  char omitted[32];
  snprintf(omitted, sizeof omitted, "%s_omitted", field);
  if (!body || !len) cJSON_AddNullToObject(j, field);
  else if (len > max || memchr(body, '\0', len)) cJSON_AddBoolToObject(j, omitted, 1);
  else { /* a request body need not end with a NUL */
    char *text = strndup(body, len);
    if (text) cJSON_AddStringToObject(j, field, text);
    free(text);
  }
}

/* With AGORA_API_TRACE=FILE, one JSON line per exchange (j, taken) goes into FILE (emptied by the
 * process's first), for tests/openapi_check.js to hold against docs/openapi.json (docs/serve.md "The
 * OpenAPI document"). */
static void trace_write(cJSON *j) {
  static pid_t started_by;
  const char *file = getenv("AGORA_API_TRACE");
  char *line = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  if (!line) return;
  int fd = open(file, O_WRONLY | O_CREAT | O_APPEND | (started_by != getpid() ? O_TRUNC : 0), 0644);
  started_by = getpid();
  if (fd >= 0) { /* one write per line: O_APPEND keeps lines whole */
    size_t n = strlen(line);
    line[n] = '\n';
    if (write(fd, line, n + 1) != (ssize_t)(n + 1)) fprintf(stderr, "serve_client: %s: cannot write the trace\n", file);
    line[n] = '\0';
  }
  if (fd >= 0) close(fd);
  free(line);
}

/* The record's common fields (NULL when there is no trace to write). */
static cJSON *trace_record(const char *method, const char *path, long status, const char *type) {
  const char *file = getenv("AGORA_API_TRACE");
  if (!file || !file[0] || !status) return NULL;
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "method", method);
  cJSON_AddStringToObject(j, "path", path);
  cJSON_AddNumberToObject(j, "status", (double)status);
  cJSON_AddStringToObject(j, "resp_type", type ? type : "");
  return j;
}

static void trace_exchange(const char *method, const char *path, const char *body, size_t body_len, long status,
                           const char *headers, const char *resp, size_t resp_len) {
  char type[256];
  header_value(headers, "Content-Type", type, sizeof type);
  cJSON *j = trace_record(method, path, status, type);
  if (!j) return;
  trace_body(j, "req", body, body_len, TRACE_REQ_MAX);
  trace_body(j, "resp", resp, resp_len, TRACE_RESP_MAX);
  trace_write(j);
}

int http_call(const char *base, const char *method, const char *path, const char *body, size_t body_len,
              const char *token, http_reply *out) {
  return http_call_h(base, method, path, body, body_len, token, NULL, out);
}

int http_call_h(const char *base, const char *method, const char *path, const char *body, size_t body_len,
                const char *token, const char *const *headers, http_reply *out) {
  memset(out, 0, sizeof *out);
  CURL *e = curl_easy_init();
  if (!e) return -1;
  char url[2048], auth[512];
  snprintf(url, sizeof url, "%s%s", base, path);
  grow b = {0}, h = {0};
  struct curl_slist *hd = curl_slist_append(NULL, "Content-Type: application/json");
  if (token) {
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    hd = curl_slist_append(hd, auth);
  }
  for (size_t i = 0; headers && headers[i]; i++) hd = curl_slist_append(hd, headers[i]);
  curl_easy_setopt(e, CURLOPT_URL, url);
  curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
  if (!strcmp(method, "HEAD")) curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  if (body) {
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
  }
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, hd);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, grow_cb);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, grow_cb);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &h);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 30000L);
  CURLcode rc = curl_easy_perform(e);
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &out->status);
  curl_slist_free_all(hd);
  curl_easy_cleanup(e);
  out->body = b.p ? b.p : strdup("");
  out->headers = h.p ? h.p : strdup("");
  trace_exchange(method, path, body, body ? (size_t)body_len : 0, out->status, out->headers, out->body, b.len);
  return rc == CURLE_OK ? 0 : -1;
}

void http_reply_free(http_reply *r) {
  free(r->body);
  free(r->headers);
  memset(r, 0, sizeof *r);
}

/* ---- SSE ---- */

struct sse_conn {
  CURL *e;
  struct curl_slist *hd;
  int open;
  grow raw;       /* bytes not yet parsed into frames */
  size_t bytes;
  sse_frame_rec *frames;
  size_t n, cap;
  char *id, *data; /* the frame being parsed */
  sse_conn *next;
  /* sse_wait's running count of frames holding needle (a copy) among the first at: a wait over a long
   * stream costs one pass, not one per poll (the benchmark's client must not be its bottleneck). */
  char *needle;
  size_t at, count;
};

struct sse_set {
  CURLM *m;
  sse_conn *conns;
};

sse_set *sse_set_new(void) {
  sse_set *s = calloc(1, sizeof *s);
  if (s && !(s->m = curl_multi_init())) free(s), s = NULL;
  return s;
}

static void frame_line(sse_conn *c, char *line) {
  if (!line[0]) { /* blank line: the frame ends (a comment-only one is no frame) */
    if (c->data) {
      if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 64;
        c->frames = realloc(c->frames, c->cap * sizeof *c->frames);
      }
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      c->frames[c->n++] = (sse_frame_rec){c->id, c->data, (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6};
      c->id = c->data = NULL;
    }
    free(c->id);
    c->id = NULL;
    return;
  }
  if (!strncmp(line, "id: ", 4)) {
    free(c->id);
    c->id = strdup(line + 4);
  } else if (!strncmp(line, "data: ", 6)) {
    free(c->data); /* one data line per frame in agora's streams */
    c->data = strdup(line + 6);
  }
}

static size_t sse_cb(char *d, size_t sz, size_t n, void *arg) {
  sse_conn *c = arg;
  grow_cb(d, sz, n, &c->raw);
  c->bytes += sz * n;
  size_t start = 0;
  for (size_t i = 0; i < c->raw.len; i++) {
    if (c->raw.p[i] != '\n') continue;
    c->raw.p[i] = '\0';
    frame_line(c, c->raw.p + start);
    start = i + 1;
  }
  memmove(c->raw.p, c->raw.p + start, c->raw.len - start);
  c->raw.len -= start;
  c->raw.p[c->raw.len] = '\0';
  return sz * n;
}

sse_conn *sse_open(sse_set *s, const char *url, const char *last_id, const char *token) {
  sse_conn *c = calloc(1, sizeof *c);
  char h[512];
  c->e = curl_easy_init();
  if (last_id) {
    snprintf(h, sizeof h, "Last-Event-ID: %s", last_id);
    c->hd = curl_slist_append(c->hd, h);
  }
  if (token) {
    snprintf(h, sizeof h, "Authorization: Bearer %s", token);
    c->hd = curl_slist_append(c->hd, h);
  }
  curl_easy_setopt(c->e, CURLOPT_URL, url);
  curl_easy_setopt(c->e, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(c->e, CURLOPT_HTTPHEADER, c->hd);
  curl_easy_setopt(c->e, CURLOPT_WRITEFUNCTION, sse_cb);
  curl_easy_setopt(c->e, CURLOPT_WRITEDATA, c);
  curl_easy_setopt(c->e, CURLOPT_PRIVATE, c);
  curl_multi_add_handle(s->m, c->e);
  c->open = 1;
  c->next = s->conns;
  s->conns = c;
  return c;
}

/* A stream as one exchange of the trace: its status, and the data of its first frames. */
static void trace_stream(sse_conn *c) {
  long status = 0;
  char *url = NULL, *type = NULL;
  curl_easy_getinfo(c->e, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_getinfo(c->e, CURLINFO_EFFECTIVE_URL, &url);
  curl_easy_getinfo(c->e, CURLINFO_CONTENT_TYPE, &type);
  const char *path = url && strstr(url, "://") ? strchr(strstr(url, "://") + 3, '/') : NULL;
  cJSON *j = path ? trace_record("GET", path, status, type) : NULL;
  if (!j) return;
  cJSON_AddNullToObject(j, "req");
  cJSON_AddBoolToObject(j, "resp_omitted", 1);
  cJSON *frames = cJSON_AddArrayToObject(j, "frames");
  size_t bytes = 0;
  for (size_t i = 0; i < c->n && (bytes += strlen(c->frames[i].data)) <= TRACE_FRAMES_MAX; i++)
    cJSON_AddItemToArray(frames, cJSON_CreateString(c->frames[i].data));
  trace_write(j);
}

void sse_close(sse_set *s, sse_conn *c) {
  if (!c->open) return;
  trace_stream(c);
  curl_multi_remove_handle(s->m, c->e);
  c->open = 0;
}

/* Reads what has come and waits up to ms for more (returns when something came). */
static void pump_once(sse_set *s, long ms) {
  int running, numfds;
  curl_multi_perform(s->m, &running);
  CURLMsg *msg;
  int left;
  while ((msg = curl_multi_info_read(s->m, &left))) {
    sse_conn *c = NULL;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&c);
    if (msg->msg == CURLMSG_DONE && c) sse_close(s, c);
  }
  if (ms > 0) curl_multi_poll(s->m, NULL, 0, (int)(ms < 50 ? ms : 50), &numfds);
}

void sse_pump(sse_set *s, int ms) {
  long end = now_ms() + ms;
  do pump_once(s, end - now_ms());
  while (now_ms() < end);
}

static size_t count_since(sse_conn *c, const char *needle) {
  if (!c->needle || strcmp(c->needle, needle)) {
    free(c->needle);
    c->needle = strdup(needle);
    c->at = c->count = 0;
  }
  for (; c->at < c->n; c->at++) c->count += strstr(c->frames[c->at].data, needle) != NULL;
  return c->count;
}

int sse_wait(sse_set *s, size_t n, const char *needle, int timeout_ms) {
  long long end = now_ms() + wait_budget_ms(timeout_ms);
  for (;;) {
    int done = 1;
    for (sse_conn *c = s->conns; c && done; c = c->next)
      if (c->open && (needle ? count_since(c, needle) : c->n) < n) done = 0;
    if (done) return 0;
    if (now_ms() >= end) return -1;
    pump_once(s, 20);
    pump_once(s, 0); /* what the poll saw */
  }
}

int sse_wait_open(sse_set *s, const sse_conn *c, int timeout_ms) {
  for (long long end = now_ms() + wait_budget_ms(timeout_ms); !c->bytes && c->open; pump_once(s, 20))
    if (now_ms() >= end) return -1;
  return c->bytes ? 0 : -1;
}

const sse_frame_rec *sse_frames(const sse_conn *c, size_t *n) {
  *n = c->n;
  return c->frames;
}

size_t sse_count(const sse_conn *c, const char *needle) {
  size_t k = 0;
  for (size_t i = 0; i < c->n; i++) k += strstr(c->frames[i].data, needle) != NULL;
  return k;
}

int sse_is_open(const sse_conn *c) { return c->open; }
size_t sse_bytes(const sse_conn *c) { return c->bytes; }

void sse_set_free(sse_set *s) {
  if (!s) return;
  while (s->conns) {
    sse_conn *c = s->conns;
    s->conns = c->next;
    sse_close(s, c);
    curl_easy_cleanup(c->e);
    curl_slist_free_all(c->hd);
    for (size_t i = 0; i < c->n; i++) free(c->frames[i].id), free(c->frames[i].data);
    free(c->frames);
    free(c->raw.p);
    free(c->id), free(c->data);
    free(c->needle);
    free(c);
  }
  curl_multi_cleanup(s->m);
  free(s);
}

cJSON *serve_call_json(const serve_proc *sp, const char *method, const char *path, const char *body, long *status) {
  http_reply r;
  http_call(sp->base, method, path, body, body ? strlen(body) : 0, NULL, &r);
  *status = r.status;
  cJSON *j = cJSON_Parse(r.body);
  http_reply_free(&r);
  return j;
}

int serve_proc_start_db(const char *dir, const char *db, serve_proc *out) {
  const char *args[] = {"--db", db, NULL};
  return serve_proc_start(dir, args, NULL, out);
}

int serve_proc_start_big(const char *dir, const char *agent, int n, void (*body)(FILE *f), char id[64],
                         serve_proc *out) {
  char file[1024], db[1024];
  snprintf(file, sizeof file, "%s/big.json", dir);
  snprintf(db, sizeof db, "%s/db-big", dir);
  FILE *f = fopen(file, "w");
  int rc = f ? 0 : -1;
  if (f) {
    fprintf(f, "{\"format\": 1, \"world\": {\"name\": \"Big\", \"agents\": [{\"name\": \"%s\", \"provider\": \"script\","
               " \"replies\": [\"x\"]}]}, \"chat\": {\"id\": \"big\", \"world\": \"big\", \"title\": \"Long\","
               " \"message_count\": %d, \"created_at\": \"2026-11-23T10:00:00.000Z\","
               " \"updated_at\": \"2026-11-23T10:00:00.000Z\"}, \"messages\": [", agent, n);
    body(f);
    if (fclose(f)) rc = -1;
  }
  id[0] = '\0';
  if (!rc) rc = proc_import_snapshot(file, db, id, 64);
  if (!rc && !id[0]) rc = -1;
  if (!rc) rc = serve_proc_start_db(dir, db, out);
  if (rc) unit_fail_(__FILE__, __LINE__, "no chat of %d messages, or agora serve did not start", n);
  return rc;
}

cJSON *serve_get_best_of(const serve_proc *sp, const char *path, int n, long *status, long *best_ms) {
  cJSON *j = NULL;
  *best_ms = -1;
  for (int i = 0; i < n; i++) {
    cJSON_Delete(j);
    long long t0 = now_ms();
    j = serve_call_json(sp, "GET", path, NULL, status);
    long ms = (long)(now_ms() - t0);
    if (*best_ms < 0 || ms < *best_ms) *best_ms = ms;
  }
  return j;
}

typedef struct poll_ctx {
  const serve_proc *sp;
  const char *path, *needle;
  cJSON *got;
} poll_ctx;

static int poll_once(void *arg) {
  poll_ctx *p = arg;
  http_reply r;
  http_call(p->sp->base, "GET", p->path, NULL, 0, NULL, &r);
  if (r.status == 200 && r.body && strstr(r.body, p->needle)) p->got = cJSON_Parse(r.body);
  http_reply_free(&r);
  return p->got != NULL;
}

cJSON *serve_poll_json(const serve_proc *sp, const char *path, const char *needle, long ms) {
  poll_ctx p = {.sp = sp, .path = path, .needle = needle};
  wait_until(poll_once, &p, ms);
  return p.got;
}

cJSON *serve_expect_(const char *file, int line, const serve_proc *sp, const char *method, const char *path,
                     const char *body, long status, const char *want) {
  http_reply r;
  http_call(sp->base, method, path, body, body ? strlen(body) : 0, NULL, &r);
  if (r.status != status || (want && (!r.body || !strstr(r.body, want))))
    unit_fail_(file, line, "%s %s: %ld, expected %ld with '%s': %.300s", method, path, r.status, status,
               want ? want : "", r.body ? r.body : "");
  cJSON *j = r.body ? cJSON_Parse(r.body) : NULL;
  http_reply_free(&r);
  return j;
}

typedef struct body_goal {
  const serve_proc *sp;
  const char *path, *needle;
} body_goal;

static int body_holds(void *arg) {
  const body_goal *g = arg;
  http_reply r;
  int found = !http_call(g->sp->base, "GET", g->path, NULL, 0, NULL, &r) && r.body && strstr(r.body, g->needle);
  http_reply_free(&r);
  return found;
}

int serve_wait_body(const serve_proc *sp, const char *path, const char *needle, long ms) {
  return wait_until_every(body_holds, &(body_goal){.sp = sp, .path = path, .needle = needle}, ms, 20);
}

int serve_start_(const char *file, int line, const char *dir, const char *const *args, const char *const *extra_env,
                 serve_proc *out) {
  if (!serve_proc_start(dir, args, extra_env, out)) return 0;
  char *err = unit_read_file(out->err_path);
  unit_fail_(file, line, "agora serve did not start: %s", err ? err : "(no stderr)");
  free(err);
  return -1;
}
