/* Loopback ports for the servers tests start (see ports.h). */
#include "support/ports.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static unsigned seed;

/* bind(0) takes from the ephemeral range, the same one outgoing connections use: a port picked that way
 * and released can be taken by a client's connection before a restarted server binds it again, and two
 * picks in a row can return the same port (both happened to nats-server clusters). */
static int ephemeral_low(void) {
  int lo = 32768, hi = 0;
  FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
  if (f) {
    if (fscanf(f, "%d %d", &lo, &hi) != 2) lo = 32768;
    fclose(f);
  }
  return lo;
}

static int can_bind(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  int ok = fd >= 0 && !setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) &&
           !bind(fd, (struct sockaddr *)&a, sizeof a);
  if (fd >= 0) close(fd);
  return ok;
}

/* Test binaries run side by side (ctest -j2): a port one of them picked may not be bound yet by its
 * server when another looks. Each port handed out is also held by an flock on a file named after it in
 * one directory all test processes share; the kernel lets the lock go when the process ends, however it
 * ends, so a crashed test never keeps a port from the next. 1 when this process now holds port. */
static int reserve(int port) {
  const char *tmp = getenv("TMPDIR");
  char dir[512], path[600];
  snprintf(dir, sizeof dir, "%s/agora-test-ports", tmp && *tmp ? tmp : "/tmp");
  if (mkdir(dir, 01777) == 0) chmod(dir, 01777); /* every user's tests share it; mkdir's mode is umasked */
  snprintf(path, sizeof path, "%s/%d", dir, port);
  int fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0644); /* flock needs no write access */
  if (fd < 0) return 1; /* no shared directory here: the bind check alone, as before */
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    return 0;
  }
  return 1; /* fd stays open, and the lock held, until the process exits */
}

void ports_seed(unsigned s) { seed = s ? s : 1; }

int ports_free(void) {
  static unsigned char given[65536 / 8];
  int lo = 10000, hi = ephemeral_low(); /* [lo, hi) */
  if (hi - lo < 1000) lo = 1024;
  if (!seed) seed = (unsigned)time(NULL) ^ ((unsigned)getpid() << 16);
  for (int tries = 0; tries < 2000; tries++) {
    seed = seed * 1103515245u + 12345u;
    int port = lo + (int)((seed >> 8) % (unsigned)(hi - lo));
    if (given[port / 8] & (1u << (port % 8)) || !can_bind(port) || ports_open(port) || !reserve(port)) continue;
    given[port / 8] |= (unsigned char)(1u << (port % 8));
    return port;
  }
  return -1;
}

int ports_open(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  int ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
  if (fd >= 0) close(fd);
  return ok;
}
