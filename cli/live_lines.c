/* The thinking agents and their live lines (see live_lines.h). */
#include "cli/live_lines.h"

#include "common/term_text.h"

#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define LIVE_NAMES 3    /* names shown on the status line before "+N" */
#define LIVE_SHOWN_MAX 8 /* live lines at most; the rest wait for their whole message */

static live_agent *find(live_lines *l, const char *id) {
  for (size_t i = 0; i < l->n; i++)
    if (!strcmp(l->agents[i].id, id)) return &l->agents[i];
  return NULL;
}

void live_lines_forget(live_lines *l, const char *id) {
  live_agent *a = find(l, id);
  if (!a) return;
  size_t i = (size_t)(a - l->agents);
  memmove(a, a + 1, (l->n - i - 1) * sizeof *a);
  l->n--;
}

void live_lines_start(live_lines *l, const char *id) {
  live_agent *a = find(l, id);
  if (!a && l->n < LIVE_AGENTS && strlen(id) < sizeof a->id) {
    a = &l->agents[l->n++];
    snprintf(a->id, sizeof a->id, "%s", id);
  }
  if (a) a->len = 0, a->tail[0] = '\0';
}

void live_lines_chunk(live_lines *l, const char *id, const char *text) {
  live_agent *a = find(l, id);
  if (a && text) ag_term_tail_append(a->tail, sizeof a->tail, &a->len, text);
}

void live_lines_message(live_lines *l, const char *sender) {
  live_agent *a = sender ? find(l, sender) : NULL;
  if (a) a->len = 0, a->tail[0] = '\0';
}

void live_lines_prune(live_lines *l, live_thinking_fn fn, const void *ctx) {
  for (size_t i = l->n; i-- > 0;)
    if (!fn(ctx, l->agents[i].id)) live_lines_forget(l, l->agents[i].id);
}

void live_lines_who(const live_lines *l, size_t thinking, char *who, size_t cap) {
  size_t len = 0, k = l->n < LIVE_NAMES ? l->n : LIVE_NAMES;
  who[0] = '\0';
  for (size_t i = 0; i < k && len < cap; i++)
    len += (size_t)snprintf(who + len, cap - len, "%s%s", i ? ", " : "", l->agents[i].id);
  if (thinking > k && k && len < cap) snprintf(who + len, cap - len, " +%zu", thinking - k);
}

static int term_cols(void) {
  struct winsize ws;
  return ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 8 ? ws.ws_col : 80;
}

void live_lines_hide(live_lines *l) {
  if (!l->shown) return;
  printf("\033[%zuA\r\033[J", l->shown);
  l->shown = 0;
}

/* One line per streaming agent: "id: …end of the text", cut to the width (a character outside ASCII
 * is counted as two columns, so a line never wraps and the count of lines stays right). */
void live_lines_show(live_lines *l) {
  int cols = term_cols();
  for (size_t i = 0; i < l->n && l->shown < LIVE_SHOWN_MAX; i++) {
    const live_agent *a = &l->agents[i];
    if (!a->len) continue;
    int room = cols - (int)strlen(a->id) - 5, used = 0;
    size_t start = a->len;
    while (start > 0) {
      size_t p = start - 1;
      while (p > 0 && ((unsigned char)a->tail[p] & 0xC0) == 0x80) p--;
      int w = (unsigned char)a->tail[p] < 0x80 ? 1 : 2;
      if (used + w > room) break;
      used += w;
      start = p;
    }
    printf("\033[2m%s: %s", a->id, start ? "…" : "");
    ag_term_text_put(stdout, a->tail + start); /* a stray byte shows as U+FFFD, never raw */
    fputs("\033[0m\n", stdout);
    l->shown++;
  }
  fflush(stdout);
}
