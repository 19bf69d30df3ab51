/* Approvals at the console: the questions of tool calls declared "approve": true wait in order for
 * the person's next lines while the loop goes on. */
#include "console/console_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- approvals: a question waits for the person's next line while the loop goes on ---- */

/* Shows the first question. At a terminal it becomes the prompt. Piped, it is printed when the
 * console is about to read the line that answers it (con_lines_run), after what the loop already had to
 * print, so that question and answer share one line. */
void con_ask_show(console *c) {
  if (!c->n_asks || c->ask_open) return;
  const console_ask *q = &c->asks[0];
  if (c->tty) {
    con_screen_hide(c);
    con_screen_show(c); /* the prompt is the question now */
    return;
  }
  for (int i = 0; i < 8; i++) agora_step(c->w); /* events already due */
  if (!c->n_asks) return; /* withdrawn meanwhile */
  q = &c->asks[0];
  if (q->question) printf("%s asks: %s > ", q->agent, q->question);
  else printf("approve: %s wants to call %s %s [y/N] ", q->agent, q->tool, q->args);
  fflush(stdout);
  c->ask_open = 1;
}

static void ask_pop(console *c, size_t i) {
  free(c->asks[i].agent);
  free(c->asks[i].tool);
  free(c->asks[i].args);
  free(c->asks[i].question);
  memmove(c->asks + i, c->asks + i + 1, (c->n_asks - i - 1) * sizeof *c->asks);
  c->n_asks--;
}

/* The approval event of the console's own: the answer, or why there will be none (a question's
 * answer shows in its tool-result event instead). */
static void ask_event(console *c, const console_ask *q, int yes, const char *ended) {
  if (q->question) return;
  cJSON *e = con_event_new(c, "approval");
  if (!e) return;
  cJSON_AddStringToObject(e, "agent", q->agent);
  cJSON_AddStringToObject(e, "tool", q->tool);
  cJSON_AddBoolToObject(e, "approved", yes);
  if (ended) cJSON_AddStringToObject(e, "ended", ended);
  con_event(c, e);
  cJSON_Delete(e);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* The world asks (an AGORA_EVENT_REQUEST): the question joins the queue; the first one shows. A piped
 * console stops waiting for quiet so that its next line can answer. */
void con_ask(console *c, const agora_event *ev) {
  agora_world *w = agora_event_world(ev);
  uint64_t id = agora_event_request(ev);
  const char *line = agora_event_json(ev);
  cJSON *j = line ? cJSON_Parse(line) : NULL;
  const cJSON *args = cJSON_GetObjectItem(j, "args");
  char *args_text = cJSON_IsString(args) ? strdup(args->valuestring) : args ? cJSON_PrintUnformatted(args) : strdup("{}");
  console_ask q = {.id = id, .agent = dup_or_null(con_str(j, "agent")), .tool = dup_or_null(con_str(j, "tool")),
                   .args = args_text, .question = dup_or_null(con_str(j, "question"))};
  int is_question = con_str(j, "question") != NULL;
  cJSON_Delete(j);
  if (!q.tool && !is_question) q.tool = strdup("");
  if (c->n_asks == c->cap_asks) {
    size_t ncap = c->cap_asks ? c->cap_asks * 2 : 4;
    console_ask *p = realloc(c->asks, ncap * sizeof *p);
    if (p) c->asks = p, c->cap_asks = ncap;
  }
  if (c->n_asks == c->cap_asks || !q.agent || !q.tool || !q.args || (is_question && !q.question)) {
    free(q.agent), free(q.tool), free(q.args), free(q.question);
    agora_answer(w, id, 0);
    return;
  }
  c->asks[c->n_asks] = q;
  if (++c->n_asks == 1 && c->tty) con_ask_show(c);
  if (!c->tty) agora_interrupt(w);
}

/* The person's line answers the first question: an approval is a no unless it is y/yes; ask_human's
 * answer is the line itself. */
void con_ask_answer(console *c, const char *line) {
  const char *a = line + strspn(line, " \t");
  int yes = (a[0] == 'y' || a[0] == 'Y') && (!a[1] || !strcasecmp(a, "yes") || a[1] == ' ' || a[1] == '\r');
  console_ask *q = &c->asks[0];
  if (c->tty) {
    con_screen_hide(c);
    printf("%s%s\n", c->prompt, line); /* the question and its answer stay in view */
  } else {
    printf("%s\n", q->question ? line : yes ? "y" : "n");
    c->ask_open = 0;
  }
  if (q->question) agora_reply(c->w, q->id, 1, line);
  else agora_answer(c->w, q->id, yes);
  ask_event(c, q, yes, NULL);
  ask_pop(c, 0);
  if (c->tty) con_ask_show(c);
}

/* The question will not be answered (AGORA_EVENT_WITHDRAWN): the turn was cancelled or it timed out,
 * and the tool call was denied. */
void con_withdrawn(console *c, const agora_event *ev) {
  uint64_t id = agora_event_request(ev);
  const char *line = agora_event_json(ev);
  cJSON *j = line ? cJSON_Parse(line) : NULL;
  int timed_out = cJSON_IsTrue(cJSON_GetObjectItem(j, "timed_out"));
  cJSON_Delete(j);
  size_t i = 0;
  while (i < c->n_asks && c->asks[i].id != id) i++;
  if (i == c->n_asks) return;
  if (i == 0 && c->ask_open) {
    printf("\n");
    c->ask_open = 0;
  }
  ask_event(c, &c->asks[i], 0, timed_out ? "timed out" : "cancelled");
  ask_pop(c, i);
  if (i == 0 && c->tty) con_ask_show(c);
}

void con_ask_clear(console *c) {
  while (c->n_asks) ask_pop(c, 0);
  free(c->asks);
  c->asks = NULL;
  c->cap_asks = 0;
}
