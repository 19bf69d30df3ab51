/* Writing a file named by the person: atomic replacement for regular files, in-place writes for FIFOs
 * and character devices, refusal for anything else (see outfile.h). */
#include "common/outfile.h"

#include "common/buf.h"
#include "common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes all of p (n bytes) to fd, through short writes and interruptions. */
static int outfile_write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

static int outfile_in_place(const char *path, const char *text, ag_errmsg *em) {
  int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return ag_fail(em, AG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  size_t n = strlen(text);
  int bad = outfile_write_all(fd, text, n) != 0 || ((n == 0 || text[n - 1] != '\n') && outfile_write_all(fd, "\n", 1));
  int e = errno;
  if (close(fd) != 0 && !bad) bad = 1, e = errno;
  return bad ? ag_fail(em, AG_ERR_IO, "%s: cannot write: %s", path, strerror(e)) : AG_OK;
}

int ag_file_write_out(const char *path, const char *text, ag_errmsg *em) {
  struct stat st;
  if (lstat(path, &st) != 0) {
    if (errno != ENOENT) return ag_fail(em, AG_ERR_IO, "%s: %s", path, strerror(errno));
    return ag_file_write_atomic(path, text, em);
  }
  if (S_ISREG(st.st_mode)) return ag_file_write_atomic(path, text, em);
  if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) return outfile_in_place(path, text, em);
  const char *what = S_ISLNK(st.st_mode)   ? "a symbolic link (name the file it points to)"
                     : S_ISDIR(st.st_mode) ? "a directory"
                                           : "not a regular file";
  return ag_fail(em, AG_ERR_INVALID, "%s is %s; not written", path, what);
}
