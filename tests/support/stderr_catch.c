/* stderr caught in a file (see stderr_catch.h). */
#include "support/stderr_catch.h"

#include "support/unit.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

void stderr_catch_start(stderr_catch *c, const char *dir) {
  snprintf(c->path, sizeof c->path, "%s/stderr.txt", dir);
  fflush(stderr);
  c->saved = dup(2);
  c->fd = open(c->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  dup2(c->fd, 2);
}

char *stderr_catch_end(stderr_catch *c) {
  fflush(stderr);
  dup2(c->saved, 2);
  close(c->saved), close(c->fd);
  return unit_read_file(c->path);
}
