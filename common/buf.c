/* Capped growable buffer and whole-file reading. */
#include "common/buf.h"
#include "common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void ag_buf_init(ag_buf *b, size_t cap) {
  b->data = NULL;
  b->len = 0;
  b->alloc = 0;
  b->cap = cap;
}

static int buf_reserve(ag_buf *b, size_t extra) {
  if (extra > b->cap || b->len > b->cap - extra) return AG_ERR_TOO_BIG;
  size_t need = b->len + extra + 1;
  if (need <= b->alloc) return AG_OK;
  size_t n = b->alloc ? b->alloc : 64;
  while (n < need) n *= 2;
  char *p = realloc(b->data, n);
  if (!p) return AG_ERR_NOMEM;
  b->data = p;
  b->alloc = n;
  return AG_OK;
}

int ag_buf_append(ag_buf *b, const void *data, size_t len) {
  int rc = buf_reserve(b, len);
  if (rc) return rc;
  if (len) memcpy(b->data + b->len, data, len);
  b->len += len;
  b->data[b->len] = '\0';
  return AG_OK;
}

int ag_buf_appends(ag_buf *b, const char *s) { return ag_buf_append(b, s, strlen(s)); }

int ag_buf_printf(ag_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return AG_ERR_INVALID;
  int rc = buf_reserve(b, (size_t)n);
  if (rc) return rc;
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
  return AG_OK;
}

const char *ag_buf_str(const ag_buf *b) { return b->data ? b->data : ""; }

char *ag_buf_take(ag_buf *b) {
  char *p = b->data;
  if (!p) p = calloc(1, 1);
  b->data = NULL;
  b->len = b->alloc = 0;
  return p;
}

void ag_buf_reset(ag_buf *b) {
  b->len = 0;
  if (b->data) b->data[0] = '\0';
}

void ag_buf_free(ag_buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->alloc = 0;
}

int ag_file_read(const char *path, size_t cap, char **out, size_t *len, ag_errmsg *em) {
  int rc = AG_OK;
  ag_buf b;
  ag_buf_init(&b, cap);
  FILE *f = fopen(path, "rb");
  if (!f) return ag_fail(em, errno == ENOENT ? AG_ERR_NOT_FOUND : AG_ERR_IO, "%s: %s", path, strerror(errno));
  struct stat sb;
  int known = fstat(fileno(f), &sb) == 0;
  if (known && S_ISDIR(sb.st_mode)) {
    fclose(f);
    return ag_fail(em, AG_ERR_INVALID, "%s: is a directory, not a file", path);
  }
  /* A regular file's size is known: refuse it before reading, and read it into one allocation. */
  if (known && S_ISREG(sb.st_mode) && (unsigned long long)sb.st_size > cap) {
    fclose(f);
    return ag_fail(em, AG_ERR_TOO_BIG, "%s: file is larger than %zu bytes", path, cap);
  }
  if (known && S_ISREG(sb.st_mode) && sb.st_size > 0 && (rc = buf_reserve(&b, (size_t)sb.st_size))) goto done;
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    rc = ag_buf_append(&b, chunk, n);
    if (rc == AG_ERR_TOO_BIG) {
      rc = ag_fail(em, AG_ERR_TOO_BIG, "%s: file is larger than %zu bytes", path, cap);
      goto done;
    }
    if (rc) goto done;
  }
  if (ferror(f)) {
    rc = ag_fail(em, AG_ERR_IO, "%s: read error", path);
    goto done;
  }
  if (len) *len = b.len;
  *out = ag_buf_take(&b);
  if (!*out) rc = AG_ERR_NOMEM;
done:
  fclose(f);
  ag_buf_free(&b);
  return rc;
}

int ag_file_write_atomic(const char *path, const char *text, ag_errmsg *em) {
  char tmp[4096];
  if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid()) >= sizeof tmp)
    return ag_fail(em, AG_ERR_INVALID, "%s: path too long", path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    if (fd >= 0) close(fd);
    unlink(tmp);
    return ag_fail(em, AG_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
  }
  size_t n = strlen(text);
  int bad = fputs(text, f) < 0 || ((n == 0 || text[n - 1] != '\n') && fputc('\n', f) == EOF);
  bad |= fflush(f) != 0 || fsync(fileno(f)) != 0;
  bad |= fclose(f) != 0;
  if (bad || rename(tmp, path)) {
    int e = errno;
    unlink(tmp);
    return ag_fail(em, AG_ERR_IO, "%s: cannot write: %s", path, strerror(e));
  }
  return AG_OK;
}
