/* A growable byte buffer with a hard size cap, always NUL-terminated (after curl's dynbuf): any buffer
 * that holds outside input (HTTP bodies, SSE lines, files) is one of these, so an oversized input fails
 * with AG_ERR_TOO_BIG instead of eating memory. */
#ifndef AG_BUF_H
#define AG_BUF_H

#include <stddef.h>

typedef struct ag_buf {
  char *data;    /* owned; NULL until the first append */
  size_t len;
  size_t alloc;
  size_t cap;    /* maximum len */
} ag_buf;

void ag_buf_init(ag_buf *b, size_t cap);
int ag_buf_append(ag_buf *b, const void *data, size_t len);
int ag_buf_appends(ag_buf *b, const char *s);
int ag_buf_printf(ag_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The contents as a C string ("" when empty); borrowed, valid until the next change. */
const char *ag_buf_str(const ag_buf *b);
/* Hands the contents to the caller (free()); the buffer is empty afterwards. Never NULL on success. */
char *ag_buf_take(ag_buf *b);
void ag_buf_reset(ag_buf *b);
void ag_buf_free(ag_buf *b);

/* Reads a whole file into *out (caller frees) with a size cap; errors name the path in em. */
struct ag_errmsg;
int ag_file_read(const char *path, size_t cap, char **out, size_t *len, struct ag_errmsg *em);

/* Writes text (and a final newline if it has none) to path through a temporary file, fsync and a
 * rename, with mode 0600: a reader never sees half a file, and a chat stays private. */
int ag_file_write_atomic(const char *path, const char *text, struct ag_errmsg *em);

#endif
