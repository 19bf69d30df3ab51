/* stderr caught in a file for a while: what a library that must print nothing of its own printed. */
#ifndef AG_TEST_STDERR_CATCH_H
#define AG_TEST_STDERR_CATCH_H

typedef struct stderr_catch {
  char path[512];
  int saved, fd;
} stderr_catch;

/* From now on, file descriptor 2 writes into DIR/stderr.txt (emptied first). */
void stderr_catch_start(stderr_catch *c, const char *dir);
/* What went to stderr since the start (caller frees; "" when nothing); stderr is back. */
char *stderr_catch_end(stderr_catch *c);

#endif
