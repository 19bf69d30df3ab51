/* The transcript from agora_event views (see event_print.h). An event's fields are read back from its
 * JSON line, which is the one place the library turns a typed event into named fields. */
#include "cli/event_print.h"

#include "common/clock.h"
#include "common/jsonnum.h"
#include "common/term_text.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

cli_event_print cli_event_print_make(FILE *f, int json, int stream) {
  const char *nc = getenv("NO_COLOR");
  int tty = !json && isatty(fileno(f));
  return (cli_event_print){.f = f, .json = json, .stream = stream, .tty = tty, .color = tty && !(nc && nc[0])};
}

static void put_text(const cli_event_print *p, const char *s) {
  if (p->tty) ag_term_text_write(p->f, s, AG_TERM_INDENT);
  else fputs(s, p->f);
}

/* Events that would only be noise in a plain transcript (they are all in --json), and the thread's
 * bookkeeping that neither shows (docs/time.md); the same list as runtime/output.c's. */
static int shown(const cli_event_print *p, const char *kind) {
  static const char *const hidden[] = {"turn-queued", "turn-end"};
  static const char *const plain_hidden[] = {"llm-start",  "llm-done",         "state-saved", "context-shrunk",
                                             "summary",    "memory-retrieved", "reflection",  "memory-rated"};
  if (!strcmp(kind, "llm-chunk")) return p->stream;
  for (size_t i = 0; i < sizeof hidden / sizeof *hidden; i++)
    if (!strcmp(kind, hidden[i])) return 0;
  for (size_t i = 0; !p->json && i < sizeof plain_hidden / sizeof *plain_hidden; i++)
    if (!strcmp(kind, plain_hidden[i])) return 0;
  return 1;
}

/* "[#SEQ ][[YYYY-MM-DD HH:MM] ]SENDER: TEXT": the number with p->seqs, the time only on a virtual clock
 * (sim_time, NULL otherwise). */
static void print_message(const cli_event_print *p, double seq, const char *sim_time, const char *sender,
                          const char *text) {
  if (p->seqs && seq >= 1) fprintf(p->f, "#%.0f ", seq);
  if (sim_time && strlen(sim_time) >= 16) fprintf(p->f, "[%.10s %.5s] ", sim_time, sim_time + 11);
  put_text(p, sender ? sender : "");
  fputs(": ", p->f);
  put_text(p, text ? text : "");
  fputs("\n\n", p->f);
}

static const char *member(const cJSON *j, const char *name) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, name));
}

/* "-- kind: k=v k=v", strings unquoted, so a person can read it at a glance; turns-resumed is a
 * sentence, which a person should not miss. The JSON line's first four members are type, event,
 * world and chat; the event's own fields follow. */
static void print_event(const cli_event_print *p, const char *kind, const cJSON *j) {
  const char *dim = p->color ? "\033[2m" : "", *undim = p->color ? "\033[0m" : "";
  if (!strcmp(kind, "turns-resumed")) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(j, "replies");
    const char *who = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "agents"));
    int replies = cJSON_IsNumber(n) ? n->valueint : 0;
    fprintf(p->f, "%s-- resumed %d repl%s in flight at the crash (", dim, replies, replies == 1 ? "y" : "ies");
    put_text(p, who ? who : "");
    fprintf(p->f, ")%s\n\n", undim);
    return;
  }
  fprintf(p->f, "%s-- %s:", dim, kind);
  const cJSON *c = j->child;
  for (int skip = 0; c && skip < 4; skip++) c = c->next;
  for (; c; c = c->next) {
    if (cJSON_IsString(c)) {
      fprintf(p->f, " %s=", c->string);
      put_text(p, c->valuestring);
    } else {
      char *v = cJSON_PrintUnformatted(c);
      if (v) fprintf(p->f, " %s=%s", c->string, v);
      free(v);
    }
  }
  /* Chunks (--stream) come many per reply: one line each, no blank line between. */
  fprintf(p->f, "%s\n%s", undim, strcmp(kind, "llm-chunk") ? "\n" : "");
}

void cli_event_print_line(const cli_event_print *p, const cJSON *j) {
  char *line = ag_json_print_line(j);
  if (line) fprintf(p->f, "%s\n", line);
  free(line);
}

void cli_event_print_one(const cli_event_print *p, const agora_event *ev) {
  int type = agora_event_type(ev);
  const char *kind = agora_event_kind(ev);
  if (type == AGORA_EVENT_REQUEST || type == AGORA_EVENT_WITHDRAWN) return;
  if (type == AGORA_EVENT_WORLD && !shown(p, kind)) return;
  if (!p->json && type == AGORA_EVENT_MESSAGE) { /* the text as stored, not the line's UTF-8 repair of it */
    int64_t ms;
    char sim[AG_TIME_LEN];
    int virtual_time = agora_event_sim_time(ev, &ms);
    if (virtual_time) ag_time_format(ms, sim, sizeof sim);
    print_message(p, (double)agora_event_seq(ev), virtual_time ? sim : NULL, agora_event_sender(ev),
                  agora_event_text(ev));
  } else {
    const char *line = agora_event_json(ev);
    cJSON *j = p->json || !line ? NULL : cJSON_Parse(line); /* an event's fields: its JSON form */
    if (p->json && line) fprintf(p->f, "%s\n", line);
    else if (j) print_event(p, kind, j);
    cJSON_Delete(j);
  }
  if (!p->batch) fflush(p->f); /* the transcript is live: a reader of the pipe sees each line as it happens */
}

void cli_event_print_entry(const cli_event_print *p, const cJSON *j) {
  const char *type = member(j, "type"), *kind = member(j, "event");
  int message = type && !strcmp(type, "message");
  if (!message && (!kind || !shown(p, kind))) return;
  const cJSON *seq = cJSON_GetObjectItemCaseSensitive(j, "seq");
  if (p->json) cli_event_print_line(p, j);
  else if (message)
    print_message(p, cJSON_IsNumber(seq) ? seq->valuedouble : 0, member(j, "sim_time"), member(j, "sender"),
                  member(j, "text"));
  else print_event(p, kind, j);
  if (!p->batch) fflush(p->f);
}
