/* The tests' HTTP proxy (see test_proxy.h): one thread, one poll loop over the listening socket, a
 * stop pipe and every client/target pair. Loopback only: a request for any other host is refused. */
#include "support/test_proxy.h"
#include "support/loopback.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PROXY_MAX_PAIRS 64
#define PROXY_HEAD_MAX 8192

typedef struct proxy_pair {
  int cfd, tfd; /* client, target (-1 until the request is read) */
  size_t len;
  char head[PROXY_HEAD_MAX];
} proxy_pair;

struct test_proxy {
  int lfd, stop[2], port, refuse;
  pthread_t thread;
  pthread_mutex_t mu;
  size_t requests;
  proxy_pair pairs[PROXY_MAX_PAIRS];
};

static void write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) return;
    p += w;
    n -= (size_t)w;
  }
}

static void pair_close(proxy_pair *c) {
  if (c->cfd >= 0) close(c->cfd);
  if (c->tfd >= 0) close(c->tfd);
  c->cfd = c->tfd = -1;
  c->len = 0;
}

/* "127.0.0.1:PORT" or "localhost:PORT" (after an optional "http://") → a connected socket, or -1. */
static int connect_loopback(const char *target) {
  if (strncmp(target, "http://", 7) == 0) target += 7;
  const char *colon = strchr(target, ':');
  if (!colon) return -1;
  size_t hlen = (size_t)(colon - target);
  if (!((hlen == 9 && !strncmp(target, "127.0.0.1", 9)) || (hlen == 9 && !strncmp(target, "localhost", 9)))) return -1;
  int port = atoi(colon + 1);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    fd = -1;
  }
  return fd;
}

/* The request head is complete: refuse, open a tunnel, or forward an absolute-URI request. */
static void pair_request(test_proxy *p, proxy_pair *c, size_t head_len) {
  static const char forbidden[] = "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  char method[16] = "", target[512] = "";
  c->head[c->len] = '\0';
  sscanf(c->head, "%15s %511s", method, target);
  pthread_mutex_lock(&p->mu);
  p->requests++;
  pthread_mutex_unlock(&p->mu);
  int tunnel = strcmp(method, "CONNECT") == 0;
  if (p->refuse || (c->tfd = connect_loopback(target)) < 0) {
    write_all(c->cfd, forbidden, sizeof forbidden - 1);
    pair_close(c);
    return;
  }
  if (tunnel) {
    static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
    write_all(c->cfd, ok, sizeof ok - 1);
    write_all(c->tfd, c->head + head_len, c->len - head_len);
  } else {
    write_all(c->tfd, c->head, c->len); /* servers accept the absolute form */
  }
  c->len = 0;
}

static void pair_readable(test_proxy *p, proxy_pair *c, int from_client) {
  if (c->tfd < 0) { /* still reading the request head */
    ssize_t n = recv(c->cfd, c->head + c->len, sizeof c->head - 1 - c->len, 0);
    if (n <= 0) {
      pair_close(c);
      return;
    }
    c->len += (size_t)n;
    c->head[c->len] = '\0';
    char *end = strstr(c->head, "\r\n\r\n");
    if (end) pair_request(p, c, (size_t)(end + 4 - c->head));
    else if (c->len >= sizeof c->head - 1) pair_close(c);
    return;
  }
  char buf[16384];
  int in = from_client ? c->cfd : c->tfd, out = from_client ? c->tfd : c->cfd;
  ssize_t n = recv(in, buf, sizeof buf, 0);
  if (n <= 0) {
    pair_close(c);
    return;
  }
  write_all(out, buf, (size_t)n);
}

static void *proxy_main(void *arg) {
  test_proxy *p = arg;
  for (;;) {
    struct pollfd fds[2 + 2 * PROXY_MAX_PAIRS];
    int who[2 + 2 * PROXY_MAX_PAIRS]; /* pair index * 2 + (1 for the client side) */
    nfds_t n = 0;
    fds[n++] = (struct pollfd){p->stop[0], POLLIN, 0};
    fds[n++] = (struct pollfd){p->lfd, POLLIN, 0};
    for (int i = 0; i < PROXY_MAX_PAIRS; i++) {
      proxy_pair *c = &p->pairs[i];
      if (c->cfd < 0) continue;
      who[n] = i * 2 + 1;
      fds[n++] = (struct pollfd){c->cfd, POLLIN, 0};
      if (c->tfd >= 0) {
        who[n] = i * 2;
        fds[n++] = (struct pollfd){c->tfd, POLLIN, 0};
      }
    }
    if (poll(fds, n, -1) < 0) continue;
    if (fds[0].revents) break;
    if (fds[1].revents & POLLIN) {
      int fd = accept(p->lfd, NULL, NULL);
      int slot = -1;
      for (int i = 0; fd >= 0 && i < PROXY_MAX_PAIRS && slot < 0; i++)
        if (p->pairs[i].cfd < 0) slot = i;
      if (slot >= 0) p->pairs[slot].cfd = fd;
      else if (fd >= 0) close(fd);
    }
    for (nfds_t k = 2; k < n; k++) {
      if (!fds[k].revents) continue;
      proxy_pair *c = &p->pairs[who[k] / 2];
      if (c->cfd != fds[k].fd && c->tfd != fds[k].fd) continue; /* closed earlier in this round */
      pair_readable(p, c, who[k] & 1);
    }
  }
  return NULL;
}

int test_proxy_start(int refuse, test_proxy **out) {
  test_proxy *p = calloc(1, sizeof *p);
  if (!p) return -1;
  p->refuse = refuse;
  for (int i = 0; i < PROXY_MAX_PAIRS; i++) p->pairs[i].cfd = p->pairs[i].tfd = -1;
  pthread_mutex_init(&p->mu, NULL);
  p->lfd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  if (p->lfd < 0 || bind(p->lfd, (struct sockaddr *)&a, sizeof a) || listen(p->lfd, 64) ||
      getsockname(p->lfd, (struct sockaddr *)&a, &len) || pipe(p->stop)) {
    if (p->lfd >= 0) close(p->lfd);
    pthread_mutex_destroy(&p->mu);
    free(p);
    return -1;
  }
  p->port = ntohs(a.sin_port);
  if (pthread_create(&p->thread, NULL, proxy_main, p)) {
    close(p->lfd);
    close(p->stop[0]);
    close(p->stop[1]);
    pthread_mutex_destroy(&p->mu);
    free(p);
    return -1;
  }
  *out = p;
  return 0;
}

void test_proxy_stop(test_proxy *p) {
  if (!p) return;
  if (write(p->stop[1], "x", 1) != 1) {
  }
  pthread_join(p->thread, NULL);
  for (int i = 0; i < PROXY_MAX_PAIRS; i++) pair_close(&p->pairs[i]);
  close(p->lfd);
  close(p->stop[0]);
  close(p->stop[1]);
  pthread_mutex_destroy(&p->mu);
  free(p);
}

int test_proxy_port(const test_proxy *p) { return p->port; }

const char *test_proxy_url(const test_proxy *p) {
  static char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%d", p->port);
  return url;
}

size_t test_proxy_requests(test_proxy *p) { return loopback_count(&p->mu, &p->requests); }
