/* The console's own terminal reader, between the terminal and libedit: libedit 3.1-20221030 corrupts
 * its heap on a line of a few KB (a paste; issue 17), so what reaches it is bounded. A bracketed paste
 * (ESC[200~ ... ESC[201~) is read here and inserted whole, or refused with a note when the line would
 * pass CON_LINE_MAX; keys typed past the limit are dropped. libedit reads its keys from our buffer. */
#include "console/console_int.h"

#ifdef AGORA_HAVE_LIBEDIT

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char PASTE_BEGIN[] = "\033[200~", PASTE_END[] = "\033[201~";
#define MARK_LEN 6

typedef struct tty_input {
  unsigned char buf[4096];
  size_t len, pos;
  int pasting;        /* between the paste marks */
  size_t end_match;   /* bytes of PASTE_END seen so far */
  char paste[CON_LINE_MAX + 1];
  size_t paste_len;   /* kept (up to CON_LINE_MAX) */
  size_t paste_total; /* received */
  int capped;         /* the note on a full line was given for this line */
} tty_input;

static tty_input tin;

static int next_byte(void) {
  if (tin.pos < tin.len) return tin.buf[tin.pos++];
  unsigned char ch;
  ssize_t n;
  do n = read(STDIN_FILENO, &ch, 1); /* the rest of a key libedit started; the terminal sends it whole */
  while (n < 0 && errno == EINTR);
  return n == 1 ? ch : -1;
}

/* libedit's getc hook: one character decoded from UTF-8 (libedit takes the value as a wchar_t). */
static int tty_getc(FILE *f) {
  (void)f;
  int b = next_byte();
  if (b < 0xc0) return b;
  int more = b >= 0xf0 ? 3 : b >= 0xe0 ? 2 : 1;
  int cp = b & (0x3f >> more);
  for (; more > 0; more--) {
    int n = next_byte();
    if (n < 0 || (n & 0xc0) != 0x80) return 0xfffd;
    cp = (cp << 6) | (n & 0x3f);
  }
  return cp;
}

void con_input_install(void) {
  rl_getc_function = tty_getc;
  fputs("\033[?2004h", stdout); /* bracketed paste on */
  fflush(stdout);
}

void con_input_end(void) {
  fputs("\033[?2004l", stdout);
  fflush(stdout);
}

static void note(console *c, const char *text) {
  con_screen_hide(c);
  con_note(c, text);
  con_screen_show(c);
  rl_forced_update_display();
}

static void paste_done(console *c) {
  char msg[200];
  size_t line = rl_end > 0 ? (size_t)rl_end : 0;
  tin.pasting = 0;
  if (line + tin.paste_total > CON_LINE_MAX) {
    snprintf(msg, sizeof msg, "paste of %zu bytes refused: a line typed at a terminal holds at most %d bytes "
             "(pipe longer text: agora console WORLD < FILE)", tin.paste_total, CON_LINE_MAX);
    note(c, msg);
    return;
  }
  tin.paste[tin.paste_len] = '\0';
  for (size_t i = 0; i < tin.paste_len; i++) /* one line: line breaks and tabs become spaces */
    if ((unsigned char)tin.paste[i] < 0x20 || tin.paste[i] == 0x7f) tin.paste[i] = ' ';
  rl_insert_text(tin.paste);
  rl_forced_update_display(); /* not rl_redisplay: libedit's pushes a Ctrl-R, which starts a history search */
}

/* Paste bytes up to and including the end mark. */
static void paste_take(console *c) {
  while (tin.pos < tin.len && tin.pasting) {
    char ch = (char)tin.buf[tin.pos++];
    if (ch == PASTE_END[tin.end_match]) {
      if (++tin.end_match == MARK_LEN) paste_done(c);
      continue;
    }
    /* a partial mark was text after all (it cannot start inside itself: only its first byte is ESC) */
    for (size_t i = 0; i < tin.end_match; i++, tin.paste_total++)
      if (tin.paste_len < CON_LINE_MAX) tin.paste[tin.paste_len++] = PASTE_END[i];
    tin.end_match = 0;
    if (ch == PASTE_END[0]) {
      tin.end_match = 1;
      continue;
    }
    if (tin.paste_len < CON_LINE_MAX) tin.paste[tin.paste_len++] = ch;
    tin.paste_total++;
  }
}

/* Whether the buffer continues with the paste's start mark (reading the rest of a mark cut short). */
static int paste_begins(void) {
  size_t have = tin.len - tin.pos;
  if (have < MARK_LEN && memcmp(tin.buf + tin.pos, PASTE_BEGIN, have) == 0) {
    memmove(tin.buf, tin.buf + tin.pos, have);
    tin.len = have;
    tin.pos = 0;
    while (tin.len < MARK_LEN) {
      int b = next_byte();
      if (b < 0) break;
      tin.buf[tin.len++] = (unsigned char)b;
      if (tin.buf[tin.len - 1] != (unsigned char)PASTE_BEGIN[tin.len - 1]) break;
    }
    have = tin.len;
  }
  return have >= MARK_LEN && memcmp(tin.buf + tin.pos, PASTE_BEGIN, MARK_LEN) == 0;
}

int con_input_feed(console *c, int fd) {
  ssize_t n;
  do n = read(fd, tin.buf, sizeof tin.buf);
  while (n < 0 && errno == EINTR);
  if (n <= 0) return -1; /* readable with nothing to read: the terminal hung up */
  tin.len = (size_t)n;
  tin.pos = 0;
  while (tin.pos < tin.len && !c->quit) {
    if (tin.pasting) {
      paste_take(c);
      continue;
    }
    if (tin.buf[tin.pos] == 0x1b && paste_begins()) {
      tin.pos += MARK_LEN;
      tin.pasting = 1;
      tin.end_match = tin.paste_len = tin.paste_total = 0;
      continue;
    }
    unsigned char b = tin.buf[tin.pos];
    if (rl_end < CON_LINE_MAX) tin.capped = 0;
    if (rl_end >= CON_LINE_MAX && b >= 0x20 && b != 0x7f) {
      tin.pos++; /* text past the limit is dropped, with one note per line */
      if (!tin.capped) {
        char msg[160];
        snprintf(msg, sizeof msg, "the line is full: a line typed at a terminal holds at most %d bytes", CON_LINE_MAX);
        note(c, msg);
      }
      tin.capped = 1;
      continue;
    }
    /* libedit leaves rl_end stale when a key empties the line; the sentinel shows it did not update. */
    rl_end = -1;
    rl_callback_read_char();
    if (rl_end < 0) rl_end = rl_point = 0;
  }
  return 0;
}

#endif
