/* A full disk on demand (see disk.h). */
#include "support/disk.h"
#include "support/unit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

int disk_tmpfs(const char *mnt, const char *size) {
  char opts[64];
  snprintf(opts, sizeof opts, "size=%s", size);
  CHECK_INT(mkdir(mnt, 0700), 0);
  if (mount("tmpfs", mnt, "tmpfs", 0, opts) == 0) return 0;
  fprintf(stderr, "  SKIPPED: cannot mount a tmpfs here (%s); run the suite as root to test a full disk\n",
          strerror(errno));
  return -1;
}

size_t disk_fill(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return 0;
  static char chunk[16384];
  memset(chunk, 'f', sizeof chunk);
  size_t total = 0;
  for (;;) {
    ssize_t n = write(fd, chunk, sizeof chunk);
    if (n <= 0) break;
    total += (size_t)n;
  }
  close(fd);
  return total;
}
