/* The console's terminal screen: transient live lines for the replies that stream, the input line
 * under them, and everything else printed above both. Piped, it is plain printing. */
#include "console/console_int.h"

#include "common/term_text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <wchar.h>

/* ---- text on the screen ---- */

int con_term_size(int want_rows) {
  struct winsize ws;
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0)
    return want_rows ? ws.ws_row : ws.ws_col;
  return want_rows ? 24 : 80;
}

/* Columns of the UTF-8 character at s (n bytes left); its length goes to *used. A byte that does not
 * start a valid character counts as one column, so the result is never short. */
static int char_cols(const char *s, size_t n, size_t *used) {
  mbstate_t st;
  memset(&st, 0, sizeof st);
  wchar_t wc;
  size_t k = mbrtowc(&wc, s, n, &st);
  if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
    *used = 1;
    return 1;
  }
  *used = k;
  int w = wcwidth(wc);
  return w < 0 ? 1 : w;
}

int con_text_cols(const char *s, size_t n) {
  int cols = 0;
  for (size_t i = 0, used; i < n; i += used) cols += char_cols(s + i, n - i, &used);
  return cols;
}

#ifdef AGORA_HAVE_LIBEDIT
/* Copies src into dst (cap bytes) cut to max_cols columns, ending with "…" when cut. */
static void text_fit(const char *src, int max_cols, char *dst, size_t cap) {
  size_t n = strlen(src), i = 0, used;
  int cols = 0;
  if (con_text_cols(src, n) <= max_cols) {
    snprintf(dst, cap, "%s", src);
    return;
  }
  while (i < n) {
    int w = char_cols(src + i, n - i, &used);
    if (cols + w > max_cols - 1) break;
    cols += w;
    i += used;
  }
  snprintf(dst, cap, "%.*s…", (int)i, src);
}

void con_prompt_update(console *c) {
  if (c->n_asks) {
    const console_ask *q = &c->asks[0];
    if (q->question) snprintf(c->prompt, sizeof c->prompt, "%s asks: %.300s > ", q->agent, q->question);
    else snprintf(c->prompt, sizeof c->prompt, "approve: %s wants to call %s %.200s [y/N] ", q->agent, q->tool, q->args);
    if (c->rl_on) rl_set_prompt(c->prompt);
    return;
  }
  char t[4 * TITLE_COLS + 4];
  text_fit(c->title, TITLE_COLS, t, sizeof t);
  for (char *p = t; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' '; /* a title never drives the terminal */
  char sim[40];
  con_clock_label(c, sim, sizeof sim);
  snprintf(c->prompt, sizeof c->prompt, "%s · %s%s> ", agora_world_id(c->w), t, sim);
  if (c->rl_on) rl_set_prompt(c->prompt);
}
#endif

/* Rows from the start of the prompt down to the cursor. libedit keeps rl_point and rl_line_buffer up
 * to date after each key (rl_end is fixed up by tty_on_stdin when it leaves them stale). */
static int input_cursor_row(const console *c) {
  int cols = con_text_cols(c->prompt, strlen(c->prompt));
#ifdef AGORA_HAVE_LIBEDIT
  if (rl_line_buffer && rl_point > 0 && rl_end > 0)
    cols += con_text_cols(rl_line_buffer, (size_t)(rl_point < rl_end ? rl_point : rl_end));
#endif
  return cols / con_term_size(0);
}

/* Erases the live lines and the input line; the cursor ends at the start of the first erased row. */
void con_screen_hide(console *c) {
  if (!c->tty) return;
  int up = c->live_shown;
  if (c->input == INPUT_PROMPT) up += input_cursor_row(c);
  else if (c->input == INPUT_ENTERED) up += c->entered_rows;
  if (up > 0) printf("\033[%dA", up);
  fputs("\r\033[J", stdout);
  fflush(stdout);
  c->live_shown = 0;
  c->input = INPUT_NONE;
}

/* One live line, cut to the terminal's width so it takes exactly one row: the agent, then the end of
 * what it has said so far. */
static void live_draw(const console *c, const live_stream *s, int cols) {
  int room = cols - 1 - con_text_cols(s->agent, strlen(s->agent)) - 2;
  const char *t = s->len ? s->tail : "…";
  int total = con_text_cols(t, strlen(t)), cut = 0;
  if (room < 4) room = 4;
  while (*t && total > (cut ? room - 1 : room)) {
    size_t used;
    total -= char_cols(t, strlen(t), &used);
    t += used;
    cut = 1;
  }
  printf("%s%s: %s%s%s\n", c->color ? "\033[2m" : "", s->agent, cut ? "…" : "", t, c->color ? "\033[0m" : "");
}

/* Draws the live lines, then the prompt with the line being typed (libedit redraws it). */
void con_screen_show(console *c) {
  if (!c->tty || c->busy || c->input != INPUT_NONE) return;
  int cols = con_term_size(0), max = con_term_size(1) - 2;
  for (size_t i = 0; i < c->n_live && c->live_shown < max; i++) {
    live_draw(c, &c->live[i], cols);
    c->live_shown++;
  }
#ifdef AGORA_HAVE_LIBEDIT
  if (c->rl_on) {
    con_prompt_update(c);
    rl_forced_update_display();
    c->input = INPUT_PROMPT;
  }
#endif
  fflush(stdout);
}

/* ---- printing: everything goes above the live lines and the input line ---- */

static void con_vprint(console *c, FILE *f, const char *fmt, va_list ap) {
  c->printed++;
  con_screen_hide(c);
  fflush(stdout); /* the erasing reaches the terminal before the text, if that goes to stderr */
  vfprintf(f, fmt, ap);
  fflush(f);
  con_screen_show(c);
}

void con_print(console *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  con_vprint(c, stdout, fmt, ap);
  va_end(ap);
}

void con_eprint(console *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  con_vprint(c, stderr, fmt, ap);
  va_end(ap);
}

/* A command's error: one line on stderr. */
void con_error(console *c, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  con_eprint(c, "error: %s\n", msg);
}

/* A note from the console itself, shaped like an event line ("-- text"). */
void con_note(console *c, const char *text) {
  con_print(c, "%s-- %s%s\n\n", c->color ? "\033[2m" : "", text, c->color ? "\033[0m" : "");
}

/* An event of the console's own, printed like the world's. j is borrowed. */
void con_event(console *c, const cJSON *j) {
  if (!j) return;
  con_screen_hide(c);
  c->pr.entry(c->pr.ctx, j, 0);
  con_screen_show(c);
}

void con_entries(console *c, const cJSON *list, int seqs) {
  const cJSON *e;
  con_screen_hide(c);
  cJSON_ArrayForEach(e, list) c->pr.entry(c->pr.ctx, e, seqs);
  con_screen_show(c);
}

/* ---- live lines ---- */

static live_stream *live_find(console *c, const char *agent) {
  for (size_t i = 0; i < c->n_live; i++)
    if (strcmp(c->live[i].agent, agent) == 0) return &c->live[i];
  return NULL;
}

/* The agent's live line, made when missing (NULL when LIVE_MAX agents already have one). */
static live_stream *live_get(console *c, const char *agent) {
  live_stream *s = live_find(c, agent);
  if (s || c->n_live == LIVE_MAX) return s;
  s = &c->live[c->n_live++];
  snprintf(s->agent, sizeof s->agent, "%s", agent);
  s->tail[0] = '\0';
  s->len = 0;
  return s;
}

static void live_remove(console *c, const char *agent) {
  live_stream *s = live_find(c, agent);
  if (!s) return;
  size_t i = (size_t)(s - c->live);
  memmove(&c->live[i], &c->live[i + 1], (c->n_live - i - 1) * sizeof *c->live);
  c->n_live--;
}

/* Drops the live lines of agents that stopped thinking without a word (their call was cancelled or the
 * agent removed). */
void con_live_prune(console *c) {
  for (size_t i = c->n_live; i-- > 0;)
    if (!agora_agent_thinking(c->w, c->live[i].agent)) live_remove(c, c->live[i].agent);
}

/* A streamed chunk's text, from the event's JSON line. */
static void live_chunk(live_stream *s, const agora_event *ev) {
  const char *line = agora_event_json(ev);
  cJSON *j = line ? cJSON_Parse(line) : NULL;
  const char *text = con_str(j, "text");
  if (text) ag_term_tail_append(s->tail, sizeof s->tail, &s->len, text);
  cJSON_Delete(j);
}

/* llm-start, llm-chunk and llm-done only change the live lines: returns 1 when ev was one of them. An
 * llm-error or agent-removed ends the agent's live line and is printed as usual (returns 0). */
static int live_event(console *c, const agora_event *ev, const char *kind) {
  const char *agent = agora_event_agent(ev);
  int start = !strcmp(kind, "llm-start"), chunk = !strcmp(kind, "llm-chunk"), done = !strcmp(kind, "llm-done");
  if (!start && !chunk && !done) {
    if (agent && (!strcmp(kind, "llm-error") || !strcmp(kind, "agent-removed"))) live_remove(c, agent);
    return 0;
  }
  if (!c->tty || !agent) return 1;
  con_screen_hide(c);
  if (done) {
    live_remove(c, agent);
  } else {
    live_stream *s = live_get(c, agent);
    if (s && start) s->len = 0, s->tail[0] = '\0';
    if (s && chunk) live_chunk(s, ev);
  }
  con_screen_show(c);
  return 1;
}

/* Whether an event may change the current chat's title: a title of its own, or another chat. */
static int retitles(const char *kind) {
  static const char *const kinds[] = {"title-updated", "new-chat-created", "chat-reused", "chat-loaded", "chat-deleted"};
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    if (!strcmp(kind, kinds[i])) return 1;
  return 0;
}

/* The transcript: every message and event the world hands the subscriber, printed as `run` prints them. */
void con_on_event(const agora_event *ev, void *ctx) {
  console *c = ctx;
  const char *kind = agora_event_kind(ev);
  int message = agora_event_type(ev) == AGORA_EVENT_MESSAGE;
  if (!message && live_event(c, ev, kind)) return;
  if (c->tty && !message && retitles(kind)) con_title_refresh(c);
  con_screen_hide(c);
  c->pr.event(c->pr.ctx, ev);
  if (message && agora_event_sender(ev)) live_remove(c, agora_event_sender(ev));
  con_screen_show(c);
  if (!strcmp(kind, "chat-deleted") && !agora_chat_current(c->w))
    con_note(c, "no current chat: messages are not saved until /new");
  if (!strcmp(kind, "chat-loaded")) con_chat_announce(c, kind, 0); /* the stream moved (--nats) */
}
