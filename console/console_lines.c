/* Piped input: lines read one at a time, each handled once the world is quiet (or a question waits
 * for the next line). */
#include "console/console_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

/* ---- lines mode ---- */

static void lines_read(console *c) {
  if (c->in_len == c->in_cap && c->in_cap < LINE_CAP) {
    size_t cap = c->in_cap ? c->in_cap * 2 : 65536;
    if (cap > LINE_CAP) cap = LINE_CAP;
    char *p = realloc(c->in, cap);
    if (!p) {
      c->in_eof = 1;
      return;
    }
    c->in = p;
    c->in_cap = cap;
  }
  if (c->in_len == c->in_cap) return;
  ssize_t n = read(STDIN_FILENO, c->in + c->in_len, c->in_cap - c->in_len);
  if (n > 0) c->in_len += (size_t)n;
  else if (n == 0 || (errno != EINTR && errno != EAGAIN)) c->in_eof = 1;
}

/* The next whole line of input (caller frees), or NULL when none is complete yet. A line past LINE_CAP
 * is skipped with one error. */
static char *lines_next(console *c) {
  for (;;) {
    char *nl = c->in_len ? memchr(c->in, '\n', c->in_len) : NULL;
    int overlong = !nl && c->in_len >= LINE_CAP;
    if (!nl && !overlong && !(c->in_eof && c->in_len)) return NULL;
    size_t n = nl ? (size_t)(nl - c->in) : c->in_len;
    char *line = c->in_skip || overlong ? NULL : strndup(c->in, n);
    size_t drop = nl ? n + 1 : n;
    memmove(c->in, c->in + drop, c->in_len - drop);
    c->in_len -= drop;
    if (overlong) {
      if (!c->in_skip) con_error(c, "a line longer than %u bytes was skipped", (unsigned)LINE_CAP - 1);
      c->in_skip = 1;
    } else if (c->in_skip) {
      c->in_skip = 0; /* that was the end of the long line */
    } else if (line) {
      return line;
    }
  }
}


int con_lines_run(console *c) {
  /* Regular files and /dev/null cannot be polled usefully, and reading them never blocks. */
  struct stat sb;
  c->in_direct = fstat(STDIN_FILENO, &sb) || !(S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode) || isatty(STDIN_FILENO));
  if (c->resumed) con_chat_announce(c, "chat-resumed", 1);
  /* Replies a resumed chat had in flight are asked again (docs/time.md): they come before the first line. */
  if (!agora_is_quiet(c->w)) con_run_quiet(c);
  while (!c->quit) {
    con_ask_show(c);
    char *line = lines_next(c);
    if (line || (c->in_eof && c->n_asks)) {
      con_handle_line(c, line ? line : ""); /* end of input answers a question with no */
      free(line);
      /* Until quiet, or until a question waits for the next line (con_ask interrupts). */
      int rc = con_run_quiet(c);
      if (rc < 0 && rc != AGORA_ERR_CANCELLED) con_error(c, "the world did not settle: %s", agora_strerror(rc));
    } else if (c->in_eof) {
      break;
    } else if (c->in_direct) {
      lines_read(c);
    } else if (con_wait(c, 1, -1)) {
      lines_read(c);
    }
  }
  return 0;
}
