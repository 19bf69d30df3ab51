/* A full disk on demand, for the tests of what a failed save does: a small tmpfs of the test's own, and
 * a filler file that takes all of its space (unlink it to give the space back). */
#ifndef AG_TEST_DISK_H
#define AG_TEST_DISK_H

#include <stddef.h>

/* Makes directory mnt and mounts a tmpfs of size ("16m") on it: 0, or -1 after a "SKIPPED" line on
 * stderr when this process may not mount (not root): the caller's case then ends without a verdict. */
int disk_tmpfs(const char *mnt, const char *size);

/* Writes a file at path until its file system is full; the bytes written. */
size_t disk_fill(const char *path);

#endif
