/* The MCP test driver of mcp_drive.h. */
#include "support/mcp_drive.h"
#include "support/npm_peer.h"
#include "support/ports.h"
#include "support/wait.h"

#include "net/net_fetch.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void on_message(void *ud, const char *json, size_t len) {
  mcp_drive *d = ud;
  if (d->n_msgs == d->cap) {
    d->cap = d->cap ? d->cap * 2 : 64;
    d->msgs = realloc(d->msgs, d->cap * sizeof *d->msgs);
  }
  d->msgs[d->n_msgs++] = strndup(json, len);
  if (d->close_in_message && d->t) {
    d->close_in_message = 0;
    d->t->ops->close(d->t);
    d->t = NULL;
  }
}

static void on_closed(void *ud, const char *why) {
  mcp_drive *d = ud;
  d->closed = 1;
  snprintf(d->why, sizeof d->why, "%s", why);
}

static const mcp_transport_sink drive_sink = {on_message, on_closed};

int mcp_drive_open(mcp_drive *d, const mcp_http_options *opt) {
  memset(d, 0, sizeof *d);
  d->base = event_base_new();
  int rc = d->base ? net_client_new(d->base, &d->net) : AG_ERR_NOMEM;
  if (!rc) rc = mcp_http_open(d->net, opt, &drive_sink, d, &d->t);
  return rc;
}

static void on_tick(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what, (void)arg;
}

int mcp_drive_run(mcp_drive *d, long ms, int (*cond)(mcp_drive *d, void *arg), void *arg) {
  struct event *tick = event_new(d->base, -1, EV_PERSIST, on_tick, NULL);
  struct timeval tv = {0, 5000};
  event_add(tick, &tv);
  double end = now_ms() + (double)ms;
  int held = 0;
  while (!(held = cond && cond(d, arg)) && now_ms() < end) event_base_loop(d->base, EVLOOP_ONCE);
  event_free(tick);
  return held;
}

static int no_fetches(mcp_drive *d, void *arg) {
  (void)arg;
  return net_fetch_live(d->net) == 0;
}

void mcp_drive_close(mcp_drive *d) {
  if (d->t) d->t->ops->close(d->t);
  d->t = NULL;
  if (d->net) mcp_drive_run(d, 3000, no_fetches, NULL);
  net_client_free(d->net);
  if (d->base) event_base_free(d->base);
  for (size_t i = 0; i < d->n_msgs; i++) free(d->msgs[i]);
  free(d->msgs);
  memset(d, 0, sizeof *d);
}

int mcp_drive_send(mcp_drive *d, const char *fmt, ...) {
  char buf[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return d->t ? d->t->ops->send(d->t, buf, strlen(buf)) : AG_ERR_STATE;
}

static const char *find_answer(const mcp_drive *d, long id) {
  for (size_t i = 0; i < d->n_msgs; i++) {
    cJSON *m = cJSON_Parse(d->msgs[i]);
    const cJSON *mid = cJSON_GetObjectItemCaseSensitive(m, "id");
    int hit = cJSON_IsNumber(mid) && (long)mid->valuedouble == id && !cJSON_GetObjectItemCaseSensitive(m, "method");
    cJSON_Delete(m);
    if (hit) return d->msgs[i];
  }
  return NULL;
}

static int has_answer(mcp_drive *d, void *arg) { return find_answer(d, *(long *)arg) != NULL; }

const char *mcp_drive_answer(mcp_drive *d, long id, long timeout_ms) {
  mcp_drive_run(d, timeout_ms, has_answer, &id);
  return find_answer(d, id);
}

size_t mcp_drive_count_method(const mcp_drive *d, const char *method) {
  size_t n = 0;
  for (size_t i = 0; i < d->n_msgs; i++) {
    cJSON *m = cJSON_Parse(d->msgs[i]);
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(m, "method");
    n += cJSON_IsString(x) && strcmp(x->valuestring, method) == 0;
    cJSON_Delete(m);
  }
  return n;
}

int mcp_drive_handshake(mcp_drive *d, long timeout_ms) {
  mcp_drive_send(d, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                    "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"agora-test\",\"version\":\"0\"}}}");
  const char *a = mcp_drive_answer(d, 1, timeout_ms);
  if (!a || !strstr(a, "\"result\"")) return -1;
  return mcp_drive_send(d, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

int mcp_everything_start(mcp_everything *e, const char *dir) {
  memset(e, 0, sizeof *e);
  snprintf(e->log, sizeof e->log, "%s/everything.log", dir);
  e->port = ports_free();
  snprintf(e->url, sizeof e->url, "http://127.0.0.1:%d/mcp", e->port);
  char port_env[32];
  snprintf(port_env, sizeof port_env, "PORT=%d", e->port);
  const char *const args[] = {"streamableHttp", NULL}, *const env[] = {port_env, NULL};
  npm_peer p;
  if (npm_peer_start(&p, "mcp-server-everything", args, env, e->port, e->log)) return -1;
  e->pid = p.pid;
  return 0;
}

void mcp_everything_stop(mcp_everything *e) {
  npm_peer p = {.pid = e->pid, .port = e->port};
  npm_peer_stop(&p);
  e->pid = 0;
}
